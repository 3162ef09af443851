/**
 * junit.xml for a task with several trials (issue 21). With `--junit-cases task` (the default) it
 * is one testcase, named and classed as a one-trial task's (so dashboards' history holds), whose
 * verdict is its gate's (task-trials.ts):
 *   passed      no failure; each failed trial a `<flakyFailure>` (an errored or stopped one a `<flakyError>`)
 *   failed      `<failure>` of its first failed trial, and a `<rerunFailure>`/`<rerunError>` per other one
 *   errored     (every counted trial errored or stopped) the same with `<error>` first
 *   unfinished  an `error` of type `interrupted` when a trial was interrupted, else `skipped`
 * Each entry's message is `trial 3/5: <headline>`, its type `check` or the error code, its
 * stackTrace the check's output tail or the error, its system-out the trial's final answer and transcript.
 * The testcase's system-out lists every trial (gate-decided ones as `skipped (gate decided)`) and
 * ends with the task's trial figures as `[[PROPERTY|…]]` lines; the suite carries them as `task.<id>.*`.
 * With `--junit-cases trial` each trial is a testcase of its own, named `id#3`.
 */
import type { TestCase } from "junit-report-builder";
import { failureHeadline, failureOf, failureType } from "./failure-model.js";
import { extendTestCase, type RerunKind } from "./junit-test-case.js";
import { caseName } from "./junit-names.js";
import { refusalSkipText } from "./refusal-text.js";
import { cdataSafe, checkDetails, errorDetails, propertyLines, seconds, systemOut, unfinishedText } from "./junit-text.js";
import { formatAtK, formatCostPerPass, formatGate, formatRate, trialOrdinal, type TaskTrials } from "./task-trials.js";
import type { TaskResult } from "../run-dir/task-result.js";
import { RUN_FILES } from "../run-dir/run-dir.js";
import { reportLink } from "./report-html-link.js";
import type { Spread } from "../trials/trial-figures.js";

/** The task's testcase over its trials (see the header). */
export function addTrialsCase(node: TestCase, task: TaskTrials, file: string, marks: readonly [string, string][] = [], runDirShown: string | null = null): void {
  const spentMs = task.results.reduce((sum, r) => sum + r.durationMs, 0) + task.unfinished.reduce((sum, u) => sum + (u.spent?.durationMs ?? 0), 0);
  node.className(task.suite).name(caseName(task)).time(seconds(spentMs)).file(file);
  const extended = extendTestCase(node);
  const failed = task.results.filter((r) => r.status !== "passed");
  switch (task.status) {
    case "passed":
      for (const result of failed) extended.rerun(rerunEntry(result, task, result.status === "failed" ? "flakyFailure" : "flakyError", runDirShown));
      break;
    case "failed":
    case "errored":
    case "stopped": {
      const [first, ...others] = failed;
      if (first !== undefined) addFirstFailure(node, first, task);
      for (const result of others) extended.rerun(rerunEntry(result, task, result.status === "failed" ? "rerunFailure" : "rerunError", runDirShown));
      break;
    }
    case "unfinished": {
      const pending = task.unfinished.filter((u) => u.state !== "gate_decided");
      // A provider's refusal leaves its trials skipped (not started, or checkpointed), never an error.
      const refused = pending.find((u) => u.refusedBy)?.refusedBy;
      const why = refused ? refusalSkipText(refused, "not_started")
        : `unfinished: ${pending.length} of ${task.planned} trials have no result yet and the gate is not decided; the same command continues them`;
      if (!refused && pending.some((u) => u.state === "interrupted")) node.error(why, "interrupted");
      else extended.skipped(why);
      break;
    }
  }
  node.standardOutput(cdataSafe(`${[...trialLines(task), ...reportLines(task, failed[0] ?? task.results[0], runDirShown)].join("\n")}\n\n${propertyLines([...trialsFigures(task), ...marks])}`));
}

/** The run's report.html, attached, with the deep link to `shown` (the first failed trial, else the first). */
export function reportLines(task: TaskTrials, shown: TaskResult | undefined, runDirShown: string | null): string[] {
  if (runDirShown === null) return [];
  const trial = shown ?? { suite: task.suite, id: task.id };
  return [`report: ${reportLink(runDirShown, trial)}`, `[[ATTACHMENT|${runDirShown}/${RUN_FILES.html}]]`];
}

