/**
 * The trend of each task over a run history (trend-history.ts), and the quarantine it proposes —
 * pure arithmetic over the last `last` runs (the **window**, oldest first):
 *
 *   runs          runs of the window in which the task has a verdict (absent or unfinished: left out)
 *   runsPassed    of them, runs whose verdict (its gate's) was passed
 *   passRate      passes ÷ counted trials pooled over those runs, with its Wilson 95 % interval
 *   flakyRuns     runs in which its trials both passed and failed (issue 21's flaky: needs repeats)
 *   flips         changes of verdict (passed ↔ not passed) between consecutive runs of it: the
 *                 flakiness one-trial runs show, as no single run of one trial can be flaky
 *   cost          per run, dollars per counted trial (null when a trial is unpriced) and cost per
 *                 pass; over the window, the first and last runs' cost per trial and the change,
 *                 and the cost per pass pooled (all dollars ÷ all passes)
 *
 * **Proposed for quarantine**: flaky in at least `flakyIn` of the window's runs, or at least
 * `flips` flips in it. A task that never passed is broken, not flaky, and never proposed (both
 * rules need a pass). **Could leave quarantine**: quarantined in the newest run and passed every
 * run of the window, at least `flakyIn` of them.
 */
import { taskKey, compareTasks } from "../tasks/task-key.js";
import { passRate, type PassRate } from "../trials/trial-figures.js";
import type { HistoryRun } from "./trend-history.js";
import type { TaskTrials } from "./task-trials.js";
import type { CostPerPass } from "../trials/trial-figures.js";

/** The window and the proposal's rule (`--last`, `--flaky-in`, `--flips`). */
export interface TrendRule {
  /** How many of the newest runs the figures cover. */
  last: number;
  /** Propose a task flaky in at least this many of the window's runs. */
  flakyIn: number;
  /** Propose a task whose verdict flipped at least this many times in the window. */
  flips: number;
}

export const DEFAULT_TREND_RULE: TrendRule = { last: 10, flakyIn: 2, flips: 3 };

/** A task in one run of the window. */
export interface TrendPoint {
  runId: string;
  /** Its verdict in that run; null when the run does not hold the task or has no verdict for it yet. */
  status: TaskTrials["status"] | null;
  flaky: boolean;
  trials: number;
  passes: number;
  /** Dollars per counted trial; null when a trial is unpriced or none counted. */
  costPerTrialUsd: number | null;
  costPerPass: CostPerPass | null;
}

export interface TaskTrend {
  suite: string;
  id: string;
  /** One point per run of the window, oldest first. */
  history: TrendPoint[];
  runs: number;
  runsPassed: number;
  trials: number;
  passes: number;
  passRate: PassRate | null;
  flakyRuns: number;
  flips: number;
  /** Cost per trial in its first and last runs of the window that have one, and the change (last ÷ first − 1; null when first is 0). */
  costPerTrial: { firstUsd: number; lastUsd: number; change: number | null } | null;
  /** All dollars of the window's counted trials ÷ their passes. */
  costPerPass: CostPerPass;
  /** Quarantined in the newest run of the window. */
  quarantined: boolean;
  /** Why it is proposed for quarantine; null when it is not. */
  proposed: string | null;
  /** Quarantined now, and passed every run of the window (at least `flakyIn`): it could leave. */
  couldLeave: boolean;
}

export interface Trend {
  rule: TrendRule;
  /** The window's runs, oldest first. */
  runs: { dir: string; runId: string; startedAt: string }[];
  /** How many runs were given (the window is the last `rule.last` of them). */
  given: number;
  tasks: TaskTrend[];
}

/** The trend of `history` (oldest first) under `rule`. */
export function trendOf(history: readonly HistoryRun[], rule: TrendRule): Trend {
  const window = history.slice(-rule.last);
  const keys = new Map<string, { suite: string; id: string }>();
  for (const run of window) for (const task of run.tasks) keys.set(taskKey(task), { suite: task.suite, id: task.id });
  const newest = window.at(-1);
  const tasks = [...keys.values()].sort(compareTasks).map((task) => {
    const history = window.map((run) => pointOf(run, run.tasks.find((t) => t.suite === task.suite && t.id === task.id)));
    const quarantined = newest?.tasks.find((t) => t.suite === task.suite && t.id === task.id)?.quarantine != null
      || (newest?.quarantine?.entries.some((e) => e.suite === task.suite && e.id === task.id) ?? false);
    return taskTrend(task, history, quarantined, rule);
  });
  return { rule, runs: window.map(({ dir, runId, startedAt }) => ({ dir, runId, startedAt })), given: history.length, tasks };
}

function pointOf(run: HistoryRun, task: TaskTrials | undefined): TrendPoint {
  if (task === undefined || task.status === "unfinished") {
    return { runId: run.runId, status: null, flaky: false, trials: 0, passes: 0, costPerTrialUsd: null, costPerPass: null };
  }
  const f = task.figures;
  const costs = task.results.map((r) => r.cost?.usd ?? null);
  const priced = costs.length > 0 && costs.every((c) => c !== null);
  return {
    runId: run.runId, status: task.status, flaky: f.flaky, trials: f.trials, passes: f.passes,
    costPerTrialUsd: priced ? (costs as number[]).reduce((s, c) => s + c, 0) / costs.length : null,
    costPerPass: f.costPerPass,
  };
}

function taskTrend(task: { suite: string; id: string }, history: TrendPoint[], quarantined: boolean, rule: TrendRule): TaskTrend {
  const ran = history.filter((p) => p.status !== null);
  const runsPassed = ran.filter((p) => p.status === "passed").length;
  const trials = ran.reduce((s, p) => s + p.trials, 0);
  const passes = ran.reduce((s, p) => s + p.passes, 0);
  const flakyRuns = ran.filter((p) => p.flaky).length;
  const flips = ran.slice(1).filter((p, i) => (p.status === "passed") !== (ran[i]!.status === "passed")).length;
  const proposed = flakyRuns >= rule.flakyIn ? `flaky in ${flakyRuns} of the last ${ran.length} runs`
    : flips >= rule.flips ? `passed and failed by turns: ${flips} flips in the last ${ran.length} runs (${runsPassed} passed)`
    : null;
  return {
    ...task, history, runs: ran.length, runsPassed, trials, passes, passRate: passRate(passes, trials), flakyRuns, flips,
    costPerTrial: costTrend(ran), costPerPass: pooledCostPerPass(ran), quarantined, proposed,
    couldLeave: quarantined && ran.length >= rule.flakyIn && runsPassed === ran.length && flakyRuns === 0,
  };
}

function costTrend(ran: readonly TrendPoint[]): TaskTrend["costPerTrial"] {
  const priced = ran.flatMap((p) => (p.costPerTrialUsd === null ? [] : [p.costPerTrialUsd]));
  if (priced.length === 0) return null;
  const firstUsd = priced[0]!;
  const lastUsd = priced.at(-1)!;
  return { firstUsd, lastUsd, change: firstUsd === 0 ? null : lastUsd / firstUsd - 1 };
}

/** All dollars ÷ all passes over the runs; unpriced when a run's trials are. */
function pooledCostPerPass(ran: readonly TrendPoint[]): CostPerPass {
  let spentUsd = 0;
  for (const point of ran) {
    if (point.costPerTrialUsd === null) return { kind: "unpriced" };
    spentUsd += point.costPerTrialUsd * point.trials;
  }
  const passes = ran.reduce((s, p) => s + p.passes, 0);
  return passes === 0 ? { kind: "no-pass", spentUsd } : { kind: "usd", usd: spentUsd / passes };
}
