/**
 * `stats.json`: the machine-readable account of a run — counts, durations, steps, policy
 * denials, the sandbox, TranscriptStats and cost per trial, per suite and in total, and the price
 * tables used; and per task, suite and in total the trials' figures (stats-trials.ts). Its JSON Schema is published
 * as `schema/stats.schema.json`, generated from `statsReportSchema`. Built by a pure function of
 * results + meta, so merged shards and an unsharded run give the same file.
 */
import { z } from "zod";
import { priceSources, sumCosts, sumResultStats } from "../pricing/cost-figures.js";
import { trialAggregate, trialAggregateSchema, taskTrialsEntry, taskTrialsEntrySchema } from "./stats-trials.js";
import { groupTaskTrials, trialKeyOf } from "./task-trials.js";
import { compareTrials } from "../trials/trial-key.js";
import { priceSourceSchema, resultStatsSchema, resultWorkspaceSchema, spentBudgetSchema, taskCostSchema, taskSandboxSchema, taskSpendSchema, type TaskResult, type TaskSpend, type UnfinishedTask } from "../run-dir/task-result.js";
import { compareTasks } from "../tasks/task-key.js";
import { type ReportMeta } from "./report-meta.js";

export const STATS_REPORT_VERSION = 1;

const count = z.number().int().nonnegative();

const statusCountsSchema = z.strictObject({
  tasks: count.describe("Tasks with a result (passed + failed + errored + stopped)."),
  passed: count,
  failed: count,
  errored: count,
  stopped: count.default(0).describe("Tasks stopped on a budget (a run with a larger one continues them): neither failed nor errored."),
  skipped: count.describe("Tasks left out by --filter or --tag."),
  interrupted: count.default(0).describe("Tasks of the run that were running when it was interrupted (no result yet)."),
  notStarted: count.default(0).describe("Tasks of the run not started yet: the run was interrupted first, or no run selected them."),
});

const sandboxAggregateSchema = z.strictObject({
  mode: z.enum(["bwrap", "none", "off"]).describe("The weakest sandbox any task's commands ran in: none (auto found bwrap unusable) before off before bwrap."),
  reason: z.string().optional().describe("Why commands ran unsandboxed (mode none): the probe's finding."),
  fix: z.string().optional().describe("What to do so that they run sandboxed (mode none)."),
  tasks: z.strictObject({ bwrap: count, none: count, off: count }).describe("Results (trials: a task's one trial is the task) by the sandbox their commands ran in."),
}).nullable().describe("The sandbox of the tasks' commands; null when no task recorded one.");

const aggregateSchema = z.strictObject({
  counts: statusCountsSchema,
  durationMs: count.describe("Sum of the tasks' durations, what interrupted tasks spent so far included."),
  steps: count.describe("Model steps, interrupted tasks' included."),
  policyDenials: count,
  resumed: count.describe("Resumes from checkpoints, summed."),
  stats: resultStatsSchema.nullable().describe("Summed TranscriptStats (interrupted tasks' so far included); null when no task had a transcript. costUsd/workerCostUsd null when no task had that priced."),
  sandbox: sandboxAggregateSchema.default(null),
  cost: z.strictObject({
    usd: z.number().nonnegative().nullable().describe("Σ priced dollars, the worker's and interrupted tasks' so far included; null when no task had a price (unpriced, not $0). A lower bound when unpricedRequests > 0."),
    workerUsd: z.number().nonnegative().describe("Of usd, the compaction workers' dollars."),
    unpricedRequests: count.describe("Requests with no known price."),
    tasks: count.describe("Tasks with a cost."),
    unpricedTasks: count.describe("Of them, tasks whose model has no known price."),
    simulatedTasks: count.describe("Of them, tasks whose usage came from the prompt-cache simulator: scripted tasks priced as a real model (priceAs), replays with --cassette-usage simulate."),
    replayedTasks: count.default(0).describe("Of them, tasks answered from cassettes (--cassette): their recorded usage priced, not money spent by the run."),
  }).nullable().default(null).describe("What the tasks cost; null when no result has a cost."),
  trials: trialAggregateSchema.optional(),
  workspaceDisk: z.strictObject({
    bytes: count.describe("Σ of the trials' workspace.diskBytes."),
    tasks: count.describe("Results (trials) with a disk figure."),
    mechanisms: z.strictObject({ copy: count, overlay: count, "fuse-overlayfs": count }).optional().describe("Those results by how their workspace was made: copied, or a layer over a shared base mounted with overlay or fuse-overlayfs."),
    copyReason: z.string().optional().describe("Why workspaces were copied although layers were asked for (--workspace-layers auto): the probe's finding."),
  }).nullable().default(null).describe("The disk the trials' workspaces hold (result.json's workspace.diskBytes, summed); null when no result has one."),
});

