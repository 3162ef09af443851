/**
 * The texts of junit.xml's testcases, shared by a task's testcase and a repeated task's trials
 * (junit-report.ts, junit-trials.ts): property lines, a check's and an error's details, the
 * system-out of a result, the time format, and CDATA-safe text. Pure.
 */
import { refusalSkipText } from "./refusal-text.js";
import { checkVerdict, failureHeadline, type TaskFailureModel } from "./failure-model.js";
import type { CheckOutcome, TaskResult, UnfinishedTask } from "../run-dir/task-result.js";
import { changesLine } from "./changes-text.js";
import { reportLink } from "./report-html-link.js";
import { RUN_FILES } from "../run-dir/run-dir.js";

const TAIL_CHARS = 8_000;

/** `[[PROPERTY|name=value]]`, one a line: testcase properties in system-out. */
export function propertyLines(figures: readonly [string, string][]): string {
  return figures.map(([name, value]) => `[[PROPERTY|${name}=${value.replace(/[\r\n]+/g, " ").replaceAll("]]", "] ]")}]]`).join("\n");
}

/** A stat as a property value; a null (a dollar figure with no price) reads `unpriced`, never 0. */
export function statValue(name: string, value: number | null): string {
  if (value === null) return "unpriced";
  return name === "cacheHitRate" ? value.toFixed(4) : String(value);
}

/** An errored or stopped task's error body: its whole message, then the checks that had failed before it (a timeout during checks). */
export function errorDetails(result: TaskResult, failure: TaskFailureModel): string {
  const message = result.error?.message ?? failureHeadline(failure);
  return [message, ...(failure.kind === "timeout" ? checkDetails(failure.failed) : [])].join("\n\n");
}

export function checkDetails(failed: readonly CheckOutcome[]): string[] {
  return failed.map((check) => [
    `check: ${check.name}`,
    `command: ${check.command}`,
    `result: ${checkVerdict(check)}`,
    ...(check.notRun !== undefined ? [] : ["output (tail):", tail(check.outputTail)]),
  ].join("\n"));
}

/**
 * A result's system-out: its final answer, transcript, changes and denials. With `runDirShown`
 * (the run directory relative to the repository root) the run's report.html is named with the
 * trial's deep link, and it and changes.patch are attached, `[[ATTACHMENT|path]]` as the JUnit
 * attachments plugin and GitHub's JUnit actions read it.
 */
export function systemOut(result: TaskResult, runDirShown: string | null = null): string {
  const lines = result.finalAnswer === "" ? [] : [result.finalAnswer, ""];
  lines.push(`transcript: ${result.transcriptPath}`);
  if (runDirShown !== null) lines.push(`report: ${reportLink(runDirShown, result)}`, `[[ATTACHMENT|${runDirShown}/${RUN_FILES.html}]]`);
  if (result.changes !== undefined) {
    lines.push(`changes: ${changesLine(result.changes)}`);
    if (result.changes.path !== null && runDirShown !== null) lines.push(`[[ATTACHMENT|${runDirShown}/${result.changes.path}]]`);
  }
  if (result.policyDenials.count > 0) {
    lines.push(`policy denials: ${result.policyDenials.count}`);
    for (const denial of result.policyDenials.examples) {
      lines.push(`  ${denial.tool} denied by ${denial.rule ?? "default"}: ${denial.reason}`);
    }
  }
  return lines.join("\n");
}

/** Seconds with millisecond precision, never in exponent form (the schema's time pattern). */
export function seconds(ms: number): number {
  return Number((Math.max(0, ms) / 1_000).toFixed(3));
}

function tail(text: string): string {
  return text.length <= TAIL_CHARS ? text : `…${text.slice(-TAIL_CHARS)}`;
}

/** The builder escapes only the first `]]>` of a CDATA section; break up every one. */
export function cdataSafe(text: string): string {
  return text.replaceAll("]]>", "]] >");
}

/** Shown for a task without a result; the next run of the same command continues or starts it. */
const UNFINISHED_TEXT: Record<UnfinishedTask["state"], string> = {
  interrupted: "interrupted: the run stopped while this task ran; the same command continues it from its checkpoint",
  not_started: "not started: the run was interrupted",
  not_selected: "not run yet: not selected by the runs of this run directory so far",
  gate_decided: "skipped (gate decided): its task's gate was decided by its other trials before it started (--stop-early)",
};

/** The same for a task an earlier run interrupted (it spent something) and this one did not continue. */
const EARLIER_INTERRUPTED_TEXT: Record<Exclude<UnfinishedTask["state"], "interrupted">, string> = {
  gate_decided: UNFINISHED_TEXT.gate_decided,
  not_started: "not finished: an earlier run was interrupted while this task ran, and this run was interrupted before it continued it",
  not_selected: "not finished: an earlier run was interrupted while this task ran, and no run has selected it since; selecting it continues it from its checkpoint",
};

/** Why a task has no result, in a line. */
export function unfinishedText(task: Pick<UnfinishedTask, "state" | "spent" | "refusedBy">): string {
  if (task.refusedBy) return refusalSkipText(task.refusedBy, task.state);
  return task.state !== "interrupted" && task.spent ? EARLIER_INTERRUPTED_TEXT[task.state] : UNFINISHED_TEXT[task.state];
}
