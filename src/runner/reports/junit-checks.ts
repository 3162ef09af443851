/**
 * junit.xml with `--junit-cases check` (issue 26): one flat testcase per check of each task, so
 * dashboards show which check failed over time. Its `classname` is `suite.id` (`suite.id [variant]`
 * for a matrix cell's), its `name` the check's name, `file` the task file and `line` the line its
 * check is written on (recorded in result.json; absent for results of older rhemas). No nested
 * testsuites: the testsuite is the suite, as in the other modes.
 *
 * A task's trials are aggregated per check as `--junit-cases task` aggregates them per task
 * (junit-trials.ts), and the task's gate decides as it does there:
 *   the task passed                 the check passes; each trial it failed in a `<flakyFailure>`
 *   it did not, the check failed    `<failure>` of its first failed trial, a `<rerunFailure>` per other
 *   the check passed wherever it ran  passed
 *   it never ran to a verdict       `<skipped>`: not run (the task's timeout came first)
 * A trial counts for a check when the check ran to its own verdict in it: not a check the task's
 * timeout stopped or kept from running, nor one of a trial that errored before its checks.
 *
 * What no check covers is the task's own testcase, named `(task)`, in the same class: present when
 * the task has no check result at all (no checks, or it errored before them), when a trial errored
 * or stopped (setup, agent, timeout, budget: its `<error>`, or `<flakyError>` when the task passed
 * anyway, `<rerunError>` per other), or when a trial has no result yet (interrupted: `<error
 * type="interrupted">`, else `<skipped>`). A task is never dropped. A quarantined task that did
 * not pass turns each of these failures into a quarantined `<skipped>` (junit-quarantine.ts). Pure.
 */
import type { TestCase } from "junit-report-builder";
import { checkLine, failureHeadline, failureOf, failureType } from "./failure-model.js";
import { extendTestCase, type ExtendedTestCase, type RerunKind } from "./junit-test-case.js";
import { caseName } from "./junit-names.js";
import { cdataSafe, checkDetails, errorDetails, propertyLines, seconds, systemOut, unfinishedText } from "./junit-text.js";
import { reportLines, trialLines, trialsFigures } from "./junit-trials.js";
import { isQuarantinedFailure, quarantineFigures, quarantineLine, skipMessage } from "./junit-quarantine.js";
import { trialOrdinal, type TaskTrials } from "./task-trials.js";
import type { CheckOutcome, TaskResult } from "../run-dir/task-result.js";

/** The name of a task's own testcase (what no check covers); a check cannot be told from it only if it is named so too. */
export const TASK_CASE_NAME = "(task)";

/** The classname of a task's testcases with `--junit-cases check`: `suite.id`, `suite.id [variant]`. */
export function checkClassName(task: Pick<TaskTrials, "suite" | "id" | "variant">): string {
  return `${task.suite}.${caseName(task)}`;
}

/** A testcase to add and its place among the task's: `(task)` 0, then the checks in file order from 1. */
export interface CheckCase {
  order: number;
  add: (node: TestCase) => void;
}

export interface CheckCaseOptions {
  /** The task file as reports show it. */
  file: string;
  runDirShown: string | null;
  /** A one-trial task's figures (junit-report.ts `taskFigures`), for its `(task)` testcase. */
  figures: (result: TaskResult) => [string, string][];
}

/** The task's testcases: one per check it has a result for, and `(task)` when something is not a check's (see the header). */
export function checkCases(task: TaskTrials, opts: CheckCaseOptions): CheckCase[] {
  const checks = checksOf(task);
  const cases = checks.map((check, index): CheckCase => ({ order: index + 1, add: (node) => addCheckCase(node, task, check, opts) }));
  const errored = task.results.some((r) => r.status === "errored" || r.status === "stopped");
  const pending = task.unfinished.some((u) => u.state !== "gate_decided");
  if (checks.length === 0 || errored || pending) cases.unshift({ order: 0, add: (node) => addTaskCase(node, task, opts) });
  return cases;
}

/** Why a check the task's timeout killed has no verdict of its own. */
const STOPPED_BY_TIMEOUT = "stopped by the task's timeout before it finished";

