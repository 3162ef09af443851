/**
 * `rhema report compare --cells`' per-cell totals: each cell of one run over all its tasks — pass
 * rate, requests, flushes, cache hit rate and HR*(B), billed-equivalent input tokens and dollars —
 * what a benchmark of transcript settings reads across cells. The cache figures are taken over
 * the cell's summed transcript stats with the formulas `bench replay` uses (core/transcript-types),
 * so a replay of the same sessions at the cell's budget gives the same numbers. Pure: results in,
 * totals out.
 */
import { billedEquivalentInput } from "../../core/transcript-types.js";
import { countedStats, sumResultStats } from "../pricing/cost-figures.js";
import { trialKeyOf } from "../run-dir/run-dir.js";
import type { TaskResult } from "../run-dir/task-result.js";
import { passRate } from "../trials/trial-figures.js";

/** One cell's figures over every task and trial it ran. */
export interface CellTotal {
  /** The cell's variant; null: no variant (`default`). */
  cell: string | null;
  /** Tasks with a counted trial in the cell. */
  tasks: number;
  /** Counted trials (with a result) and, of them, passed. */
  trials: number;
  passes: number;
  /** passes ÷ trials with its Wilson 95 % interval. */
  passRate: { rate: number; lower: number; upper: number } | null;
  /** Model requests (the worker's apart) and compaction flushes over the trials with a transcript. */
  requests: number;
  flushes: number;
  /** Cache hit rate over the summed transcript stats; null when no trial has one. */
  cacheHitRate: number | null;
  /** HR*(B) = 1 − Σ new tokens ÷ Σ min(uncompacted request tokens, B), over the summed stats; null without one. */
  limitHitRate: number | null;
  /** input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads, the worker's included; null without stats. */
  billedEquivalentTokens: number | null;
  /** Of it, the compaction worker's requests (0 when the elider summarized). */
  workerBilledEquivalentTokens: number | null;
  /** Dollars over the cell's trials; null when a trial is unpriced (a partial sum would understate it). */
  costUsd: number | null;
  /** Dollars over passes; null when unpriced or nothing passed. */
  costPerPassUsd: number | null;
}

/** Every cell of the results, in `cells`' order (the run's cells as `cellsOf` lists them). */
export function cellTotals(results: readonly TaskResult[], cells: readonly (string | null)[]): CellTotal[] {
  return cells.map((cell) => cellTotal(cell, results.filter((r) => trialKeyOf(r).variant === cell)));
}

function cellTotal(cell: string | null, results: readonly TaskResult[]): CellTotal {
  const passes = results.filter((r) => r.status === "passed").length;
  const rate = passRate(passes, results.length);
  const summed = sumResultStats(results.flatMap((r) => (r.stats === null ? [] : [r.stats])));
  const costs = results.map((r) => r.cost?.usd ?? null);
  const costUsd = results.length > 0 && costs.every((usd) => usd !== null) ? (costs as number[]).reduce((sum, usd) => sum + usd, 0) : null;
  const counts = summed === null ? null : countedStats(summed);
  const billed = counts === null ? null : billedEquivalentInput(counts);
  const mainBilled = counts === null ? null : billedEquivalentInput({ ...counts, workerInputTokens: 0, workerCacheReadTokens: 0, workerCacheWriteTokens: 0 });
  return {
    cell,
    tasks: new Set(results.map((r) => `${r.suite}/${r.id}`)).size,
    trials: results.length,
    passes,
    passRate: rate === null ? null : { rate: rate.rate, lower: rate.interval.lower, upper: rate.interval.upper },
    requests: summed?.requests ?? 0,
    flushes: summed?.flushes ?? 0,
    cacheHitRate: summed?.cacheHitRate ?? null,
    limitHitRate: summed?.limitHitRate ?? null,
    billedEquivalentTokens: billed,
    workerBilledEquivalentTokens: billed === null || mainBilled === null ? null : billed - mainBilled,
    costUsd,
    costPerPassUsd: costUsd === null || passes === 0 ? null : costUsd / passes,
  };
}
