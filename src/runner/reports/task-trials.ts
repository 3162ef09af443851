/**
 * A run's results grouped by task into `TaskTrials` (issue 21): each task's trials, which of them
 * count, their figures (trials/trial-figures.ts) and the task's verdict by its gate
 * (trials/trial-gate.ts). Every report (junit.xml, stats.json, summary.md, the Action's outputs)
 * reads a task's trials through this one place, so they agree.
 *
 * What counts in n: every trial with a result — passed, failed, errored and stopped (the last two
 * as not passed). Trials without one (interrupted, not started, not selected) and those the early
 * stop skipped (`gate_decided`) are left out of the figures.
 *
 * A task's status:
 *   one planned trial   that trial's status exactly, as before trials; unfinished while it has no result
 *   several             passed iff its gate passes on the counted trials, else failed — except that
 *                       a task whose counted trials all errored or stopped (none ran to its checks)
 *                       is errored (stopped when none errored): an outage, not a verdict on the agent
 *   not all finished    the gate's outcome decided already (every pending trial passing or every one
 *                       failing gives the same verdict): that verdict; else unfinished
 * A pure function of results + meta.
 */
import { trialKeyOf, type TrialEntry } from "../run-dir/run-dir.js";
import { assertNever } from "../../core/errors.js";
import { spentTokens } from "../../core/transcript-types.js";
import { countedStats } from "../pricing/cost-figures.js";
import { type TaskResult, type TaskStatus, type TaskTrialPlan, type UnfinishedTask } from "../run-dir/task-result.js";
import { baseTaskKey, compareTasks, taskKey } from "../tasks/task-key.js";
import { type ReportMeta } from "./report-meta.js";
import { compareTrials, trialLabel } from "../trials/trial-key.js";
import { costPerPass, isFlaky, passAtK, passPowerK, passRate, spreadOf, type AtK, type CostPerPass, type PassRate, type Spread } from "../trials/trial-figures.js";
import { EVERY_TRIAL, gateDecision, gatePasses, type TrialGate } from "../trials/trial-gate.js";

/** A task's status over its trials: a result's status, or unfinished (pending trials, gate undecided). */
export type TaskVerdict = TaskStatus | "unfinished";

/** The figures of a task's counted trials. */
export interface TrialFigures {
  /** n: counted trials. */
  trials: number;
  /** c: of them, passed. */
  passes: number;
  /** c/n with its Wilson 95 % interval; null when no trial counts. */
  passRate: PassRate | null;
  /** pass@k for each asked k (meta.passAt), in that order. */
  passAt: AtK[];
  /** pass^k for each asked k. */
  passPower: AtK[];
  /** Mean and spread of each measure over the counted trials that have it; null when none has. */
  steps: Spread | null;
  tokens: Spread | null;
  costUsd: Spread | null;
  cacheHitRate: Spread | null;
  /** Dollars spent on the counted trials ÷ passes. */
  costPerPass: CostPerPass;
  /** Both passed and failed among the counted trials. */
  flaky: boolean;
}

/** One task of the run with its trials; with a matrix, one (task, variant) pair: a cell's task. */
export interface TaskTrials {
  suite: string;
  id: string;
  /** The matrix cell whose trials these are; null: the task as written (no matrix). */
  variant: string | null;
  file: string;
  /** Trials planned (the manifest's; at least as many as it has results and unfinished entries). */
  planned: number;
  gate: TrialGate;
  /** Its trials with a result, by repeat (compareTrials): the counted trials. */
  results: TaskResult[];
  /** Its trials without one, by repeat: pending (interrupted, not started, not selected) and gate-decided ones. */
  unfinished: UnfinishedTask[];
  figures: TrialFigures;
  /** The gate's verdict on the counted trials; null while it is undecided (pending trials could change it). */
  gatePassed: boolean | null;
  status: TaskVerdict;
  /** Set when the run's quarantine list names the task (meta.quarantine): its failure is reported but does not fail the gate. */
  quarantine: { reason: string | null } | null;
}

/** A result's or unfinished entry's trial key (run-dir.ts; absent `trial`: the task's one trial, repeat 1). */
export { trialKeyOf };

/** The key of the (task, variant) pair a result or unfinished entry belongs to: `suite/id`, `suite/id@variant`. */
export function cellKeyOf(entry: TrialEntry): string {
  return taskKey(trialKeyOf(entry));
}

/** `suite/id` for a task's only trial, `suite/id#3` for one of several (trial-key.ts). */
export function trialLabelOf(entry: TrialEntry, task: Pick<TaskTrials, "planned">): string {
  return trialLabel(trialKeyOf(entry), { repeats: task.planned, variants: entry.trial?.variant != null });
}

