/**
 * The architecture, enforced on the real import graph (docs/design.md §2): imports flow one way by the
 * layer table, there are no cycles, every file sits in a layer, core does no I/O, and below the
 * edges (cli, action) nothing reads the environment, arguments or working folder, prints, exits
 * or installs process handlers. Inside `runner/` and `policy/` imports flow one way by the room
 * table (their sub-folders), and every file sits in a room. Fixture trees show the checker
 * catches each kind of break.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type KnownImport, type Violation, checkArchitecture, describeViolation } from "./support/check-architecture.js";
import { ROOMS, type RoomTable, roomTableProblems } from "./support/rooms.js";
import { repoRoot } from "./support/paths.js";
import { tempDir } from "./support/temp-dir.js";

async function writeTree(root: string, files: Record<string, string[]>): Promise<void> {
  await writeFile(join(root, "package.json"), '{ "type": "module" }\n');
  for (const [rel, lines] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), lines.join("\n") + "\n");
  }
}

/**
 * The runner's wrong-way room imports today, each tolerated by name until it is moved: the list
 * must match the tree exactly (a new wrong-way import fails, and so does an entry the tree no
 * longer has). Moved by the lead in issue 21 slice a: then this list is empty.
 */
const KNOWN_ROOM_IMPORTS: readonly KnownImport[] = [];

test("the source tree keeps the architecture of docs/design.md §2, its layers and its rooms", (t) => {
  for (const k of KNOWN_ROOM_IMPORTS) t.diagnostic(`known wrong-way room import (to move): ${k.file} → ${k.target}`);
  assert.deepEqual(checkArchitecture(join(repoRoot, "src"), { knownRoomImports: KNOWN_ROOM_IMPORTS }).map(describeViolation), []);
});

test("the room table runs one way: no room may import another round a loop", () => {
  assert.deepEqual(roomTableProblems(ROOMS), []);
  const looped: RoomTable = { runner: { tasks: ["run-dir"], "run-dir": ["execute"], execute: ["tasks", "reports"] } };
  assert.deepEqual(roomTableProblems(looped), [
    "runner/execute may import runner/reports, which is no room of runner",
    "runner: tasks → run-dir → execute → tasks may import each other round a loop",
  ]);
});

/** The layer fixtures keep files at a layer's top: the room fixtures below judge rooms. */
const NO_ROOMS = { rooms: {} };

/** A small tree in which every layer imports only what it may, edges included. */
const CLEAN: Record<string, string[]> = {
  "src/core/port.ts": ["export interface Port { name: string }", "export const stamp = (now: () => Date): string => now().toISOString();"],
  "src/process/group.ts": ['import { spawn } from "node:child_process";', 'import type { Port } from "../core/port.js";', "export const start = (p: Port) => spawn(p.name, { detached: true });", "export const stop = (pid: number): void => void process.kill(-pid);"],
  "src/cache/rules.ts": ["export const ttlMs = 300_000;"],
  "src/tools/shell.ts": ['import { start } from "../process/group.js";', 'export const shell = (env: Record<string, string>) => ({ env, start, at: process.platform });'],
  "src/store/file.ts": ['import { readFile } from "node:fs/promises";', "export const load = (path: string) => readFile(path, \"utf8\");"],
  "src/agent.ts": ['import { shell } from "./tools/shell.js";', 'import { load } from "./store/file.js";', 'export type Stamp = typeof import("./core/port.js").stamp;', "export const agent = { shell, load };"],
  "src/providers/lazy.ts": ['import { ttlMs } from "../cache/rules.js";', "export const provider = { ttlMs };"],
  "src/runner/run.ts": [
    'import { createRequire } from "node:module";',
    'import { agent } from "../agent.js";',
    "const load = createRequire(import.meta.url);",
    'export const rules = load("../cache/rules.js") as unknown;',
    'export const provider = () => import("../providers/lazy.js");',
    "export const run = (env: Record<string, string>) => agent.shell(env);",
  ],
  "src/index.ts": ['export { agent } from "./agent.js";', 'export { run } from "./runner/run.js";'],
  "src/cli/main.ts": ['import { run } from "../index.js";', "run({ HOME: process.env.HOME ?? \"\" });", "process.stdout.write(process.argv.join(\" \") + process.cwd());", "console.log(\"done\");", "process.exit(0);"],
  "src/action/main.ts": ['import { run } from "../runner/run.js";', 'process.on("SIGTERM", () => run({}));'],
};

