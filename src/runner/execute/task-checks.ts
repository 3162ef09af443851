/**
 * A task's checks: each `run` command in the workspace, in order, every one of them whatever the
 * others gave (like a test suite); the task passes when every check exits 0. Output is kept as a
 * tail, with secrets redacted. Each check is recorded in the task's state as started, then done
 * with its outcome (task-state.ts), so after a kill a finished check keeps its result and an
 * interrupted one runs again — checks should be safe to repeat.
 *
 * Limits: each check has its own `timeout` (default `DEFAULT_CHECK_TIMEOUT_MS`), and the task's
 * `limits.timeout` covers them all: when it fires, the running check is killed and reported
 * timed out, and the checks after it are reported not run.
 *
 * Each check finds the agent's final answer in the file named by `RHEMA_FINAL_ANSWER` (in the
 * task's folder, outside the workspace), passed in the check's environment. In the sandbox, that
 * file is the one thing of the run directory a check sees (bound read-only by the caller).
 * Likewise `RHEMA_CHANGES` names the trial's changes.patch (written before the checks run; absent
 * when no patch could be made), so a check can tell that the agent changed nothing.
 */
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { CommandOutcome, CommandRunner } from "./command-runner.js";
import type { RunnerEvent } from "../run-dir/runner-events.js";
import type { SecretRedactor } from "../run-dir/secret-redactor.js";
import type { TaskCheck, TaskDefinition } from "../tasks/task-file.js";
import type { TaskStateBook } from "../run-dir/task-folder.js";
import type { CheckOutcome } from "../run-dir/task-result.js";
import { checkFinished, checkStarted } from "../run-dir/task-state.js";

/** A check's own limit when it names none: long enough for a real test suite, short enough to notice a hang. */
export const DEFAULT_CHECK_TIMEOUT_MS = 5 * 60_000;
/** The variable naming the file that holds the agent's final answer, in each check's environment. */
export const FINAL_ANSWER_ENV = "RHEMA_FINAL_ANSWER";
/** The variable naming the trial's changes.patch, in each check's environment. */
export const CHANGES_ENV = "RHEMA_CHANGES";

/** Names output.json, the accepted structured answer of a task with `output:` (absent otherwise). */
export const OUTPUT_ENV = "RHEMA_OUTPUT";
export const NOT_RUN_TIMEOUT = "not run: the task's timeout passed before it started";

export interface CheckRunOptions {
  runCommand: CommandRunner;
  /** The run's interrupt: the check it stops stays `started`, and the next run runs it again. */
  signal: AbortSignal;
  /** The task's timeout, aborted when it fires; null without one. */
  deadline: AbortSignal | null;
  redactor: SecretRedactor;
  book: TaskStateBook;
  now: () => Date;
  /** The file holding the agent's final answer (`RHEMA_FINAL_ANSWER`). */
  finalAnswerPath: string;
  /** The trial's changes.patch (`RHEMA_CHANGES`); absent when none was made. */
  changesPath?: string;
  /** The trial's output.json (`RHEMA_OUTPUT`); absent for a task without `output:`. */
  outputPath?: string;
  onEvent?: (event: RunnerEvent) => void | Promise<void>;
  /** The task's sandbox for checks (network per policy, the final-answer file bound read-only); absent: unsandboxed. */
  sandbox?: SandboxPlacement;
}

export type ChecksOutcome =
  | { kind: "interrupted" }
  /** `deadline`: where the task's timeout caught the checks (the check it stopped, or the first it kept from running); null when it did not. */
  | { kind: "finished"; outcomes: CheckOutcome[]; deadline: DeadlineHit | null };

export interface DeadlineHit {
  check: string;
  /** The check was running and was killed (else it never started). */
  running: boolean;
}

export async function runChecks(task: TaskDefinition, workspace: string, opts: CheckRunOptions): Promise<ChecksOutcome> {
  const outcomes: CheckOutcome[] = [];
  const total = task.checks.length;
  const signal = opts.deadline ? AbortSignal.any([opts.signal, opts.deadline]) : opts.signal;
  let deadline: DeadlineHit | null = null;
  for (const [index, check] of task.checks.entries()) {
    const record = opts.book.current.checks[index];
    const end = (outcome: CheckOutcome, kept: boolean) => opts.onEvent?.({
      type: "check_end", index, total, name: check.name, passed: outcome.passed, exitCode: outcome.exitCode, timedOut: outcome.timedOut,
      durationMs: outcome.durationMs, kept, ...(outcome.notRun !== undefined ? { notRun: outcome.notRun } : {}),
    });
    if (record?.status === "done" && record.name === check.name) {
      // The line from the task file as it is now: a comment added above the check moves it without changing the task.
      const kept = withLine(record.outcome, check);
      outcomes.push(kept);
      await end(kept, true);
      continue;
    }
    if (opts.signal.aborted) return { kind: "interrupted" };
    if (opts.deadline?.aborted) {
      const skipped = notRun(check, NOT_RUN_TIMEOUT);
      deadline ??= { check: check.name, running: false };
      outcomes.push(skipped);
      await end(skipped, false);
      continue;
    }
    const rerun = record?.status === "started" && record.name === check.name ? "interrupted" as const : null;
    await opts.book.update((s) => checkStarted(s, index, check.name, opts.now().toISOString()));
    await opts.onEvent?.({ type: "check_start", index, total, name: check.name, command: check.run, rerun });
    const ran = await opts.runCommand({
      command: check.run, env: { ...task.env, [FINAL_ANSWER_ENV]: opts.finalAnswerPath, ...(opts.changesPath ? { [CHANGES_ENV]: opts.changesPath } : {}), ...(opts.outputPath ? { [OUTPUT_ENV]: opts.outputPath } : {}) },
      cwd: workspace, timeoutMs: check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS, signal,
      ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    });
    if (opts.signal.aborted) return { kind: "interrupted" };
    const stoppedByDeadline = opts.deadline?.aborted === true;
    const outcome = checkOutcome(check, ran, stoppedByDeadline, opts.redactor);
    outcomes.push(outcome);
    // A check the task's timeout stopped is no result of its own: left `started`, a retry runs it again.
    if (stoppedByDeadline) deadline ??= { check: check.name, running: true };
    else await opts.book.update((s) => checkFinished(s, index, outcome));
    await end(outcome, false);
  }
  return { kind: "finished", outcomes, deadline };
}

function checkOutcome(check: TaskCheck, ran: CommandOutcome, stoppedByDeadline: boolean, redactor: SecretRedactor): CheckOutcome {
  return {
    name: check.name,
    command: check.run,
    exitCode: stoppedByDeadline ? null : ran.exitCode,
    passed: !stoppedByDeadline && ran.exitCode === 0,
    durationMs: Math.round(ran.durationMs),
    outputTail: redactor.redact(ran.outputTail),
    timedOut: stoppedByDeadline || ran.timedOut,
    ...lineOf(check),
  };
}

function notRun(check: TaskCheck, why: string): CheckOutcome {
  return { name: check.name, command: check.run, exitCode: null, passed: false, durationMs: 0, outputTail: "", timedOut: false, notRun: why, ...lineOf(check) };
}

function lineOf(check: TaskCheck): { line?: number } {
  return check.line === undefined ? {} : { line: check.line };
}

/** A kept outcome with the check's line now (absent from a checkpoint of an older rhema). */
function withLine(outcome: CheckOutcome, check: TaskCheck): CheckOutcome {
  const { line: _old, ...rest } = outcome;
  return { ...rest, ...lineOf(check) };
}
