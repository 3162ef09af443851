/**
 * What a run over an existing run directory reopens before it starts, and what it refuses: task
 * files changed since their trials started (an error, or those trials wiped with
 * `--restart-changed`), errored trials `--retry-errored` continues or starts afresh, trials that
 * used all their steps under a cap that is now larger, trials stopped on a budget that was raised.
 * A reopened trial loses its result and keeps its checkpoint, so the run continues it.
 */
import { RhemaError } from "../../core/errors.js";
import type { RunDir } from "../run-dir/run-dir.js";
import { setupRetried } from "../run-dir/task-state.js";
import { budgetRaised, type Budgets } from "../pricing/run-budget.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { taskKey } from "../tasks/task-key.js";
import { repeatsOf, trialsOf } from "../trials/trial.js";
import { trialLabel, type TrialKey } from "../trials/trial-key.js";
import { isRetryableErrorCode } from "./task-failure.js";
import { stepCapOf } from "./task-turn.js";

/** What reopening reads of a run's options (suite-runner.ts's `SuiteRunOptions`). */
export interface ReopeningOptions {
  tasks: readonly TaskDefinition[];
  /** `--repeats`. */
  repeats?: number;
  /** `--restart-changed`. */
  restartChanged: boolean;
  /** `--retry-errored`. */
  retryErrored?: boolean;
  /** The run's budgets. */
  budget?: Budgets;
  env: { defaults: { maxSteps?: number } };
  onNote?(note: string): void;
}

export class ChangedTasksError extends RhemaError {
  constructor(changed: readonly TaskDefinition[]) {
    const list = changed.map((t) => `  ${taskKey(t)} (${t.file})`).join("\n");
    super("task_changed", `these task files changed since their run started:\n${list}\nrun them afresh with --restart-changed, or pass another --out`);
  }
}

/** How many trials of `task` this run plans: its `repeats:`, else `--repeats`, else 1. */
export function trialCountOf(task: TaskDefinition, opts: Pick<ReopeningOptions, "repeats">): number {
  return repeatsOf(task, opts.repeats);
}

/** Every selected task's planned trials. */
function selectedTrialKeys(opts: ReopeningOptions): TrialKey[] {
  return opts.tasks.flatMap((task) => trialsOf(task, trialCountOf(task, opts)).map((t) => t.key));
}

/** Tasks whose file changed since one of their trial folders was made: an error, or every trial wiped with --restart-changed. */
export async function handleChangedTasks(opts: ReopeningOptions, runDir: RunDir): Promise<void> {
  const changed: TaskDefinition[] = [];
  for (const task of opts.tasks) {
    for (const trial of trialsOf(task, trialCountOf(task, opts))) {
      const hash = await recordedHash(runDir, trial.key);
      if (hash !== null && hash !== task.contentHash) {
        changed.push(task);
        break;
      }
    }
  }
  if (changed.length === 0) return;
  if (!opts.restartChanged) throw new ChangedTasksError(changed);
  for (const task of changed) await runDir.removeTask(task);
}

/**
 * Drops the results of trials errored by an outage or a timeout, keeping their checkpoints: the
 * run then continues each from where it stopped (revive, then the request that failed), as
 * after a kill. A trial whose setup failed (an `npm ci` that met a network blip) runs its setup
 * again in a fresh workspace: no agent ran, so nothing is lost. A trial whose structured answer
 * was still invalid after its repairs (`output_invalid`) starts afresh: a new conversation, a new
 * draw of the model. A trial errored by a bug
 * (`internal`) is kept: running it again would only repeat it; one that used all its steps is
 * `reopenCappedTasks`'s.
 */
export async function reopenErroredTasks(opts: ReopeningOptions, runDir: RunDir): Promise<void> {
  for (const key of selectedTrialKeys(opts)) {
    const folder = runDir.trial(key);
    const result = await folder.readResult();
    if (result?.status !== "errored") continue;
    const code = result.error?.code ?? "";
    if (isRetryableErrorCode(code)) await folder.removeResult();
    else if (code === "setup_failed") {
      // The state first: a kill between the two leaves the result, and the next --retry-errored does it again.
      const state = await folder.readState();
      if (state) await folder.writeState(setupRetried(state));
      await folder.removeResult();
      opts.onNote?.(`${labelOf(key, opts)} retried: its setup failed, so its workspace is made afresh and every setup command runs again`);
    } else if (code === "output_invalid") {
      // Its conversation spent its repairs: continuing it would meet the same cap, so the trial starts afresh (as --restart does).
      await folder.remove();
      opts.onNote?.(`${labelOf(key, opts)} retried: its answer was not valid after its repairs, so the trial starts afresh`);
    }
  }
}