test("a sound tree gives no violations", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, CLEAN);
  assert.deepEqual(checkArchitecture(join(root, "src"), NO_ROOMS), []);
});

/** One break of each kind, each on a known line. */
const BROKEN: Record<string, string[]> = {
  "outside.ts": ["export const outside = 1;"],
  "src/core/types.ts": ["export interface Port { name: string }"],
  "src/core/io.ts": [
    'import { readFileSync } from "node:fs";',
    'import type { Stats } from "fs";',
    "export const read = (p: string): string => readFileSync(p, \"utf8\");",
    'export const later = () => import("node:child_process");',
    "export type S = Stats;",
  ],
  "src/runner/run.ts": ['import type { Port } from "../core/types.js";', "export const run = (): number => ({ name: \"x\" } as Port).name.length;"],
  "src/runner/loose.ts": [
    "export const byName = (name: string) => import(name);",
    'export { gone } from "./missing.js";',
    'import { outside } from "../../outside.js";',
    "export const o = outside;",
  ],
  "src/providers/thing.ts": ["export interface Thing { id: string }"],
  "src/policy/rules.ts": ["export const rules: string[] = [];"],
  "src/store/state.ts": ["export const state = 1;"],
  "src/transcript/mirror.ts": ["export const mirror = 1;"],
  "src/tools/static.ts": ['import { run } from "../runner/run.js";', "export const s = run;"],
  "src/tools/type-only.ts": ['import type { Port } from "../core/types.js";', 'import type { Thing } from "../providers/thing.js";', "export type T = Port | Thing;"],
  "src/tools/dynamic.ts": ['export const load = () => import("../policy/rules.js");'],
  "src/tools/required.ts": [
    'import { createRequire as makeRequire } from "node:module";',
    "const load = makeRequire(import.meta.url);",
    'export const direct = makeRequire(import.meta.url)("../store/state.js") as unknown;',
    'export const viaAlias = load("../transcript/mirror.js") as unknown;',
  ],
  "src/cache/one.ts": ['import { two } from "./two.js";', "export const one = (): unknown => two;"],
  "src/cache/two.ts": ['import { one } from "./one.js";', "export const two = (): unknown => one;"],
  "src/helpers/misc.ts": ["export const misc = 1;"],
  "src/cli/main.ts": ['import { run } from "../runner/run.js";', "console.log(process.env.HOME, process.argv, process.cwd());", "process.exit(run());"],
  "src/index.ts": ['export { run } from "./runner/run.js";', 'export * from "./cli/main.js";'],
  "src/store/env-reads.ts": [
    "export const home = process.env.HOME;",
    'export const viaIndex = process["env"];',
    "const { env } = process;",
    "export const fromPattern = env;",
    "const p = process;",
    "export const args = p.argv;",
    "export const global = globalThis.process.env;",
    "const { ...everything } = process;",
    'export const pick = (key: "pid" | "env") => [process[key], everything];',
  ],
  "src/store/env-imports.ts": [
    'import process from "node:process";',
    'import { env as environment } from "node:process";',
    "export const here = process.cwd();",
    'import * as proc from "process";',
    "export const all = [environment, proc.argv];",
  ],
  "src/store/printing.ts": [
    "export function say(text: string): void {",
    "  process.stdout.write(text);",
    "  process.stderr.write(text);",
    "  console.log(text);",
    "}",
    "export function leave(): never { return process.exit(1); }",
    "export function handlers(): void {",
    '  process.on("exit", () => {});',
    '  process.once("SIGINT", () => {});',
    '  process.addListener("SIGTERM", () => {});',
    "}",
  ],
  "src/store/allowed.ts": [
    'import type { ChildProcess } from "node:child_process";',
    "// process.env.SECRET and process.exit() in a comment do not count",
    "/* process.argv */",
    'export const text = "process.env.HOME and process.cwd()";',
    "export const template = `process.stdout ${1}`;",
    "export const facts = [process.pid, process.platform, process.execPath, process.hrtime.bigint(), process.memoryUsage().rss, process.versions.node];",
    'export function stop(pid: number): void { process.kill(pid, "SIGTERM"); }',
    'export function notTheGlobal(process: { env: string; argv: string[] }): string { return process.env + process.argv.join(""); }',
    'export function child(c: ChildProcess): void { c.stdout?.on("data", () => {}); c.on("exit", () => {}); }',
  ],
};

