/**
 * A trial as the runner runs it (issue 21): one task, one variant (a matrix cell, issue 22; none
 * without a matrix), one repeat — its key (trial-key.ts), the label people read, and the task it runs. Every
 * trial is a unit of its own: its own folder, workspace, checkpoint, budget share and result.
 */
import type { TaskDefinition } from "../tasks/task-file.js";
import { trialFolderSegments, trialLabel, type TrialKey } from "./trial-key.js";
import { EVERY_TRIAL, type TrialGate } from "./trial-gate.js";

export interface Trial {
  task: TaskDefinition;
  key: TrialKey;
  /** `suite/id` for a task's one trial, `suite/id#3` among repeats (trialLabel). */
  label: string;
}

/** The number of trials a task runs: its own `repeats:`, else the run's `--repeats`, else 1. */
export function repeatsOf(task: Pick<TaskDefinition, "repeats">, runRepeats: number | undefined): number {
  return task.repeats ?? runRepeats ?? 1;
}

/**
 * The gate of `task`: its `pass.rate`, else the run's `--min-pass-rate`, judged as `--gate` says
 * (default: on the rate); without either, every trial must pass.
 */
export function gateOf(task: Pick<TaskDefinition, "passRate">, run: { minPassRate?: number | undefined; judgedOn?: "rate" | "lower" | undefined }): TrialGate {
  const min = task.passRate ?? run.minPassRate;
  return min === undefined ? EVERY_TRIAL : { kind: "rate", min, judgedOn: run.judgedOn ?? "rate" };
}

/** The trials of `task` (a matrix cell's task: of its variant), repeats 1..`repeats`, in report order. */
export function trialsOf(task: TaskDefinition, repeats: number): Trial[] {
  if (!Number.isSafeInteger(repeats) || repeats < 1) throw new RangeError(`trialsOf: ${task.suite}/${task.id} has ${repeats} repeats; expected a whole number from 1`);
  const trials: Trial[] = [];
  for (let repeat = 1; repeat <= repeats; repeat++) {
    const key: TrialKey = { suite: task.suite, id: task.id, variant: task.variant ?? null, repeat };
    trials.push({ task, key, label: trialLabel(key, { repeats, variants: key.variant !== null }) });
  }
  return trials;
}

/** A trial's key as one string, for maps: `suite/id/<variant|default>/<n>` (its folder under `tasks/`). */
export function trialId(key: TrialKey): string {
  return trialFolderSegments(key).join("/");
}
