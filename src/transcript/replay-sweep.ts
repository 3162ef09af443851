/**
 * A replay sweep: every (input, strategy, budget) replayed through a fresh prompt-cache
 * simulator, one row each, and a total per (strategy, budget) over the inputs.
 */
import { PromptCacheSimulator, type CacheRules } from "../cache/prompt-cache-simulator.js";
import { sumTranscriptStats } from "../core/transcript-types.js";
import type { Usage } from "../core/provider.js";
import type { TokenCounter } from "../core/token-counter.js";
import type { StrategyName } from "./compaction-plan.js";
import { figuresOf, replaySession, type ReplayFigures, type ReplayOptions } from "./replay.js";
import type { ReplaySession } from "./replay-session.js";

export interface SweepInput {
  /** A file, a suite, or the chained inputs. */
  name: string;
  sessions: ReplaySession[];
}

export interface SweepOptions {
  strategies: StrategyName[];
  budgets: number[];
  blockTokens?: number;
  cache: CacheRules;
  /** The model whose cache rules (minimum cacheable prefix) apply. */
  model?: string;
  /** Dollars for one request's usage of that model (the CLI's price table). */
  price?: (usage: Usage) => number | null;
  compaction?: ReplayOptions["compaction"];
  /** Counts the mirror's and the cache simulator's tokens (default chars4). */
  counter?: TokenCounter;
  /** Called after each replay, for a progress line. */
  onProgress?: (done: number, total: number, label: string) => void;
}

export interface SweepRow {
  input: string;
  strategy: StrategyName;
  budget: number;
  figures: ReplayFigures;
}

export interface SweepResult {
  rows: SweepRow[];
  /** One per (strategy, budget): the inputs summed. */
  total: SweepRow[];
}

export function runSweep(inputs: readonly SweepInput[], options: SweepOptions): SweepResult {
  const rows: SweepRow[] = [];
  const jobs = inputs.length * options.strategies.length * options.budgets.length;
  let done = 0;
  for (const input of inputs) {
    for (const budget of options.budgets) {
      for (const strategy of options.strategies) {
        const parts = input.sessions.map((session) => replayOne(session, strategy, budget, options));
        rows.push({ input: input.name, strategy, budget, figures: sumFigures(parts) });
        options.onProgress?.(++done, jobs, `${input.name} ${strategy} ${budget}`);
      }
    }
  }
  const total: SweepRow[] = [];
  for (const budget of options.budgets) {
    for (const strategy of options.strategies) {
      const mine = rows.filter((r) => r.strategy === strategy && r.budget === budget).map((r) => r.figures);
      total.push({ input: "total", strategy, budget, figures: sumFigures(mine) });
    }
  }
  return { rows, total };
}

function replayOne(session: ReplaySession, strategy: StrategyName, budget: number, options: SweepOptions): ReplayFigures {
  const simulator = new PromptCacheSimulator({ rules: options.cache, ...(options.model ? { model: options.model } : {}), ...(options.counter ? { counter: options.counter } : {}) });
  return replaySession(session, simulator, {
    strategy, budgetTokens: budget,
    ...(options.blockTokens !== undefined ? { blockTokens: options.blockTokens } : {}),
    ...(options.compaction ? { compaction: options.compaction } : {}),
    ...(options.price ? { price: options.price } : {}),
    ...(options.counter ? { counter: options.counter } : {}),
  });
}

/** Figures of several replays taken together. */
export function sumFigures(parts: readonly ReplayFigures[]): ReplayFigures {
  if (parts.length === 1) return parts[0]!;
  const tails = parts.map((p) => p.minRawTailShare).filter((t): t is number => t !== null);
  const costs = parts.map((p) => p.costUsd);
  return figuresOf(
    sumTranscriptStats(parts.map((p) => p.stats)),
    parts.reduce((n, p) => n + p.rewriteWaste, 0),
    tails.length === 0 ? null : Math.min(...tails),
    costs.some((c) => c === null) ? null : costs.reduce((n: number, c) => n + c!, 0),
  );
}