/** The first failed trial as the testcase's `<failure>` (a failed task) or `<error>` (every counted trial errored). */
function addFirstFailure(node: TestCase, result: TaskResult, task: TaskTrials): void {
  const failure = failureOf(result);
  if (failure === null) return;
  const message = `${trialOrdinal(result, task)}: ${failureHeadline(failure)}`;
  if (task.status === "failed") {
    const details = failure.kind === "checks" ? checkDetails(failure.failed).join("\n\n") : errorDetails(result, failure);
    node.failure(message, failure.kind === "checks" ? "check" : failureType(failure)).stacktrace(cdataSafe(details));
  } else {
    node.error(message, failureType(failure), cdataSafe(errorDetails(result, failure)));
  }
}

function rerunEntry(result: TaskResult, task: TaskTrials, kind: RerunKind, runDirShown: string | null) {
  const failure = failureOf(result)!;
  const checks = failure.kind === "checks";
  return {
    kind,
    message: `${trialOrdinal(result, task)}: ${failureHeadline(failure)}`,
    type: checks ? "check" : failureType(failure),
    stackTrace: cdataSafe(checks ? checkDetails(failure.failed).join("\n\n") : errorDetails(result, failure)),
    systemOut: cdataSafe(systemOut(result, runDirShown)),
    systemErr: "",
  };
}

/** One line per trial, by repeat: `trial 2/5: failed — check "unit tests" failed (exit code 1): …`. */
export function trialLines(task: TaskTrials): string[] {
  const entries = [
    ...task.results.map((r) => ({ repeat: r.trial?.repeat ?? 1, line: resultLine(r, task) })),
    ...task.unfinished.map((u) => ({ repeat: u.trial?.repeat ?? 1, line: `${trialOrdinal(u, task)}: ${unfinishedText(u)}` })),
  ];
  return entries.sort((a, b) => a.repeat - b.repeat).map((e) => e.line);
}

function resultLine(result: TaskResult, task: TaskTrials): string {
  const failure = failureOf(result);
  const head = `${trialOrdinal(result, task)}: ${result.status}`;
  return failure === null ? head : `${head} — ${failureHeadline(failure)}`;
}

/** A repeated task's figures, name → value: verdict, counts, pass rate and interval, pass@k, pass^k, spreads, cost per pass. */
export function trialsFigures(task: TaskTrials): [string, string][] {
  const f = task.figures;
  const rate = f.passRate;
  return [
    ["status", task.status],
    ["trials", String(task.planned)],
    ["counted", String(f.trials)],
    ["passes", String(f.passes)],
    ["gateDecided", String(task.unfinished.filter((u) => u.state === "gate_decided").length)],
    ["gate", formatGate(task.gate)],
    ["gatePassed", task.gatePassed === null ? "undecided" : String(task.gatePassed)],
    ["passRate", rate === null ? "none" : formatRate(rate.rate)],
    ["passRateLower", rate === null ? "none" : formatRate(rate.interval.lower)],
    ["passRateUpper", rate === null ? "none" : formatRate(rate.interval.upper)],
    ...f.passAt.map((at): [string, string] => [`pass@${at.k}`, formatAtK(at)]),
    ...f.passPower.map((at): [string, string] => [`pass^${at.k}`, formatAtK(at)]),
    ["flaky", String(f.flaky)],
    ["costPerPass", formatCostPerPass(f.costPerPass)],
    ...spreadFigures("steps", f.steps, 2),
    ...spreadFigures("tokens", f.tokens, 1),
    ...spreadFigures("costUsd", f.costUsd, 6),
    ...spreadFigures("cacheHitRate", f.cacheHitRate, 4),
  ];
}

/** `<name>.mean`, `.sd` (`none` below two values), `.min`, `.max`; nothing when no trial has the measure. */
function spreadFigures(name: string, spread: Spread | null, digits: number): [string, string][] {
  if (spread === null) return [];
  const show = (v: number) => String(Number(v.toFixed(digits)));
  return [
    [`${name}.mean`, show(spread.mean)],
    [`${name}.sd`, spread.sd === null ? "none" : show(spread.sd)],
    [`${name}.min`, show(spread.min)],
    [`${name}.max`, show(spread.max)],
  ];
}
