/**
 * What a finished run becomes on GitHub, decided in pure functions: the step's outputs (report
 * paths, outcome counts, tokens, cache hit rate, cost, and over trials: counted trials, flaky
 * tasks, the pass rate — task-trials.ts), whether the step fails under `fail-on`, and
 * the annotations (an error per failed or errored task on its task file, a warning per task
 * with policy denials, one error per provider that refused the run, a notice with the totals).
 */
import { join, relative, sep } from "node:path";
import type { ReportFiles } from "../runner/run-dir/run-dir.js";
import { type TaskResult, type TaskTrialPlan, type UnfinishedTask } from "../runner/run-dir/task-result.js";
import { taskKey } from "../runner/tasks/task-key.js";
import { formatCostTotal, sumCosts, sumResultStats } from "../runner/pricing/cost-figures.js";
import { failureHeadline, failureOf } from "../runner/reports/failure-model.js";
import { failsGate, formatGate, runTrialOutputs, selectedTaskVerdicts } from "../runner/reports/task-trials.js";
import type { QuarantineRecord } from "../runner/reports/report-meta.js";
import { refusalMessage } from "../runner/reports/refusal-text.js";
import type { ProviderRefusal } from "../core/errors.js";
import type { FailOn } from "./action-inputs.js";
import { counted } from "../core/counted.js";

/** The part of a run's outcome the action reports. */
export interface ActionRunOutcome {
  results: readonly TaskResult[];
  /** The run was interrupted (the job was cancelled or timed out). */
  interrupted: boolean;
  /** Tasks that were running when the interrupt came (they continue on a re-run). */
  interruptedTasks: number;
  reports: ReportFiles;
  runDir: string;
  /** The run's trials without a result; what the interrupted ones spent counts in the token and cost outputs. */
  unfinished?: readonly UnfinishedTask[];
  /** The selected tasks' planned trials and gates: the counts go by each task's gate. */
  plans?: readonly TaskTrialPlan[];
  /** The quarantine list (the `quarantine` input): those tasks' failures do not fail the step. */
  quarantine?: QuarantineRecord;
  /** The providers that refused the run (a dead key, a spent quota): their trials wait unfinished; the step fails (unless fail-on never). */
  refusals?: readonly ProviderRefusal[];
}

export type ActionOutputName =
  | "junit" | "stats" | "summary" | "run-dir" | "passed" | "failed" | "errored" | "stopped" | "interrupted"
  | "cache-hit-rate" | "input-tokens" | "cache-read-tokens" | "cache-write-tokens" | "output-tokens" | "reasoning-tokens" | "cost-usd"
  | "trials" | "flaky" | "pass-rate" | "changes";

/** The step's outputs, as the strings `core.setOutput` writes. */
export function actionOutputs(outcome: ActionRunOutcome): Record<ActionOutputName, string> {
  // passed/failed/errored/stopped count tasks by their gate (a task of one trial: its status).
  const tasks = selectedTaskVerdicts(outcome);
  const count = (status: string) => String(tasks.filter((t) => t.status === status).length);
  const stats = sumResultStats(spending(outcome).flatMap((s) => (s.stats ? [s.stats] : [])));
  const trials = runTrialOutputs(outcome.results, { unfinished: outcome.unfinished ?? [], ...(outcome.plans ? { trialPlans: outcome.plans } : {}) });
  return {
    junit: outcome.reports.junit,
    stats: outcome.reports.stats,
    summary: outcome.reports.summary,
    "run-dir": outcome.runDir,
    passed: count("passed"),
    failed: count("failed"),
    errored: count("errored"),
    stopped: count("stopped"),
    interrupted: String(outcome.interruptedTasks),
    "cache-hit-rate": stats ? stats.cacheHitRate.toFixed(4) : "0",
    "input-tokens": String(stats?.inputTokens ?? 0),
    "cache-read-tokens": String(stats?.cacheReadTokens ?? 0),
    "cache-write-tokens": String(stats?.cacheWriteTokens ?? 0),
    "output-tokens": String(stats?.outputTokens ?? 0),
    "reasoning-tokens": String(stats?.reasoningTokens ?? 0),
    "cost-usd": costOutput(outcome),
    trials: String(trials.trials),
    flaky: String(trials.flaky),
    "pass-rate": trials.passRate === null ? "0" : trials.passRate.toFixed(4),
    changes: changesOutput(outcome),
  };
}

/** Each trial's changes.patch, one path a line (under the run directory), by task and trial; "" when none was made. */
function changesOutput(outcome: ActionRunOutcome): string {
  return outcome.results.flatMap((r) => (r.changes?.path ? [join(outcome.runDir, r.changes.path)] : [])).join("\n");
}

/** The stats and cost of every result, and what each task without one spent before the run stopped. */
function spending(outcome: ActionRunOutcome): { stats: TaskResult["stats"]; cost?: TaskResult["cost"] }[] {
  const unfinished = (outcome.unfinished ?? []).flatMap((u) => (u.spent ? [{ stats: u.spent.stats, ...(u.spent.cost ? { cost: u.spent.cost } : {}) }] : []));
  return [...outcome.results, ...unfinished];
}

/**
 * Dollars to six places (the priced part when some requests had no price); `unpriced` when none
 * had one, never 0; `0` only when nothing was counted at all (no request made).
 */
function costOutput(outcome: ActionRunOutcome): string {
  const total = sumCosts(spending(outcome));
  if (total === null) return "0";
  return total.usd === null ? "unpriced" : total.usd.toFixed(6);
}

/**
 * Why the step fails under `failOn`, or null when it passes. With `stoppedOk` (the `stopped-ok`
 * input, as `--stopped-ok`) a task stopped on a budget is not a failure.
 */