/** `trial 3/5`: a trial's place among its task's planned trials, for messages. */
export function trialOrdinal(entry: TrialEntry, task: Pick<TaskTrials, "planned">): string {
  return `trial ${trialKeyOf(entry).repeat}/${task.planned}`;
}

/** Whether any task of the run has more than one trial planned (the reports then show trial figures). */
export function hasRepeatedTasks(tasks: readonly TaskTrials[]): boolean {
  return tasks.some((task) => task.planned > 1);
}

/** The run's tasks with their trials, by suite then id; a task with neither results nor unfinished trials is absent. */
/**
 * The last grouping per meta object: the three reports of one write group the same results with
 * the same meta, and a run writes its reports after every trial (the cost would grow with the
 * square of the trials). Reused only when the results are the very same objects.
 */
const lastGrouping = new WeakMap<object, { results: readonly TaskResult[]; tasks: TaskTrials[] }>();

export function groupTaskTrials(results: readonly TaskResult[], meta: Pick<ReportMeta, "trialPlans" | "unfinished" | "passAt" | "quarantine">): TaskTrials[] {
  const last = lastGrouping.get(meta);
  if (last !== undefined && sameResults(last.results, results)) return last.tasks;
  const tasks = groupTaskTrialsAfresh(results, meta);
  lastGrouping.set(meta, { results: [...results], tasks });
  return tasks;
}

/** The same result objects, in any order (each report sorts its own copy). */
function sameResults(a: readonly TaskResult[], b: readonly TaskResult[]): boolean {
  if (a.length !== b.length) return false;
  const known = new Set(a);
  return b.every((r) => known.has(r));
}

function groupTaskTrialsAfresh(results: readonly TaskResult[], meta: Pick<ReportMeta, "trialPlans" | "unfinished" | "passAt" | "quarantine">): TaskTrials[] {
  const plans = new Map<string, TaskTrialPlan>((meta.trialPlans ?? []).map((plan) => [taskKey(plan), plan]));
  // A quarantine entry names a task (`suite/id`): every variant of it.
  const quarantined = new Map((meta.quarantine?.entries ?? []).map((entry) => [baseTaskKey(entry), { reason: entry.reason }]));
  const byTask = new Map<string, { suite: string; id: string; variant: string | null; file: string; results: TaskResult[]; unfinished: UnfinishedTask[] }>();
  const entryOf = (t: TrialEntry & { file: string }) => {
    const key = cellKeyOf(t);
    let entry = byTask.get(key);
    if (entry === undefined) byTask.set(key, (entry = { suite: t.suite, id: t.id, variant: trialKeyOf(t).variant, file: t.file, results: [], unfinished: [] }));
    return entry;
  };
  for (const result of results) entryOf(result).results.push(result);
  for (const task of meta.unfinished ?? []) entryOf(task).unfinished.push(task);
  const ks = meta.passAt ?? [];
  return [...byTask.values()].sort(compareTasks).map((entry) => {
    const plan = plans.get(taskKey(entry));
    const ordered = [...entry.results].sort((a, b) => compareTrials(trialKeyOf(a), trialKeyOf(b)));
    const unfinished = [...entry.unfinished].sort((a, b) => compareTrials(trialKeyOf(a), trialKeyOf(b)));
    const planned = Math.max(plan?.trials ?? 1, ordered.length + unfinished.length);
    const gate = plan?.gate ?? EVERY_TRIAL;
    const figures = trialFigures(ordered, ks);
    const gateDecided = unfinished.filter((u) => u.state === "gate_decided").length;
    const pending = planned - ordered.length - gateDecided;
    const gatePassed = gateVerdict(gate, figures, pending);
    return {
      suite: entry.suite, id: entry.id, variant: entry.variant, file: entry.file, planned, gate,
      results: ordered, unfinished, figures, gatePassed,
      status: taskStatus(planned, ordered, gatePassed),
      quarantine: quarantined.get(baseTaskKey(entry)) ?? null,
    };
  });
}

/** The figures of counted trials (`results`, every one counts) for the asked k's. */
export function trialFigures(results: readonly TaskResult[], ks: readonly number[]): TrialFigures {
  const n = results.length;
  const c = results.filter((r) => r.status === "passed").length;
  const withStats = results.flatMap((r) => (r.stats === null ? [] : [r.stats]));
  return {
    trials: n,
    passes: c,
    passRate: passRate(c, n),
    passAt: ks.map((k) => passAtK(c, n, k)),
    passPower: ks.map((k) => passPowerK(c, n, k)),
    steps: spreadOf(results.map((r) => r.steps)),
    tokens: spreadOf(withStats.map((s) => spentTokens(countedStats(s)))),
    costUsd: spreadOf(results.flatMap((r) => (r.cost?.usd == null ? [] : [r.cost.usd]))),
    cacheHitRate: spreadOf(withStats.map((s) => s.cacheHitRate)),
    // A trial without a cost record (transcript off, an older rhema) is unpriced: its dollars are unknown.
    costPerPass: costPerPass(results.map((r) => r.cost?.usd ?? null), c),
    flaky: isFlaky(c, n),
  };
}

