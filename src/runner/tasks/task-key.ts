/**
 * A task's identity as the runner speaks it: its key `suite/id` (filters, shards, duplicate
 * checks), `suite/id@variant` for a task as a matrix cell runs it (a unit of its own: planned,
 * sharded, resumed and reported apart), the one order of tasks in every output, and a task left
 * out of a run. A trial's identity builds on it (trials/trial-key.ts).
 */

/** What names a task, or a task as a matrix cell runs it (`variant`: the cell's id; null or absent: none). */
export interface TaskName {
  suite: string;
  id: string;
  variant?: string | null | undefined;
}

/** `suite/id`, or `suite/id@variant` for a matrix cell's task: the key plans, shards and the manifest work on. */
export function taskKey(task: TaskName): string {
  const base = `${task.suite}/${task.id}`;
  return task.variant == null ? base : `${base}@${task.variant}`;
}

/** `suite/id` whatever the variant: the task file's task (filters, duplicate ids, whether the suite still defines it). */
export function baseTaskKey(task: { suite: string; id: string }): string {
  return `${task.suite}/${task.id}`;
}

/** The one order of tasks in every output: by suite, then id (code-unit order, locale-free), then variant (none first). */
export function compareTasks(a: TaskName, b: TaskName): number {
  return compareText(a.suite, b.suite) || compareText(a.id, b.id) || compareVariant(a.variant ?? null, b.variant ?? null);
}

/** The one order of variants (cells): none first, then by name (code units). */
export function compareVariant(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return compareText(a, b);
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