export function stepFailure(failOn: FailOn, outcome: ActionRunOutcome, opts: { stoppedOk: boolean } = { stoppedOk: false }): string | null {
  const tasks = selectedTaskVerdicts(outcome);
  // A quarantined task's failure is reported (annotations, summary) but fails the step under no fail-on.
  const notPassed = tasks.filter((t) => failsGate(t, opts));
  const errored = tasks.filter((t) => t.status === "errored" && t.quarantine === null);
  // A provider that refused the run: the run could not continue (the CLI's exit 3), whatever the tasks so far.
  const refused = (outcome.refusals ?? []).map(refusalMessage).join("; ") || null;
  switch (failOn) {
    case "never":
      return null;
    case "error":
      if (outcome.interrupted) return "the run was interrupted before it completed";
      if (refused) return refused;
      return errored.length ? `${counted(errored.length, "task")} errored: ${errored.map(taskKey).join(", ")}` : null;
    case "failure":
      if (outcome.interrupted) return "the run was interrupted before it completed";
      if (refused) return refused;
      return notPassed.length ? `${counted(notPassed.length, "task")} did not pass: ${notPassed.map(taskKey).join(", ")}` : null;
    default:
      return assertNever(failOn);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected fail-on ${String(value)}`);
}

/** One workflow command: `::error title=…,file=…::message`. */
export interface Annotation {
  level: "error" | "warning" | "notice";
  message: string;
  title?: string;
  /** Relative to the repository (the workspace); absent for a file outside it. */
  file?: string;
  /** Where in `file` (1-based), when the message is about a place in it. */
  line?: number;
  column?: number;
}

/** The annotations of a run, in task order; `workspace` is the repository's checkout. */
export function runAnnotations(outcome: ActionRunOutcome, workspace: string): Annotation[] {
  const annotations: Annotation[] = [];
  // By task, as its gate judged it: an error for a task that did not pass (its first failed
  // trial's reason), a warning for a flaky one that passed; denials per trial that met them.
  for (const task of selectedTaskVerdicts(outcome)) {
    const file = repositoryPath(task.file, workspace);
    const at = { title: taskKey(task), ...(file ? { file } : {}) };
    const repeated = task.planned > 1;
    const failed = task.results.filter((r) => r.status !== "passed");
    const label = (r: TaskResult) => (repeated ? `trial ${r.trial?.repeat ?? 1}/${task.planned}: ` : "");
    if (task.status !== "passed" && task.status !== "unfinished" && failed[0]) {
      const more = failed.length > 1 ? ` (and ${counted(failed.length - 1, "other failed trial")})` : "";
      // Quarantined: a warning, as it does not fail the step.
      const quarantined = task.quarantine === null ? "" : `quarantined${task.quarantine.reason === null ? "" : ` (${task.quarantine.reason})`}, does not fail the step: `;
      annotations.push({ level: quarantined ? "warning" : "error", message: `${quarantined}${label(failed[0])}${failureMessage(failed[0])}${more}`, ...at });
    } else if (task.status === "passed" && failed.length > 0) {
      annotations.push({ level: "warning", message: `flaky: ${failed.length} of ${task.results.length} trials failed, the gate (${formatGate(task.gate)}) passed; first: ${label(failed[0]!)}${failureMessage(failed[0]!)}`, ...at });
    }
    for (const result of task.results) {
      if (result.policyDenials.count > 0) annotations.push({ level: "warning", message: `${label(result)}${denialMessage(result)}`, ...at });
    }
  }
  // Said once per provider, not once per trial it stopped.
  for (const refusal of outcome.refusals ?? []) annotations.push({ level: "error", title: `rhema: ${refusal.provider} refused the run`, message: refusalMessage(refusal) });
  annotations.push({ level: "notice", title: "rhema", message: totalsMessage(outcome) });
  return annotations;
}

/** The failure's label and full reason (failure-model.ts), as every report says it. */
function failureMessage(result: TaskResult): string {
  const failure = failureOf(result);
  return failure === null ? `task ${result.status}` : failureHeadline(failure);
}

function denialMessage(result: TaskResult): string {
  const calls = result.policyDenials.examples.map((d) => `${d.tool} (${d.rule ?? "default"}: ${d.reason})`);
  const more = result.policyDenials.count - calls.length;
  return `${counted(result.policyDenials.count, "tool call")} denied by policy: ${calls.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}

function totalsMessage(outcome: ActionRunOutcome): string {
  const o = actionOutputs(outcome);
  const tasks = Number(o.passed) + Number(o.failed) + Number(o.errored) + Number(o.stopped);
  const parts = [`${counted(tasks, "task")}${o.trials !== String(tasks) ? ` (${counted(Number(o.trials), "trial")})` : ""}: ${o.passed} passed, ${o.failed} failed, ${o.errored} errored${o.stopped !== "0" ? `, ${o.stopped} stopped on a budget` : ""}`];
  if (outcome.interrupted) parts.push(`interrupted with ${counted(Number(o.interrupted), "task")} running (re-run the job to continue)`);
  const cost = sumCosts(spending(outcome));
  if (cost !== null) parts.push(`cost ${formatCostTotal(cost)}`);
  parts.push(`tokens in ${o["input-tokens"]}, cache read ${o["cache-read-tokens"]}, cache write ${o["cache-write-tokens"]}, out ${o["output-tokens"]}${o["reasoning-tokens"] !== "0" ? ` (${o["reasoning-tokens"]} of them reasoning)` : ""}; cache hit rate ${o["cache-hit-rate"]}`);
  return parts.join("; ");
}

function repositoryPath(file: string, workspace: string): string | undefined {
  const rel = relative(workspace, file);
  if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return undefined;
  return rel.split(sep).join("/");
}