/** The gate's verdict: on the counted trials when none is pending, else only once the pending ones cannot change it. */
function gateVerdict(gate: TrialGate, figures: TrialFigures, pending: number): boolean | null {
  const { passes, trials } = figures;
  if (pending <= 0) return trials === 0 ? null : gatePasses(gate, passes, trials);
  const decision = gateDecision(gate, { passes, counted: trials, planned: trials + pending });
  return decision.decided ? decision.passed : null;
}

function taskStatus(planned: number, results: readonly TaskResult[], gatePassed: boolean | null): TaskVerdict {
  if (planned === 1) return results[0]?.status ?? "unfinished";
  if (gatePassed === null) return "unfinished";
  if (gatePassed) return "passed";
  const ranChecks = results.some((r) => r.status === "passed" || r.status === "failed");
  if (ranChecks || results.length === 0) return "failed";
  return results.some((r) => r.status === "errored") ? "errored" : "stopped";
}

/** Formats an estimate over k draws: the value to 3 decimals, or `n<k`. */
export function formatAtK(at: AtK): string {
  return at.value === null ? at.why : formatRate(at.value);
}

/** A proportion to 3 decimals, trailing zeros kept (`0.600`). */
export function formatRate(value: number): string {
  return value.toFixed(3);
}

/** Cost per pass as reports print it: `$0.0123`, `no pass`, `unpriced`. */
export function formatCostPerPass(cost: CostPerPass): string {
  switch (cost.kind) {
    case "usd":
      return `$${cost.usd.toFixed(4)}`;
    case "no-pass":
      return "no pass";
    case "unpriced":
      return "unpriced";
    default:
      return assertNever(cost);
  }
}

/** The gate as text: `every trial`, `rate ≥ 0.8`, `lower bound ≥ 0.8`. */
export function formatGate(gate: TrialGate): string {
  switch (gate.kind) {
    case "every":
      return "every trial";
    case "rate":
      return `${gate.judgedOn === "rate" ? "rate" : "lower bound"} >= ${gate.min}`;
    default:
      return assertNever(gate);
  }
}

/** What a run's edges judge it by: its selected trials' results, the trials without one, each selected task's plan. */
export interface RunVerdictInput {
  results: readonly TaskResult[];
  unfinished?: readonly UnfinishedTask[];
  /** The selected tasks' planned trials and gates; absent: each task one trial, the default gate. */
  plans?: readonly TaskTrialPlan[];
  /** The run's quarantine list (`--quarantine`); absent: none. */
  quarantine?: ReportMeta["quarantine"];
}

/**
 * The selected tasks, each with its verdict by its gate (a task of one trial: that trial's
 * status): what the exit code, the closing lines and the Action's counts go by.
 */
export function selectedTaskVerdicts(run: RunVerdictInput): TaskTrials[] {
  const selected = new Set(run.results.map(cellKeyOf));
  for (const plan of run.plans ?? []) selected.add(taskKey(plan));
  const unfinished = (run.unfinished ?? []).filter((u) => selected.has(cellKeyOf(u)) && u.state !== "not_selected");
  return groupTaskTrials(run.results, { unfinished, ...(run.plans ? { trialPlans: run.plans } : {}), ...(run.quarantine ? { quarantine: run.quarantine } : {}) });
}

/**
 * Whether a task fails the run's gate (the exit code, the Action's `fail-on: failure`): it did
 * not pass — unless it stopped on a budget with `stoppedOk`, or it is quarantined (its failure is
 * reported, and does not count).
 */
export function failsGate(task: Pick<TaskTrials, "status" | "quarantine">, opts: { stoppedOk: boolean }): boolean {
  if (task.status === "passed" || task.quarantine !== null) return false;
  return !(task.status === "stopped" && opts.stoppedOk);
}

/**
 * The run's figures over trials, for the Action's outputs: counted trials, flaky tasks, and the
 * pass rate (passed ÷ counted trials over the whole run; null when no trial counts).
 */
export interface RunTrialOutputs {
  trials: number;
  flaky: number;
  passRate: number | null;
}

export function runTrialOutputs(results: readonly TaskResult[], meta: Pick<ReportMeta, "trialPlans" | "unfinished" | "passAt" | "quarantine">): RunTrialOutputs {
  const tasks = groupTaskTrials(results, meta);
  const trials = tasks.reduce((sum, t) => sum + t.figures.trials, 0);
  const passes = tasks.reduce((sum, t) => sum + t.figures.passes, 0);
  return { trials, flaky: tasks.filter((t) => t.figures.flaky).length, passRate: trials === 0 ? null : passes / trials };
}
