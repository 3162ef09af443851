/**
 * The rooms of rhema's larger layers (docs/design.md §2, "Rooms"): the sub-folders of `runner/`
 * and `policy/`, and which room may import which besides itself — one way, like the layers, so
 * two rooms never point at each other. A room is a folder under its layer (`tasks`,
 * `shell/grammar`: the most specific folder holding the file wins) or one file at the layer's
 * top (`index.ts`). The architecture checker judges every import inside these layers by this
 * table; `roomTableProblems` keeps the table itself one way.
 */

/** For each layer with rooms: each room and the rooms it may import besides itself. */
export type RoomTable = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

export const ROOMS: RoomTable = {
  runner: {
    /** Task files: schema, loading, the task's policy and sandbox. */
    tasks: [],
    /** A trial of a task, trial keys, the trial figures and the gate. */
    trials: ["tasks"],
    /** The run directory's files: manifest, lock, task folders, states, results. */
    "run-dir": ["trials", "tasks"],
    /** Prices: the price table, the pricing file, what a task is priced as, cost figures, budgets. */
    pricing: ["trials", "tasks", "run-dir"],
    /** junit.xml, stats.json, summary.md and `report merge`, from the run directory's results. */
    reports: ["trials", "tasks", "run-dir", "pricing"],
    /** The planner: each selected task resolved once into its plan (provider, worker, pricing, approval, sandbox, environment). */
    plan: ["trials", "tasks", "run-dir", "pricing"],
    /** Running a suite: the request, each trial's workspace, turn and checks. */
    execute: ["trials", "tasks", "run-dir", "pricing", "reports", "plan"],
  },
  policy: {
    /** The bash grammar: the parser, its repairs, words as the policy sees them. */
    "shell/grammar": [],
    /** Path globs, their overlap, shell command patterns: compiled and matched. */
    match: ["shell/grammar"],
    /** The analysis of a command line: the walk, commands, paths, working folders. */
    shell: ["shell/grammar", "match"],
    /** The policy file: schema, model, loading, presets, warnings. */
    file: ["match"],
    /** Pure decisions and `PolicyApproval`. */
    decide: ["shell/grammar", "match", "shell", "file"],
    /** The policy's exports. */
    "index.ts": ["shell/grammar", "match", "shell", "file", "decide"],
  },
};

/**
 * The room of a source file (relative to the source folder, `/`-separated): `undefined` when
 * its layer has no rooms, `null` when it has rooms but the file sits in none of them.
 */
export function roomOf(table: RoomTable, file: string): string | null | undefined {
  const slash = file.indexOf("/");
  if (slash < 0) return undefined;
  const rooms = table[file.slice(0, slash)];
  if (rooms === undefined) return undefined;
  const inner = file.slice(slash + 1);
  let found: string | null = null;
  for (const room of Object.keys(rooms)) {
    const holds = room.endsWith(".ts") ? inner === room : inner.startsWith(`${room}/`);
    if (holds && (found === null || room.length > found.length)) found = room;
  }
  return found;
}

export function mayImportRoom(table: RoomTable, layer: string, from: string, to: string): boolean {
  return from === to || (table[layer]?.[from]?.includes(to) ?? false);
}

/**
 * What is wrong with a room table itself, one line each: a row naming a room the layer does not
 * have, and rooms that may import each other round a loop (`a → b → a`). `[]` for a sound table.
 */
export function roomTableProblems(table: RoomTable): string[] {
  const problems: string[] = [];
  for (const [layer, rooms] of Object.entries(table)) {
    for (const [room, may] of Object.entries(rooms)) {
      for (const to of may) if (!(to in rooms)) problems.push(`${layer}/${room} may import ${layer}/${to}, which is no room of ${layer}`);
    }
    const done = new Set<string>();
    const path: string[] = [];
    const visit = (room: string): void => {
      const at = path.indexOf(room);
      if (at >= 0) {
        problems.push(`${layer}: ${[...path.slice(at), room].join(" → ")} may import each other round a loop`);
        return;
      }
      if (done.has(room)) return;
      path.push(room);
      for (const to of rooms[room] ?? []) if (to !== room) visit(to);
      path.pop();
      done.add(room);
    };
    for (const room of Object.keys(rooms)) visit(room);
  }
  return problems;
}