const EXPECTED: Violation[] = [
  { rule: "cycle", files: ["cache/one.ts", "cache/two.ts"] },
  { rule: "core-io", file: "core/io.ts", line: 1, kind: "static", specifier: "node:fs" },
  { rule: "core-io", file: "core/io.ts", line: 2, kind: "type", specifier: "fs" },
  { rule: "core-io", file: "core/io.ts", line: 4, kind: "dynamic", specifier: "node:child_process" },
  { rule: "unknown-layer", file: "helpers/misc.ts" },
  { rule: "layer", file: "index.ts", line: 2, kind: "static", target: "cli/main.ts", from: "index", to: "cli" },
  { rule: "computed-import", file: "runner/loose.ts", line: 1, kind: "dynamic" },
  { rule: "unresolved-import", file: "runner/loose.ts", line: 2, kind: "static", specifier: "./missing.js" },
  { rule: "outside-source", file: "runner/loose.ts", line: 3, kind: "static", specifier: "../../outside.js" },
  { rule: "ambient", file: "store/env-imports.ts", line: 2, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-imports.ts", line: 3, object: "process", member: "cwd" },
  { rule: "ambient", file: "store/env-imports.ts", line: 5, object: "process", member: "argv" },
  { rule: "ambient", file: "store/env-reads.ts", line: 1, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 2, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 3, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 6, object: "process", member: "argv" },
  { rule: "ambient", file: "store/env-reads.ts", line: 7, object: "process", member: "env" },
  { rule: "ambient", file: "store/env-reads.ts", line: 8, object: "process", member: "...rest" },
  { rule: "ambient", file: "store/env-reads.ts", line: 9, object: "process", member: "[computed]" },
  { rule: "ambient", file: "store/printing.ts", line: 2, object: "process", member: "stdout" },
  { rule: "ambient", file: "store/printing.ts", line: 3, object: "process", member: "stderr" },
  { rule: "ambient", file: "store/printing.ts", line: 4, object: "console", member: "log" },
  { rule: "ambient", file: "store/printing.ts", line: 6, object: "process", member: "exit" },
  { rule: "ambient", file: "store/printing.ts", line: 8, object: "process", member: "on" },
  { rule: "ambient", file: "store/printing.ts", line: 9, object: "process", member: "once" },
  { rule: "ambient", file: "store/printing.ts", line: 10, object: "process", member: "addListener" },
  { rule: "layer", file: "tools/dynamic.ts", line: 1, kind: "dynamic", target: "policy/rules.ts", from: "tools", to: "policy" },
  { rule: "layer", file: "tools/required.ts", line: 3, kind: "require", target: "store/state.ts", from: "tools", to: "store" },
  { rule: "layer", file: "tools/required.ts", line: 4, kind: "require", target: "transcript/mirror.ts", from: "tools", to: "transcript" },
  { rule: "layer", file: "tools/static.ts", line: 1, kind: "static", target: "runner/run.ts", from: "tools", to: "runner" },
  { rule: "layer", file: "tools/type-only.ts", line: 2, kind: "type", target: "providers/thing.ts", from: "tools", to: "providers" },
];

test("a broken tree: each bad import, the cycle, core I/O and each edge-only process use is reported", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, BROKEN);
  const found = checkArchitecture(join(root, "src"), NO_ROOMS);
  assert.deepEqual(found, EXPECTED, found.map(describeViolation).join("\n"));
});

