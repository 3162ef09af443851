/**
 * junit.xml for a quarantined task (`--quarantine`) that did not pass: its failure is reported but
 * does not fail the gate, so readers must not count it as a failure either. Its testcase (named,
 * classed and timed as it would be otherwise, so dashboards' history holds) is
 * `<skipped message="quarantined: REASON — HEADLINE">`; the failure itself — each failed trial's
 * checks with their output tail, or its error — is in `system-out`, before the usual final answer
 * and transcript, and the figures end with `[[PROPERTY|quarantined=true]]` (the suite carries
 * `task.<id>.quarantined`). With `--junit-cases trial` each failed trial of a quarantined task is
 * such a testcase. A quarantined task that passed, or is unfinished, is reported as any task is,
 * with the same `quarantined=true` figure. With `--junit-cases check` (junit-checks.ts) each check
 * testcase that would fail, and the task's own testcase that would error, is such a skip. Pure.
 */
import type { TestCase } from "junit-report-builder";
import { failureHeadline, failureOf } from "./failure-model.js";
import { extendTestCase } from "./junit-test-case.js";
import { caseName } from "./junit-names.js";
import { cdataSafe, checkDetails, errorDetails, propertyLines, seconds, systemOut } from "./junit-text.js";
import { trialsFigures } from "./junit-trials.js";
import { formatGate, trialOrdinal, type TaskTrials } from "./task-trials.js";
import type { TaskResult } from "../run-dir/task-result.js";

/** The figure every quarantined task's testcase and suite properties carry. */
export const QUARANTINED_FIGURE: [string, string] = ["quarantined", "true"];

/** The task's quarantine figures: `quarantined=true`, or none. */
export function quarantineFigures(task: Pick<TaskTrials, "quarantine">): [string, string][] {
  return task.quarantine === null ? [] : [QUARANTINED_FIGURE];
}

/** Whether the task's testcase(s) are quarantined skips: quarantined, and it did not pass (nor is unfinished). */
export function isQuarantinedFailure(task: Pick<TaskTrials, "quarantine" | "status">): boolean {
  return task.quarantine !== null && task.status !== "passed" && task.status !== "unfinished";
}

/** `quarantined: REASON — WHAT`; without a reason, `quarantined — WHAT`. */
export function skipMessage(task: Pick<TaskTrials, "quarantine">, what: string): string {
  const reason = task.quarantine?.reason ?? null;
  return `quarantined${reason === null ? "" : `: ${reason}`} — ${what}`;
}

/** A quarantined one-trial task (`figures`: its usual figures) or trial (`--junit-cases trial`) that did not pass. */
export function addQuarantinedResultCase(node: TestCase, task: TaskTrials, result: TaskResult, opts: { file: string; name: string; figures: [string, string][] }): void {
  node.className(task.suite).name(opts.name).time(seconds(result.durationMs)).file(opts.file);
  const headline = failureHeadline(failureOf(result)!);
  const what = `${result.status}: ${headline}`;
  extendTestCase(node).skipped(skipMessage(task, task.planned > 1 ? `${trialOrdinal(result, task)} ${what}` : what));
  const text = [quarantineLine(task), failureText(result), systemOut(result), propertyLines([...opts.figures, QUARANTINED_FIGURE])].join("\n\n");
  node.standardOutput(cdataSafe(text));
}

/** A quarantined repeated task (`--junit-cases task`) whose gate failed: one skipped testcase, every failed trial's failure in system-out. */
export function addQuarantinedTrialsCase(node: TestCase, task: TaskTrials, file: string): void {
  const spentMs = task.results.reduce((sum, r) => sum + r.durationMs, 0) + task.unfinished.reduce((sum, u) => sum + (u.spent?.durationMs ?? 0), 0);
  node.className(task.suite).name(caseName(task)).time(seconds(spentMs)).file(file);
  const failed = task.results.filter((r) => r.status !== "passed");
  const what = `${task.status}: ${task.figures.passes} of ${task.figures.trials} trials passed (gate: ${formatGate(task.gate)})`;
  extendTestCase(node).skipped(skipMessage(task, what));
  const trials = failed.map((r) => `${trialOrdinal(r, task)}: ${r.status}\n${failureText(r)}`);
  const text = [quarantineLine(task), ...trials, propertyLines([...trialsFigures(task), QUARANTINED_FIGURE])].join("\n\n");
  node.standardOutput(cdataSafe(text));
}

/** The first line of a quarantined failure's system-out. */
export function quarantineLine(task: Pick<TaskTrials, "quarantine">): string {
  const reason = task.quarantine?.reason ?? null;
  return `quarantined${reason === null ? "" : ` (${reason})`}: this failure is reported but does not fail the gate`;
}

/** A failed trial's failure as a report's body says it: the failed checks with their output tail, or the error. */
function failureText(result: TaskResult): string {
  const failure = failureOf(result)!;
  const details = failure.kind === "checks" ? checkDetails(failure.failed).join("\n\n") : errorDetails(result, failure);
  return `${failureHeadline(failure)}\n${details}`;
}