const trialSchema = z.strictObject({ repeat: z.number().int().positive(), variant: z.string().nullable() });

const taskEntrySchema = z.strictObject({
  suite: z.string(),
  id: z.string(),
  status: z.enum(["passed", "failed", "errored", "stopped"]),
  provider: z.string(),
  startedAt: z.string(),
  finishedAt: z.string(),
  durationMs: count,
  steps: count,
  resumed: count,
  policyDenials: count,
  stats: resultStatsSchema.nullable(),
  cost: taskCostSchema.nullable().default(null).describe("What the task cost (result.json's cost); null when it has none."),
  errorCode: z.string().nullable().describe("Why the agent failed, for errored tasks; budget for stopped ones."),
  budget: spentBudgetSchema.nullable().default(null).describe("The budget a stopped task stopped on: scope, measure, limit and what was spent."),
  failedChecks: z.array(z.string()).describe("Names of the checks that failed."),
  sandbox: taskSandboxSchema.nullable().default(null).describe("What the task's commands ran in; null for results of older rhemas."),
  workspace: resultWorkspaceSchema.nullable().default(null).describe("How the trial's workspace was made and the disk it holds (result.json's workspace); null when it has none."),
  trial: trialSchema.optional().describe("Which trial of its task this entry is: repeat from 1 and variant (null: none); absent for results made before trials."),
});

export const statsReportSchema = z.strictObject({
  version: z.literal(STATS_REPORT_VERSION),
  runId: z.string(),
  startedAt: z.string().describe("ISO time the run started (merged: the earliest shard's)."),
  finishedAt: z.string().describe("ISO time of the last write (merged: the latest shard's)."),
  wallTimeMs: count.describe("Time the run was running, summed over its resumes (merged: the longest shard's, as the shards of a matrix run side by side)."),
  shard: z.string().nullable().default(null).describe("The run's shard, i/n (--shard); null for an unsharded run and for merged reports."),
  shards: z.strictObject({
    count: z.number().int().positive().describe("n: how many shards the matrix had."),
    merged: z.array(z.string()).describe("i/n of each shard merged, by i."),
    missing: z.array(z.string()).describe("i/n of each shard that was not merged (report merge --allow-partial), by i; empty when complete."),
  }).nullable().default(null).describe("Merged reports of shards (report merge): which shards they hold; null for a run, and for a merge of unsharded runs."),
  prices: z.array(priceSourceSchema).default([]).describe("The price tables (version, pricing file) the tasks' costs were computed with."),
  total: aggregateSchema,
  suites: z.array(aggregateSchema.extend({ suite: z.string() })),
  tasks: z.array(taskEntrySchema).describe("One entry per trial with a result (a task's only trial, or each of its repeats), by suite, id and trial."),
  taskTrials: z.array(taskTrialsEntrySchema).default([]).describe("One entry per task: its trials' figures and its gate's verdict."),
  skipped: z.array(z.strictObject({
    suite: z.string(),
    id: z.string(),
    file: z.string(),
    reason: z.enum(["filter", "tag"]),
  })),
  unfinished: z.array(z.strictObject({
    suite: z.string(),
    id: z.string(),
    file: z.string(),
    trial: trialSchema.optional().describe("Which trial of its task; absent: the task's one trial (run directories made before trials)."),
    state: z.enum(["interrupted", "not_started", "not_selected", "gate_decided"]).describe("gate_decided: skipped by the early stop (left out of the figures)."),
    spent: taskSpendSchema.nullable().default(null).describe("What the task spent before the run stopped (from its checkpoint); null when nothing."),
    refusedBy: z.strictObject({
      provider: z.string().describe("The provider's registry name (anthropic, openai)."),
      reason: z.enum(["auth", "quota"]).describe("auth: it refused the key (401, 403); quota: the account's quota or credit is spent."),
    }).nullable().default(null).describe("The provider whose refusal of the run left this trial unfinished (the same command continues it once the key or quota is fixed); null: none did."),
  })).default([]).describe("The run's tasks without a result: the next run of the same command continues or starts them."),
  refusals: z.array(z.strictObject({
    provider: z.string().describe("The provider's registry name (anthropic, openai)."),
    reason: z.enum(["auth", "quota"]).describe("auth: it refused the key (401, 403); quota: the account's quota or credit is spent."),
    status: z.number().int().nullable().describe("The HTTP status; null for an error frame inside a stream."),
    kind: z.string().nullable().describe("The error's kind from the body (authentication_error, insufficient_quota), when given."),
    detail: z.string().nullable().describe("The body's human message, when given."),
  })).default([]).describe("Each provider that refused the run (its first refusal): its trials not started or interrupted are listed in unfinished with refusedBy; empty: none did."),
  quarantine: z.strictObject({
    file: z.string().describe("The quarantine file the run was given (absolute)."),
    entries: z.array(z.strictObject({
      suite: z.string(),
      id: z.string(),
      reason: z.string().nullable(),
    })).describe("The tasks it lists, as written (one the suite does not define included)."),
  }).nullable().default(null).describe("The quarantine list the run used (--quarantine; merged: the inputs' lists together); null without one."),
}).meta({
  title: "rhema run stats",
  description: "Counts, durations, steps, policy denials and transcript/cache stats of a rhema run.",
});

