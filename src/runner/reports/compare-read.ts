/**
 * The run directories `rhema report compare` reads, read as `report merge` reads its inputs
 * (`readShardRun`: both layouts, merged or not, every file validated), and refused with exit 2
 * when they cannot be compared: a path that is not a run directory, one directory given twice
 * (by any path: compared by real path), a directory holding no trial result.
 */
import { RhemaError } from "../../core/errors.js";
import type { TaskResult } from "../run-dir/task-result.js";
import { checkDistinctDirs } from "./input-dirs.js";
import { readShardRun } from "./report-merge.js";

/** The results of each directory of `dirs` (absolute), in their order. */
export async function readCompareRuns(dirs: readonly string[]): Promise<TaskResult[][]> {
  const runs: TaskResult[][] = [];
  for (const dir of dirs) {
    const run = await readShardRun(dir);
    if (run.results.length === 0) {
      throw new RhemaError("usage", `The run directory ${dir} holds no trial result (no tasks/…/result.json): nothing to compare. Pass a run directory a run has finished trials in`);
    }
    runs.push(run.results);
  }
  await checkDistinctDirs(dirs, "compare two runs, or one run's cells with --cells");
  return runs;
}
