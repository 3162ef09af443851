/**
 * stats.json's trial figures (issue 21): the schema and values of the per-task entries
 * (`taskTrials`: each task's counted trials, figures and gate verdict) and of the `trials` block
 * of each suite and the total (trial counts, pass rate with its interval, flaky tasks, cost per
 * pass, tasks by verdict). Built from task-trials.ts, so junit.xml and summary.md say the same.
 */
import { z } from "zod";
import { assertNever } from "../../core/errors.js";
import { costPerPass, passRate, type AtK, type CostPerPass, type PassRate, type Spread } from "../trials/trial-figures.js";
import { trialGateSchema } from "../trials/trial-gate.js";
import type { TaskTrials } from "./task-trials.js";

const count = z.number().int().nonnegative();
const proportion = z.number().min(0).max(1);

const passRateSchema = z.strictObject({
  rate: proportion.describe("passes ÷ counted trials."),
  lower: proportion.describe("Lower bound of the Wilson 95 % interval."),
  upper: proportion.describe("Upper bound of the Wilson 95 % interval."),
}).nullable().describe("The pass rate with its Wilson 95 % interval; null when no trial counts.");

const atKSchema = z.strictObject({
  k: z.number().int().positive(),
  value: proportion.nullable().describe("The unbiased estimate; null when there are fewer counted trials than k."),
  why: z.literal("n<k").optional().describe("Present when value is null: fewer counted trials than k."),
});

const spreadSchema = z.strictObject({
  count: count.describe("Counted trials that had the measure."),
  mean: z.number(),
  sd: z.number().nullable().describe("Sample standard deviation; null below two values."),
  min: z.number(),
  max: z.number(),
}).nullable().describe("Mean and spread over the counted trials; null when none had the measure.");

const costPerPassSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("usd"), usd: z.number().nonnegative().describe("Dollars spent on the counted trials ÷ passes.") }),
  z.strictObject({ kind: z.literal("no-pass"), spentUsd: z.number().nonnegative().describe("Dollars spent; no trial passed (never ∞ or 0).") }),
  z.strictObject({ kind: z.literal("unpriced") }),
]).describe("Cost per pass: usd, no-pass (nothing passed), or unpriced (a trial's cost is unknown).");

export const taskTrialsEntrySchema = z.strictObject({
  suite: z.string(),
  id: z.string(),
  variant: z.string().optional().describe("The matrix cell (--matrix) these are the trials of; absent: the task as written."),
  status: z.enum(["passed", "failed", "errored", "stopped", "unfinished"]).describe("The task's verdict: its one trial's status, or for several its gate's (errored/stopped when no counted trial ran its checks); unfinished while trials are pending and the gate is undecided."),
  trials: z.number().int().positive().describe("Trials planned."),
  counted: count.describe("Trials with a result (passed, failed, errored, stopped): n."),
  passes: count.describe("Of them, passed: c."),
  gateDecided: count.describe("Trials the early stop skipped (gate decided): left out of n."),
  pending: count.describe("Trials without a result yet (interrupted, not started, not selected): left out of n."),
  gate: trialGateSchema.describe("What makes the task pass: every counted trial, or a rate judged on itself or its interval's lower bound."),
  gatePassed: z.boolean().nullable().describe("The gate's verdict; null while pending trials could still change it."),
  passRate: passRateSchema,
  passAt: z.array(atKSchema).describe("pass@k = 1 − C(n−c, k)/C(n, k) for each k of --pass-at."),
  passPower: z.array(atKSchema).describe("pass^k = C(c, k)/C(n, k) for each k of --pass-at."),
  steps: spreadSchema,
  tokens: spreadSchema,
  costUsd: spreadSchema,
  cacheHitRate: spreadSchema,
  costPerPass: costPerPassSchema,
  flaky: z.boolean().describe("Both passed and failed among the counted trials."),
  quarantine: z.strictObject({
    reason: z.string().nullable().describe("Why, as the quarantine file says; null when it gives no reason."),
  }).nullable().default(null).describe("Set when the run's quarantine list (--quarantine) names the task: a status other than passed is reported but does not fail the run; null otherwise."),
});