/** A check over its task's trials. */
interface CheckTrials {
  name: string;
  /** Its line in the task file (the last trial's record of it); null when no result records it. */
  line: number | null;
  /** The trials in which it ran to a verdict of its own, by repeat. */
  ran: { result: TaskResult; outcome: CheckOutcome }[];
  /** Why it has no verdict in the other trials that list it: not run, or stopped by the task's timeout. */
  unjudged: { result: TaskResult; why: string }[];
}

/** The task's checks, by their order in its results (its file's). */
function checksOf(task: TaskTrials): CheckTrials[] {
  const byName = new Map<string, CheckTrials>();
  for (const result of task.results) {
    const stopped = stoppedByTimeout(result);
    for (const outcome of result.checks) {
      let entry = byName.get(outcome.name);
      if (entry === undefined) byName.set(outcome.name, (entry = { name: outcome.name, line: null, ran: [], unjudged: [] }));
      if (outcome.line !== undefined) entry.line = outcome.line;
      if (outcome.notRun !== undefined) entry.unjudged.push({ result, why: outcome.notRun });
      else if (outcome === stopped) entry.unjudged.push({ result, why: STOPPED_BY_TIMEOUT });
      else entry.ran.push({ result, outcome });
    }
  }
  return [...byName.values()];
}

/** The check a timed-out task's deadline killed (its own failure is the task's timeout, not the check's); null otherwise. */
function stoppedByTimeout(result: TaskResult): CheckOutcome | null {
  if (result.status !== "errored" || result.error?.code !== "timeout") return null;
  const last = result.checks.filter((c) => c.notRun === undefined).at(-1);
  return last?.timedOut ? last : null;
}

function addCheckCase(node: TestCase, task: TaskTrials, check: CheckTrials, opts: CheckCaseOptions): void {
  const failed = check.ran.filter((t) => !t.outcome.passed);
  const spentMs = check.ran.reduce((sum, t) => sum + t.outcome.durationMs, 0);
  node.className(checkClassName(task)).name(check.name).time(seconds(spentMs)).file(opts.file);
  const extended = extendTestCase(node);
  if (check.line !== null) extended.line(check.line);
  const message = (t: { result: TaskResult; outcome: CheckOutcome }) => `${ordinal(t.result, task)}${checkLine(t.outcome)}`;
  const details = (t: { outcome: CheckOutcome }) => cdataSafe(checkDetails([t.outcome]).join("\n\n"));
  const quarantined = isQuarantinedFailure(task) && failed.length > 0;
  const [first, ...others] = failed;
  let status = "passed";
  if (quarantined) {
    extended.skipped(skipMessage(task, message(first!)));
    status = "failed";
  } else if (first !== undefined && task.status === "passed") {
    for (const t of failed) extended.rerun(rerun("flakyFailure", message(t), "check", details(t), t.result, opts));
  } else if (first !== undefined) {
    node.failure(message(first), "check").stacktrace(details(first));
    for (const t of others) extended.rerun(rerun("rerunFailure", message(t), "check", details(t), t.result, opts));
    status = "failed";
  } else if (check.ran.length === 0) {
    extended.skipped(check.unjudged[0]?.why ?? "not run");
    status = "not_run";
  }
  const figures: [string, string][] = [["status", status], ["counted", String(check.ran.length)], ["passes", String(check.ran.length - failed.length)], ...quarantineFigures(task)];
  const text = [
    ...(quarantined ? [quarantineLine(task), failed.map((t) => `${message(t)}\n${checkDetails([t.outcome]).join("")}`).join("\n\n")] : []),
    checkTrialText(task, check, opts),
    propertyLines(figures),
  ];
  node.standardOutput(cdataSafe(text.join("\n\n")));
}

/** A one-trial task's result as any testcase shows it; a repeated task's: one line per trial for this check, and the report's link. */
function checkTrialText(task: TaskTrials, check: CheckTrials, opts: CheckCaseOptions): string {
  const only = task.planned === 1 ? task.results[0] : undefined;
  if (only !== undefined) return systemOut(only, opts.runDirShown);
  const verdicts = new Map<TaskResult, string>([
    ...check.unjudged.map((t): [TaskResult, string] => [t.result, t.why]),
    ...check.ran.map((t): [TaskResult, string] => [t.result, t.outcome.passed ? "passed" : checkLine(t.outcome)]),
  ]);
  const lines = [
    ...task.results.map((r) => `${trialOrdinal(r, task)}: ${verdicts.get(r) ?? `no result for this check: the trial ${r.status} before it (see ${TASK_CASE_NAME})`}`),
    ...task.unfinished.map((u) => `${trialOrdinal(u, task)}: ${unfinishedText(u)}`),
  ];
  const shown = check.ran.find((t) => !t.outcome.passed)?.result ?? check.ran[0]?.result;
  return [...lines, ...reportLines(task, shown, opts.runDirShown)].join("\n");
}