/** A trial's label in this run (its task's repeats decide whether `#n` shows). */
function labelOf(key: TrialKey, opts: ReopeningOptions): string {
  const task = opts.tasks.find((t) => taskKey(t) === taskKey(key));
  return trialLabel(key, { repeats: task ? trialCountOf(task, opts) : 1, variants: key.variant !== null });
}

/**
 * Drops the results of trials that used all their steps when their step cap (`limits.maxSteps`,
 * else `--max-steps`, else 40) now allows more than they took, keeping their checkpoints: the
 * run continues each from its last boundary, no call made twice, its steps counting on. A trial
 * whose cap is as it was, or smaller, stays errored and the user is told what continues it —
 * with `--retry-errored` too, which would only meet the same cap.
 */
export async function reopenCappedTasks(opts: ReopeningOptions, runDir: RunDir): Promise<void> {
  for (const task of opts.tasks) {
    for (const trial of trialsOf(task, trialCountOf(task, opts))) {
      const folder = runDir.trial(trial.key);
      // A result that cannot be read stops the run when its trial comes up.
      const result = await folder.readResult().catch(() => null);
      if (result?.status !== "errored" || result.error?.code !== "step_cap") continue;
      const reopening = stepCapReopening(task, result.steps, opts.env.defaults, opts.retryErrored ?? false, trial.label);
      if (reopening.reopen) await folder.removeResult();
      opts.onNote?.(reopening.note);
    }
  }
}

/**
 * Whether a trial that used all its steps (`taken`) continues under the step cap in force now, and
 * the line that says so — or says what would continue it (a task that sets `limits.maxSteps` is
 * not moved by `--max-steps`).
 */
export function stepCapReopening(
  task: Pick<TaskDefinition, "suite" | "id" | "limits">, taken: number, defaults: { maxSteps?: number }, retrying: boolean, label = taskKey(task),
): { reopen: boolean; note: string } {
  const cap = stepCapOf(task, defaults);
  const steps = `${taken} step${taken === 1 ? "" : "s"}`;
  if (cap > taken) return { reopen: true, note: `${label} continues from its checkpoint: its step cap is now ${cap} (${steps} taken)` };
  const what = task.limits.maxSteps !== undefined
    ? `its limits.maxSteps is ${cap} (--max-steps does not apply to a task that sets its own): raise limits.maxSteps`
    : `its step cap is ${cap}${defaults.maxSteps === undefined ? " (the default)" : ""}: pass a larger --max-steps`;
  return { reopen: false, note: `${label} ${retrying ? "not retried" : "stays errored"}: it used all ${steps} it had; ${what} to continue it from its checkpoint` };
}

/**
 * Drops the results of trials stopped on a budget that was raised since (or removed), keeping
 * their checkpoints: the run continues each where it stopped, the stopped request not repeated.
 * A trial whose budget is as it was stays stopped, and the user is told.
 */
export async function reopenStoppedTasks(opts: ReopeningOptions, runDir: RunDir): Promise<void> {
  for (const task of opts.tasks) {
    for (const trial of trialsOf(task, trialCountOf(task, opts))) {
      const folder = runDir.trial(trial.key);
      // A result that cannot be read stops the run when its trial comes up, as without budgets.
      const result = await folder.readResult().catch(() => null);
      if (result?.status !== "stopped" || !result.budget) continue;
      if (budgetRaised(result.budget, { task: task.limits, cell: task.cellBudget ?? {}, run: opts.budget ?? {} })) await folder.removeResult();
      else opts.onNote?.(`${trial.label} stays stopped: ${result.error?.message ?? "its budget is spent"}; raise that budget to continue it`);
    }
  }
}

/** The content hash the trial's folder was made for: its state's, else its result's; null for a new trial. */
async function recordedHash(runDir: RunDir, key: TrialKey): Promise<string | null> {
  const folder = runDir.trial(key);
  const state = await folder.readState();
  if (state) return state.contentHash;
  return (await folder.readResult())?.contentHash ?? null;
}
