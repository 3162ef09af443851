/**
 * A task's identity as the runner speaks it: its key `suite/id` (filters, shards, duplicate
 * checks), the one order of tasks in every output, and a task left out of a run. A trial's
 * identity builds on it (trials/trial-key.ts).
 */

/** `suite/id`: the key filters, shards and duplicate checks work on. */
export function taskKey(task: { suite: string; id: string }): string {
  return `${task.suite}/${task.id}`;
}

/** The one order of tasks in every output: by suite, then id (code-unit order, locale-free). */
export function compareTasks(a: { suite: string; id: string }, b: { suite: string; id: string }): number {
  return compareText(a.suite, b.suite) || compareText(a.id, b.id);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A task left out of the run by `--filter` or `--tag` (tasks of other shards are not). */
export interface SkippedTask {
  suite: string;
  id: string;
  file: string;
  reason: "filter" | "tag";
}
