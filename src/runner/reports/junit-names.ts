/**
 * What a task's testcase and suite properties are called in junit.xml: `id` and `task.<id>` as
 * before the matrix (so dashboards' history holds), `id [variant]` and `task.<id>@<variant>` for a
 * matrix cell's. Every JUnit writer (junit-report, junit-trials, junit-quarantine) names through here.
 */
import type { TaskTrials } from "./task-trials.js";

/**
 * A task's testcase name: its id, or `id [variant]` for a matrix cell's (one testcase per (task,
 * variant)); without a matrix exactly as before, so dashboards' history holds.
 */
export function caseName(task: Pick<TaskTrials, "id" | "variant">): string {
  return task.variant === null ? task.id : `${task.id} [${task.variant}]`;
}

/** The prefix of a task's suite properties: `task.<id>`, or `task.<id>@<variant>` for a matrix cell's. */
export function taskPropertyPrefix(task: Pick<TaskTrials, "id" | "variant">): string {
  return task.variant === null ? `task.${task.id}` : `task.${task.id}@${task.variant}`;
}

