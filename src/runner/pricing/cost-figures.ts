/**
 * Cost as every report reads it: a task's cost block (result.json) made from its transcript
 * stats and what it was priced as; costs summed over tasks (a suite, a run, merged shards);
 * and the one way a cost is written for people — `$0.0123`, `unpriced` (never `$0`),
 * `≥ $0.0123 (3 unpriced requests)` when only some requests had a price, `(simulated)` where a
 * scripted task was priced as a real model, `(replayed)` where a cassette answered. Pure functions.
 */
import { formatUsd } from "../../core/errors.js";
import { sumTranscriptStats, totalCostUsd, type TranscriptStats } from "../../core/transcript-types.js";
import type { PriceSource, ResultStats, TaskCost, TaskResult } from "../run-dir/task-result.js";

/** Dollars as every report writes them (core/errors.ts, shared with the budget messages). */
export { formatUsd };

/** What a task was priced as (task-pricing.ts's decision, as labels). */
export interface PricedAs {
  /** `anthropic/claude-sonnet-4-6`; null: unpriced. */
  task: string | null;
  worker: string | null;
  simulated: boolean;
}

/** One model as task-pricing.ts decided it (`provider` null: found at any provider, as `priceAs` is). */
interface PricedModelLike {
  provider: string | null;
  model: string;
  simulated: boolean;
}

/** A priced model's name: `anthropic/claude-sonnet-4-6`, or the model alone when found at any provider. */
export function pricedModelName(model: PricedModelLike): string {
  return model.provider === null ? model.model : `${model.provider}/${model.model}`;
}

/** A task's pricing decision as the labels a result records. */
export function pricedAsOf(pricing: { task: PricedModelLike | null; worker: PricedModelLike | null }): PricedAs {
  const label = (m: PricedModelLike | null) => (m === null ? null : pricedModelName(m));
  return { task: label(pricing.task), worker: label(pricing.worker), simulated: pricing.task?.simulated ?? false };
}

/** The cost block of a result; undefined without stats (the transcript off: nothing was counted). */
export function taskCost(stats: TranscriptStats | null, pricedAs: PricedAs, prices: PriceSource, replayed = false): TaskCost | undefined {
  if (stats === null) return undefined;
  const total = totalCostUsd(stats);
  const unpriced = total === null || (pricedAs.task === null && pricedAs.worker === null);
  return {
    usd: unpriced ? null : total,
    workerUsd: stats.workerCostUsd,
    unpricedRequests: stats.unpricedRequests,
    pricedAs: pricedAs.task,
    workerPricedAs: pricedAs.worker,
    simulated: pricedAs.simulated,
    ...(replayed ? { replayed: true } : {}),
    prices,
  };
}

/**
 * The stats as a result records them: `costUsd`/`workerCostUsd` null where that model had no
 * price (or no cost was counted at all), never a 0 that reads as free.
 */
export function resultStats(stats: TranscriptStats, cost: TaskCost | undefined): ResultStats {
  return {
    ...stats,
    costUsd: cost === undefined || cost.pricedAs === null ? null : stats.costUsd,
    workerCostUsd: cost === undefined || cost.workerPricedAs === null ? null : stats.workerCostUsd,
  };
}

/** Recorded stats as counts to add up or compare with a budget: an unpriced cost counts as nothing spent. */
export function countedStats(stats: ResultStats): TranscriptStats {
  return { ...stats, costUsd: stats.costUsd ?? 0, workerCostUsd: stats.workerCostUsd ?? 0 };
}

/** Stats of several tasks summed; a dollar figure is null when no task had it priced. null when none has stats. */
export function sumResultStats(all: readonly ResultStats[]): ResultStats | null {
  if (all.length === 0) return null;
  const total = sumTranscriptStats(all.map(countedStats));
  return {
    ...total,
    costUsd: all.some((s) => s.costUsd !== null) ? total.costUsd : null,
    workerCostUsd: all.some((s) => s.workerCostUsd !== null) ? total.workerCostUsd : null,
  };
}

/** Costs of several tasks together. */
export interface CostTotal {
  /** Σ priced dollars; null when no task had a price. */
  usd: number | null;
  workerUsd: number;
  unpricedRequests: number;
  /** Tasks with a cost block. */
  tasks: number;
  /** Of them, those with no price at all. */
  unpricedTasks: number;
  /** Of them, those priced as a real model by `priceAs`. */
  simulatedTasks: number;
  /** Of them, those answered from cassettes (their recorded usage priced). */
  replayedTasks: number;
}

/** The sum of the results' costs; null when none has a cost block (results from before costs were counted). */
export function sumCosts(results: readonly Pick<TaskResult, "cost">[]): CostTotal | null {
  const costs = results.flatMap((r) => (r.cost ? [r.cost] : []));
  if (costs.length === 0) return null;
  const priced = costs.filter((c) => c.usd !== null);
  return {
    usd: priced.length === 0 ? null : priced.reduce((n, c) => n + c.usd!, 0),
    workerUsd: priced.reduce((n, c) => n + c.workerUsd, 0),
    unpricedRequests: costs.reduce((n, c) => n + c.unpricedRequests, 0),
    tasks: costs.length,
    unpricedTasks: costs.length - priced.length,
    simulatedTasks: priced.filter((c) => c.simulated).length,
    replayedTasks: priced.filter((c) => c.replayed === true).length,
  };
}

/** A task's cost for people: `$0.0123 (simulated)`, `unpriced`, `≥ $0.01 (2 unpriced requests)`; `—` without one. */
export function formatTaskCost(cost: TaskCost | undefined): string {
  if (cost === undefined) return "—";
  return formatCostReading(cost.usd, cost.unpricedRequests, cost.simulated ? "all" : "none", cost.replayed === true ? "all" : "none");
}

/** Summed costs for people; `—` when no task had a cost block. */
export function formatCostTotal(total: CostTotal | null): string {
  if (total === null) return "—";
  const priced = total.tasks - total.unpricedTasks;
  const share = (n: number) => (n === 0 ? "none" : n === priced ? "all" : "some");
  return formatCostReading(total.usd, total.unpricedRequests, share(total.simulatedTasks), share(total.replayedTasks));
}

type Share = "none" | "some" | "all";

function formatCostReading(usd: number | null, unpricedRequests: number, simulated: Share, replayed: Share): string {
  if (usd === null) return "unpriced";
  const notes = [
    ...(simulated === "all" ? ["simulated"] : simulated === "some" ? ["partly simulated"] : []),
    ...(replayed === "all" ? ["replayed"] : replayed === "some" ? ["partly replayed"] : []),
    ...(unpricedRequests > 0 ? [`${unpricedRequests} unpriced request${unpricedRequests === 1 ? "" : "s"}`] : []),
  ];
  return `${unpricedRequests > 0 ? "≥ " : ""}${formatUsd(usd)}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`;
}


/** The distinct price sources of the results (normally one: the table's version, and the pricing file if any). */
export function priceSources(results: readonly Pick<TaskResult, "cost">[]): PriceSource[] {
  const seen = new Map<string, PriceSource>();
  for (const r of results) if (r.cost) seen.set(JSON.stringify(r.cost.prices), r.cost.prices);
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, source]) => source);
}
