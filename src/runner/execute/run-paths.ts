/**
 * A run's outputs kept apart from its inputs, checked before anything is written: the run
 * directory (`--out`) is not inside a task's fixture (each copy would hold the run directory,
 * itself holding copies…), no fixture entry grows past PATH_MAX where it is copied, and no
 * report copy (`--junit`, `--stats`, `--summary`) is — by real path, links resolved — a file
 * the run reads (a task file, a policy, the pricing file, an image) or inside a fixture; a
 * folder it writes (`--cassette`) is neither inside a fixture nor inside the trials' folders. Each
 * problem is a `usage` error (exit 2) naming the path.
 */
import { join } from "node:path";
import { RhemaError } from "../../core/errors.js";
import { canonicalPath, isWithinOrSame } from "../tasks/canonical-path.js";
import { scanFixture } from "../tasks/fixture-check.js";
import { TASKS_DIR } from "../run-dir/task-folder.js";
import type { TaskDefinition } from "../tasks/task-file.js";

export interface RunPaths {
  /** The run directory, absolute. */
  runDir: string;
  tasks: readonly TaskDefinition[];
  /** Report copies by the flag that named them (`--junit`: path), absolute. */
  outputs: ReadonlyMap<string, string>;
  /** Files the run reads beyond the tasks' own (`--policy`, `--pricing`), absolute. */
  inputs: readonly string[];
  /** Folders the run writes into beyond the run directory (`--cassette`), by flag, absolute. */
  folders?: ReadonlyMap<string, string>;
}

export async function checkRunPaths(paths: RunPaths): Promise<void> {
  const runDir = await canonicalPath(paths.runDir);
  const fixtures = new Map<string, TaskDefinition[]>();
  for (const task of paths.tasks) {
    if (task.workspace.from !== null) fixtures.set(task.workspace.from, [...(fixtures.get(task.workspace.from) ?? []), task]);
  }
  const fixtureRoots: string[] = [];
  for (const [from, users] of fixtures) {
    const root = await canonicalPath(from);
    fixtureRoots.push(root);
    if (isWithinOrSame(root, runDir)) {
      throw new RhemaError("usage", `${users[0]!.file}: workspace.from ${from} holds the run directory ${paths.runDir} (--out): each task's copy of it would hold the run directory; pass an --out outside the fixture`);
    }
    // The longest place it is copied to: the fixture's entries must fit below PATH_MAX there.
    const destination = users.map((t) => join(runDir, TASKS_DIR, t.suite, t.id, t.variant ?? "default", "1000", "workspace")).sort((a, b) => b.length - a.length)[0]!;
    const problem = await scanFixture(from, { destination, forbidden: [runDir] });
    if (problem !== null) throw new RhemaError("usage", `${users[0]!.file}: workspace.from: ${problem.path} ${problem.message}`);
  }
  const read = new Set<string>();
  for (const task of paths.tasks) {
    for (const file of [task.file, ...task.images, ...(task.policy?.kind === "file" ? [task.policy.path] : [])]) read.add(await canonicalPath(file));
  }
  for (const file of paths.inputs) read.add(await canonicalPath(file));
  for (const [flag, output] of paths.outputs) {
    const real = await canonicalPath(output);
    if (read.has(real)) throw new RhemaError("usage", `${flag} ${output} is${real === output ? "" : ` (by its real path ${real})`} a file this run reads: choose another report path`);
    const fixture = fixtureRoots.find((root) => isWithinOrSame(root, real));
    if (fixture !== undefined) throw new RhemaError("usage", `${flag} ${output} is inside the fixture ${fixture} tasks copy their workspace from: choose a report path outside it`);
  }
  const trials = join(runDir, TASKS_DIR);
  for (const [flag, folder] of paths.folders ?? []) {
    const real = await canonicalPath(folder);
    // What it writes would be in the next task's copy (and change a shared setup's key).
    const fixture = fixtureRoots.find((root) => isWithinOrSame(root, real));
    if (fixture !== undefined) throw new RhemaError("usage", `${flag} ${folder} is inside the fixture ${fixture} tasks copy their workspace from: choose a folder outside it`);
    // `--restart` removes the trials' folders: what is kept there would go with them.
    if (isWithinOrSame(trials, real)) throw new RhemaError("usage", `${flag} ${folder} is inside the run directory's trials (--out ${paths.runDir}), which --restart removes: choose a folder outside ${trials}`);
  }
}