test("each violation reads as one line naming the file, line and rule", () => {
  assert.deepEqual(EXPECTED.slice(0, 2).concat(EXPECTED.at(-1)!).map(describeViolation), [
    "import cycle: cache/one.ts → cache/two.ts → cache/one.ts",
    'core/io.ts:1 (core) imports "node:fs": core does no file, process or network I/O',
    "tools/type-only.ts:2 (tools) has a type import of providers/thing.ts (providers): tools may not import providers",
  ]);
});

/** A tree in which every room of runner/ and policy/ imports only what the real room table allows. */
const CLEAN_ROOMS: Record<string, string[]> = {
  "src/runner/tasks/task.ts": ["export const task = \"t\";"],
  "src/runner/trials/key.ts": ['import { task } from "../tasks/task.js";', "export const key = (id: string): string => id + task;"],
  "src/runner/run-dir/folder.ts": ['import { task } from "../tasks/task.js";', 'import type { key } from "../trials/key.js";', "export const folder = (k: typeof key) => k(task);"],
  "src/runner/reports/report.ts": ['import { folder } from "../run-dir/folder.js";', "export const report = folder;"],
  "src/runner/execute/suite.ts": ['import { report } from "../reports/report.js";', 'import { task } from "../tasks/task.js";', 'export const suite = () => [report, task, import("../../policy/index.js")];'],
  "src/policy/shell/grammar/words.ts": ["export interface Word { value: string }"],
  "src/policy/match/pattern.ts": ['import type { Word } from "../shell/grammar/words.js";', "export const matches = (w: Word): boolean => w.value === \"x\";"],
  "src/policy/shell/commands/table.ts": ['import type { Word } from "../grammar/words.js";', "export const programs: Word[] = [];"],
  "src/policy/shell/analysis.ts": ['import { programs } from "./commands/table.js";', 'import { matches } from "../match/pattern.js";', "export const analyse = () => programs.filter(matches);"],
  "src/policy/file/model.ts": ['import { matches } from "../match/pattern.js";', "export const model = { matches };"],
  "src/policy/decide/decide.ts": ['import { model } from "../file/model.js";', 'import { analyse } from "../shell/analysis.js";', "export const decide = () => [model, analyse()];"],
  "src/policy/index.ts": ['export { decide } from "./decide/decide.js";', 'export type { Word } from "./shell/grammar/words.js";'],
};

test("a tree whose rooms import one way gives no violations", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, CLEAN_ROOMS);
  assert.deepEqual(checkArchitecture(join(root, "src")), []);
});

/** Rooms that import the wrong way, round loops, files in no room, and a known list with a real entry and two stale ones. */
const BROKEN_ROOMS: Record<string, string[]> = {
  "src/runner/trials/key.ts": ["export type Key = string;"],
  "src/runner/trials/gate.ts": ['import type { Task } from "../tasks/task.js";', "export const gate = (t: Task): boolean => t.id !== \"\";"],
  "src/runner/tasks/task.ts": ['import type { Key } from "../trials/key.js";', "export interface Task { id: Key }", "export const task: Task = { id: \"t\" };"],
  "src/runner/run-dir/state.ts": ["export const state = 1;"],
  "src/runner/run-dir/folder.ts": ['export const later = () => import("../execute/suite.js");'],
  "src/runner/reports/lines.ts": ['import type { Event } from "../execute/events.js";', "export const line = (e: Event): string => e.kind;"],
  "src/runner/execute/events.ts": ["export interface Event { kind: string }"],
  "src/runner/execute/suite.ts": ['import { state } from "../run-dir/state.js";', 'import { line } from "../reports/lines.js";', "export const suite = [state, line];"],
  "src/runner/loose.ts": ["export const loose = 1;"],
  "src/runner/helpers/misc.ts": ["export const misc = 1;"],
  "src/policy/match/glob.ts": ["export const glob = (p: string): boolean => p === \"*\";"],
  "src/policy/shell/analysis.ts": ["export const analyse = (): string[] => [];"],
  "src/policy/shell/paths.ts": ['import { rule } from "../file/model.js";', "export const paths = rule;"],
  "src/policy/shell/grammar/walk.ts": ['import { analyse } from "../analysis.js";', "export const walk = analyse;"],
  "src/policy/file/model.ts": ['import { glob } from "../match/glob.js";', "export const rule = glob;"],
  "src/policy/file/schema.ts": ['import { analyse } from "../shell/analysis.js";', "export const schema = analyse;"],
};