/** The `(task)` testcase: the trials' errors, or its pending trials, or a pass (a task without checks). */
function addTaskCase(node: TestCase, task: TaskTrials, opts: CheckCaseOptions): void {
  const spentMs = task.results.reduce((sum, r) => sum + r.durationMs, 0) + task.unfinished.reduce((sum, u) => sum + (u.spent?.durationMs ?? 0), 0);
  node.className(checkClassName(task)).name(TASK_CASE_NAME).time(seconds(spentMs)).file(opts.file);
  const extended = extendTestCase(node);
  const errored = task.results.filter((r) => r.status === "errored" || r.status === "stopped");
  const pending = task.unfinished.filter((u) => u.state !== "gate_decided");
  const message = (r: TaskResult) => `${ordinal(r, task)}${failureHeadline(failureOf(r)!)}`;
  const quarantined = isQuarantinedFailure(task) && errored.length > 0;
  const [first, ...others] = errored;
  if (quarantined) {
    extended.skipped(skipMessage(task, `${first!.status}: ${message(first!)}`));
  } else if (first !== undefined) {
    const passed = task.status === "passed";
    if (!passed) node.error(message(first), failureType(failureOf(first)!), cdataSafe(errorDetails(first, failureOf(first)!)));
    for (const r of passed ? errored : others) extended.rerun(rerun(passed ? "flakyError" : "rerunError", message(r), failureType(failureOf(r)!), cdataSafe(errorDetails(r, failureOf(r)!)), r, opts));
  } else if (pending.length > 0) {
    addPending(node, extended, task, pending);
  }
  const figures = [...taskCaseFigures(task, opts), ...quarantineFigures(task)];
  const text = [
    ...(quarantined ? [quarantineLine(task), errored.map((r) => `${message(r)}\n${errorDetails(r, failureOf(r)!)}`).join("\n\n")] : []),
    task.planned === 1 && task.results[0] !== undefined ? systemOut(task.results[0], opts.runDirShown) : [...trialLines(task), ...reportLines(task, first ?? task.results[0], opts.runDirShown)].join("\n"),
    propertyLines(figures),
  ];
  node.standardOutput(cdataSafe(text.join("\n\n")));
}

/** Trials without a result yet: an interrupted one is an error of type `interrupted`, else the testcase is skipped. */
function addPending(node: TestCase, extended: ExtendedTestCase, task: TaskTrials, pending: TaskTrials["unfinished"]): void {
  const why = task.planned === 1
    ? unfinishedText(pending[0]!)
    : `unfinished: ${pending.length} of ${task.planned} trials have no result yet; the same command continues them`;
  if (pending.some((u) => u.state === "interrupted")) node.error(why, "interrupted");
  else extended.skipped(why);
}

/** The `(task)` testcase's figures: the task's own as `--junit-cases task` gives them. */
function taskCaseFigures(task: TaskTrials, opts: CheckCaseOptions): [string, string][] {
  if (task.planned > 1) return trialsFigures(task);
  const only = task.results[0];
  return only !== undefined ? opts.figures(only) : [["status", task.unfinished[0]?.state ?? "not_started"]];
}

/** `trial 2/3: ` before a repeated task's messages; nothing for a one-trial task's. */
function ordinal(result: TaskResult, task: TaskTrials): string {
  return task.planned > 1 ? `${trialOrdinal(result, task)}: ` : "";
}

function rerun(kind: RerunKind, message: string, type: string, stackTrace: string, result: TaskResult, opts: CheckCaseOptions) {
  return { kind, message, type, stackTrace, systemOut: cdataSafe(systemOut(result, opts.runDirShown)), systemErr: "" };
}