export type StatsReport = z.infer<typeof statsReportSchema>;
export type StatsAggregate = z.infer<typeof aggregateSchema>;

/** The published JSON Schema of `stats.json`. */
export function statsJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(statsReportSchema) as Record<string, unknown>;
}

/** The stats of a run; results in any order, reported by suite then id. */
export function buildStatsReport(results: readonly TaskResult[], meta: ReportMeta): StatsReport {
  const byTrial = (a: Parameters<typeof trialKeyOf>[0], b: Parameters<typeof trialKeyOf>[0]) => compareTrials(trialKeyOf(a), trialKeyOf(b));
  const ordered = [...results].sort(byTrial);
  const skipped = [...(meta.skipped ?? [])].sort(compareTasks);
  const unfinished = [...(meta.unfinished ?? [])].sort(byTrial);
  const tasks = groupTaskTrials(ordered, meta);
  const suiteNames = [...new Set([...ordered, ...skipped, ...unfinished].map((entry) => entry.suite))].sort();
  return {
    version: STATS_REPORT_VERSION,
    runId: meta.runId,
    startedAt: meta.startedAt,
    finishedAt: meta.finishedAt,
    wallTimeMs: Math.round(meta.wallTimeMs ?? (Math.max(0, Date.parse(meta.finishedAt) - Date.parse(meta.startedAt)) || 0)),
    shard: meta.shard ?? null,
    shards: meta.shards ? { count: meta.shards.count, merged: [...meta.shards.merged], missing: [...meta.shards.missing] } : null,
    prices: priceSources(ordered),
    total: { ...aggregateResults(ordered, skipped.length, unfinished), trials: trialAggregate(tasks) },
    suites: suiteNames.map((suite) => ({
      suite,
      ...aggregateResults(
        ordered.filter((r) => r.suite === suite),
        skipped.filter((s) => s.suite === suite).length,
        unfinished.filter((u) => u.suite === suite),
      ),
      trials: trialAggregate(tasks.filter((t) => t.suite === suite)),
    })),
    tasks: ordered.map(taskEntry),
    taskTrials: tasks.map(taskTrialsEntry),
    skipped: skipped.map(({ suite, id, file, reason }) => ({ suite, id, file, reason })),
    unfinished: unfinished.map(({ suite, id, file, trial, state, spent, refusedBy }) => ({ suite, id, file, ...(trial ? { trial } : {}), state, spent: spent ?? null, refusedBy: refusedBy ?? null })),
    refusals: (meta.refusals ?? []).map(({ provider, reason, status, kind, detail }) => ({ provider, reason, status, kind, detail })),
    quarantine: meta.quarantine ? { file: meta.quarantine.file, entries: meta.quarantine.entries.map(({ suite, id, reason }) => ({ suite, id, reason })) } : null,
  };
}

/**
 * Counts and sums over some results (a suite's, or the run's), and the tasks without one: what
 * those spent before the run stopped counts in the durations, steps, stats and cost.
 */
