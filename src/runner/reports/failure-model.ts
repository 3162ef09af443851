/**
 * Why a task did not pass, as one model every report renders the same way (summary.md, junit.xml,
 * the Action's annotations and job summary): a discriminated union read off the result, so results
 * of older rhemas read too.
 *
 *   checks    the agent finished and checks failed
 *   setup     a setup command failed: no agent ran, so never "agent error"
 *   timeout   the task's timeout passed; the checks that had already failed (or did not run) kept
 *   stopped   a budget was spent (resumable with a larger one)
 *   agent     the agent failed: provider, step cap, cancelled, internal, …
 *
 * `reason` is one line that never ends at a colon: a message whose first line ends with one
 * ("setup command `npm ci` exited 127:") is joined with the error line of what follows
 * ("sh: 1: npm: command not found"). Pure.
 */
import { assertNever } from "../../core/errors.js";
import { firstErrorLine } from "./first-error-line.js";
import type { CheckOutcome, TaskResult } from "../run-dir/task-result.js";

export type TaskFailureModel =
  | { kind: "checks"; failed: CheckOutcome[] }
  | { kind: "setup"; reason: string; message: string }
  | { kind: "timeout"; reason: string; message: string; failed: CheckOutcome[] }
  | { kind: "stopped"; reason: string; message: string }
  | { kind: "agent"; code: string; reason: string; message: string };

/** The longest reason line kept; a longer one ends with `…` (never cut before it is this long). */
const MAX_REASON_CHARS = 1_000;

/** Why `result` did not pass; null for a passed task. */
export function failureOf(result: TaskResult): TaskFailureModel | null {
  const failed = result.checks.filter((check) => !check.passed);
  switch (result.status) {
    case "passed":
      return null;
    case "failed":
      return { kind: "checks", failed };
    case "stopped": {
      const message = result.error?.message ?? "a budget was spent";
      return { kind: "stopped", reason: reasonLine(message), message };
    }
    case "errored": {
      const error = result.error ?? { code: "internal", message: "the task failed" };
      const parts = { reason: reasonLine(error.message), message: error.message };
      if (error.code === "setup_failed") return { kind: "setup", ...parts };
      if (error.code === "timeout") return { kind: "timeout", ...parts, failed };
      return { kind: "agent", code: error.code, ...parts };
    }
    default:
      return assertNever(result.status);
  }
}

/** The failure's label, as every report writes it: `setup failed`, `agent error provider`, … */
export function failureLabel(failure: TaskFailureModel): string {
  switch (failure.kind) {
    case "checks":
      return failure.failed.length === 1 ? "check failed" : `${failure.failed.length} checks failed`;
    case "setup":
      return "setup failed";
    case "timeout":
      return "timed out";
    case "stopped":
      return "stopped";
    case "agent":
      return `agent error ${failure.code}`;
    default:
      return assertNever(failure);
  }
}

/** The JUnit `type` of the failure's element: the check, or the error's code. */
export function failureType(failure: TaskFailureModel): string {
  switch (failure.kind) {
    case "checks":
      return "check";
    case "setup":
      return "setup_failed";
    case "timeout":
      return "timeout";
    case "stopped":
      return "budget";
    case "agent":
      return failure.code;
    default:
      return assertNever(failure);
  }
}

/** How a check ended, in words: `exit code 1`, `timed out after 2s`, `killed`, `did not run: …`. */
export function checkVerdict(check: CheckOutcome): string {
  if (check.notRun !== undefined) return check.notRun;
  if (check.timedOut) return `timed out after ${Number((check.durationMs / 1_000).toFixed(3))}s`;
  return check.exitCode === null ? "killed" : `exit code ${check.exitCode}`;
}

/** One failed check as a line: `check "test" failed (exit code 1): AssertionError: …`. */
export function checkLine(check: CheckOutcome): string {
  if (check.notRun !== undefined) return `check "${check.name}" ${check.notRun}`;
  const line = firstErrorLine(check.outputTail).slice(0, 300);
  return `check "${check.name}" failed (${checkVerdict(check)})${line ? `: ${line}` : ""}`;
}

/**
 * The failure in one line, the full reason included: what the Action's annotation and JUnit's
 * `message` say. A timeout during checks names the checks that had failed.
 */
export function failureHeadline(failure: TaskFailureModel): string {
  switch (failure.kind) {
    case "checks":
      return failure.failed.length === 1 ? checkLine(failure.failed[0]!) : `${failure.failed.length} checks failed: ${failure.failed.map((c) => c.name).join(", ")}`;
    case "setup":
    case "stopped":
      return `${failureLabel(failure)}: ${failure.reason}`;
    case "timeout": {
      const ran = failedBeforeTimeout(failure.failed);
      return `${failureLabel(failure)}: ${failure.reason}${ran.length > 0 ? `; failed before it: ${ran.map(checkLine).join("; ")}` : ""}`;
    }
    case "agent":
      return `${failureLabel(failure)}: ${failure.reason}`;
    default:
      return assertNever(failure);
  }
}

/** Of a timed-out task's failed checks, those that failed on their own: not the one the timeout stopped, nor those it kept from running. */
export function failedBeforeTimeout(failed: readonly CheckOutcome[]): CheckOutcome[] {
  const ran = failed.filter((c) => c.notRun === undefined);
  const last = ran[ran.length - 1];
  return last?.timedOut ? ran.slice(0, -1) : ran;
}

/**
 * A message as one line that says why: its first line, joined with the error line of the rest
 * when that first line only introduces it (ends with a colon); whole lines, capped long.
 */
export function reasonLine(message: string): string {
  const lines = message.split(/\r?\n/);
  const first = (lines[0] ?? "").trim();
  const rest = lines.slice(1).join("\n");
  const joined = first.endsWith(":") && rest.trim() !== "" ? `${first} ${firstErrorLine(rest)}` : first;
  return joined.length > MAX_REASON_CHARS ? `${joined.slice(0, MAX_REASON_CHARS)}…` : joined;
}