export const trialAggregateSchema = z.strictObject({
  counted: count.describe("Counted trials (with a result) of the tasks."),
  passes: count.describe("Of them, passed."),
  gateDecided: count.describe("Trials the early stop skipped: left out."),
  passRate: passRateSchema,
  flakyTasks: count.describe("Tasks that both passed and failed."),
  tasks: z.strictObject({ passed: count, failed: count, errored: count, stopped: count, unfinished: count }).describe("Tasks by their verdict (their gate's for repeated tasks)."),
  costPerPass: costPerPassSchema,
}).describe("The trials of the tasks: counts, pass rate, flaky tasks and cost per pass.");

export type TaskTrialsEntry = z.infer<typeof taskTrialsEntrySchema>;
export type TrialAggregate = z.infer<typeof trialAggregateSchema>;

/** A task's stats.json entry. */
export function taskTrialsEntry(task: TaskTrials): TaskTrialsEntry {
  const f = task.figures;
  const gateDecided = task.unfinished.filter((u) => u.state === "gate_decided").length;
  return {
    suite: task.suite,
    id: task.id,
    ...(task.variant !== null ? { variant: task.variant } : {}),
    status: task.status,
    trials: task.planned,
    counted: f.trials,
    passes: f.passes,
    gateDecided,
    pending: task.unfinished.length - gateDecided,
    gate: task.gate,
    gatePassed: task.gatePassed,
    passRate: rateEntry(f.passRate),
    passAt: f.passAt.map(atKEntry),
    passPower: f.passPower.map(atKEntry),
    steps: spreadEntry(f.steps),
    tokens: spreadEntry(f.tokens),
    costUsd: spreadEntry(f.costUsd),
    cacheHitRate: spreadEntry(f.cacheHitRate),
    costPerPass: costEntry(f.costPerPass),
    flaky: f.flaky,
    quarantine: task.quarantine,
  };
}

/** The trials block of a suite or the run: over every counted trial of its tasks. */
export function trialAggregate(tasks: readonly TaskTrials[]): TrialAggregate {
  const counted = tasks.reduce((sum, t) => sum + t.figures.trials, 0);
  const passes = tasks.reduce((sum, t) => sum + t.figures.passes, 0);
  const verdicts = { passed: 0, failed: 0, errored: 0, stopped: 0, unfinished: 0 };
  for (const task of tasks) verdicts[task.status] += 1;
  return {
    counted,
    passes,
    gateDecided: tasks.reduce((sum, t) => sum + t.unfinished.filter((u) => u.state === "gate_decided").length, 0),
    passRate: rateEntry(passRate(passes, counted)),
    flakyTasks: tasks.filter((t) => t.figures.flaky).length,
    tasks: verdicts,
    costPerPass: costEntry(costPerPass(tasks.flatMap((t) => t.results.map((r) => r.cost?.usd ?? null)), passes)),
  };
}

function rateEntry(rate: PassRate | null): TaskTrialsEntry["passRate"] {
  return rate === null ? null : { rate: rate.rate, lower: rate.interval.lower, upper: rate.interval.upper };
}

function atKEntry(at: AtK): TaskTrialsEntry["passAt"][number] {
  return at.value === null ? { k: at.k, value: null, why: at.why } : { k: at.k, value: at.value };
}

function spreadEntry(spread: Spread | null): TaskTrialsEntry["steps"] {
  return spread === null ? null : { count: spread.count, mean: spread.mean, sd: spread.sd, min: spread.min, max: spread.max };
}

function costEntry(cost: CostPerPass): TaskTrialsEntry["costPerPass"] {
  switch (cost.kind) {
    case "usd":
      return { kind: "usd", usd: cost.usd };
    case "no-pass":
      return { kind: "no-pass", spentUsd: cost.spentUsd };
    case "unpriced":
      return { kind: "unpriced" };
    default:
      return assertNever(cost);
  }
}