export function aggregateResults(results: readonly TaskResult[], skipped: number, unfinished: readonly UnfinishedTask[] = []): StatsAggregate {
  const spent = spendOf(results, unfinished);
  const withStats = spent.flatMap((r) => (r.stats === null ? [] : [r.stats]));
  return {
    counts: {
      tasks: results.length,
      passed: results.filter((r) => r.status === "passed").length,
      failed: results.filter((r) => r.status === "failed").length,
      errored: results.filter((r) => r.status === "errored").length,
      stopped: results.filter((r) => r.status === "stopped").length,
      skipped,
      interrupted: unfinished.filter((u) => u.state === "interrupted").length,
      notStarted: unfinished.filter((u) => u.state !== "interrupted").length,
    },
    durationMs: sum(spent.map((r) => r.durationMs)),
    steps: sum(spent.map((r) => r.steps)),
    policyDenials: sum(results.map((r) => r.policyDenials.count)),
    resumed: sum(results.map((r) => r.resumed)),
    stats: sumResultStats(withStats),
    sandbox: aggregateSandbox(results),
    cost: sumCosts(spent.map((r) => ({ cost: r.cost ?? undefined }))),
    workspaceDisk: sumWorkspaceDisk(results),
  };
}

/** The spend of each result, and of each task without one that spent something (its checkpoint's figures). */
function spendOf(results: readonly TaskResult[], unfinished: readonly UnfinishedTask[]): Pick<TaskSpend, "durationMs" | "steps" | "stats" | "cost">[] {
  return [
    ...results.map((r) => ({ durationMs: r.durationMs, steps: r.steps, stats: r.stats, cost: r.cost ?? null })),
    ...unfinished.flatMap((u) => (u.spent ? [u.spent] : [])),
  ];
}

/** The trials' workspace disk figures summed; null when none has one. */
function sumWorkspaceDisk(results: readonly TaskResult[]): StatsAggregate["workspaceDisk"] {
  const workspaces = results.flatMap((r) => (r.workspace ? [r.workspace] : []));
  if (workspaces.length === 0) return null;
  const mechanisms = { copy: 0, overlay: 0, "fuse-overlayfs": 0 };
  for (const w of workspaces) mechanisms[w.mechanism]++;
  const copyReason = workspaces.find((w) => w.reason !== undefined)?.reason;
  return { bytes: sum(workspaces.map((w) => w.diskBytes)), tasks: workspaces.length, mechanisms, ...(copyReason !== undefined ? { copyReason } : {}) };
}

/** The weakest sandbox among the results (none, then off, then bwrap), with counts. */
function aggregateSandbox(results: readonly TaskResult[]): StatsAggregate["sandbox"] {
  const records = results.flatMap((r) => (r.sandbox ? [r.sandbox] : []));
  if (records.length === 0) return null;
  const tasks = { bwrap: 0, none: 0, off: 0 };
  for (const record of records) tasks[record.mode] += 1;
  const unsandboxed = records.find((r) => r.mode === "none");
  if (unsandboxed) {
    const { reason, fix } = unsandboxed;
    return { mode: "none", ...(reason !== undefined ? { reason } : {}), ...(fix !== undefined ? { fix } : {}), tasks };
  }
  return { mode: tasks.off > 0 ? "off" : "bwrap", tasks };
}

function taskEntry(result: TaskResult): StatsReport["tasks"][number] {
  return {
    suite: result.suite,
    id: result.id,
    status: result.status,
    provider: result.provider,
    startedAt: result.startedAt,
    finishedAt: result.finishedAt,
    durationMs: result.durationMs,
    steps: result.steps,
    resumed: result.resumed,
    policyDenials: result.policyDenials.count,
    stats: result.stats,
    cost: result.cost ?? null,
    errorCode: result.error?.code ?? null,
    budget: result.budget ?? null,
    failedChecks: result.checks.filter((check) => !check.passed).map((check) => check.name),
    sandbox: result.sandbox ?? null,
    workspace: result.workspace ?? null,
    ...(result.trial ? { trial: { repeat: result.trial.repeat, variant: result.trial.variant } } : {}),
  };
}

/** `stats.json`'s text: pretty JSON with a trailing newline. */
export function renderStatsReport(report: StatsReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}

/** Reads a written `stats.json` back (for merges); throws a zod error naming what is wrong. */
export function parseStatsReport(text: string): StatsReport {
  return statsReportSchema.parse(JSON.parse(text));
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