const BROKEN_KNOWN: readonly KnownImport[] = [
  { file: "runner/reports/lines.ts", target: "runner/execute/events.ts" },
  { file: "runner/tasks/task.ts", target: "runner/run-dir/state.ts" },
  { file: "runner/execute/suite.ts", target: "runner/reports/lines.ts" },
];

const EXPECTED_ROOMS: Violation[] = [
  { rule: "room-cycle", layer: "policy", rooms: ["file", "shell"] },
  { rule: "room", file: "policy/file/schema.ts", line: 1, kind: "static", target: "policy/shell/analysis.ts", layer: "policy", from: "file", to: "shell" },
  { rule: "room", file: "policy/shell/grammar/walk.ts", line: 1, kind: "static", target: "policy/shell/analysis.ts", layer: "policy", from: "shell/grammar", to: "shell" },
  { rule: "room", file: "policy/shell/paths.ts", line: 1, kind: "static", target: "policy/file/model.ts", layer: "policy", from: "shell", to: "file" },
  { rule: "room-cycle", layer: "runner", rooms: ["execute", "run-dir"] },
  { rule: "stale-known-import", file: "runner/execute/suite.ts", target: "runner/reports/lines.ts" },
  { rule: "unknown-room", file: "runner/helpers/misc.ts", layer: "runner" },
  { rule: "unknown-room", file: "runner/loose.ts", layer: "runner" },
  { rule: "room", file: "runner/run-dir/folder.ts", line: 1, kind: "dynamic", target: "runner/execute/suite.ts", layer: "runner", from: "run-dir", to: "execute" },
  { rule: "room-cycle", layer: "runner", rooms: ["tasks", "trials"] },
  { rule: "stale-known-import", file: "runner/tasks/task.ts", target: "runner/run-dir/state.ts" },
  { rule: "room", file: "runner/tasks/task.ts", line: 1, kind: "type", target: "runner/trials/key.ts", layer: "runner", from: "tasks", to: "trials" },
];

test("a tree with broken rooms: each wrong-way import, each room loop, each file in no room and each stale known import is reported", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, BROKEN_ROOMS);
  const found = checkArchitecture(join(root, "src"), { knownRoomImports: BROKEN_KNOWN });
  assert.deepEqual(found, EXPECTED_ROOMS, found.map(describeViolation).join("\n"));
});

test("rooms that import each other round a loop are reported even where a table allows both ways", async (t) => {
  const root = await tempDir(t);
  await writeTree(root, {
    "src/runner/a/one.ts": ['import { two } from "../b/two.js";', "export const one = two;"],
    "src/runner/b/two.ts": ["export const two = 2;"],
    "src/runner/b/three.ts": ['import { one } from "../a/one.js";', "export const three = one;"],
  });
  const found = checkArchitecture(join(root, "src"), { rooms: { runner: { a: ["b"], b: ["a"] } } });
  assert.deepEqual(found, [{ rule: "room-cycle", layer: "runner", rooms: ["a", "b"] }]);
});

test("each room violation reads as one line naming the file, the rooms and what to do", () => {
  const pick = (rule: Violation["rule"]): Violation => EXPECTED_ROOMS.find((v) => v.rule === rule)!;
  assert.deepEqual(["room", "room-cycle", "unknown-room", "stale-known-import"].map((r) => describeViolation(pick(r as Violation["rule"]))), [
    "policy/file/schema.ts:1 (policy/file) has a static import of policy/shell/analysis.ts (policy/shell): policy/file may not import policy/shell",
    "room cycle in policy/: file → shell → file",
    'runner/helpers/misc.ts sits in no room of runner/ (docs/design.md §2, "Rooms")',
    "runner/execute/suite.ts → runner/reports/lines.ts is no wrong-way import of the tree (any more): remove it from the known wrong-way imports",
  ]);
});
