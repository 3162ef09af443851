/**
 * A replay sweep: every (input, strategy, budget) replayed through a fresh prompt-cache
 * simulator, one row each, and a total per (strategy, budget) over the inputs. The `recorded`
 * strategy replays the requests as the harness sent them, once per input whatever the budgets,
 * with the simulator's error against the bills. Each session goes through the cache rules
 * asked for, else its own (its format's provider), else Anthropic's, with its hidden prefix.
 */
import { PromptCacheSimulator, type CacheRules } from "../cache/prompt-cache-simulator.js";
import { sumTranscriptStats } from "../core/transcript-types.js";
import type { Usage } from "../core/provider.js";
import type { TokenCounter } from "../core/token-counter.js";
import type { StrategyName } from "./compaction-plan.js";
import { HiddenPrefixCache } from "./hidden-prefix-cache.js";
import { hiddenPrefixTokens } from "./import/session-builder.js";
import { figuresOf, replaySession, type ReplayCache, type ReplayFigures, type ReplayOptions, type ReplayTtl } from "./replay.js";
import { replayRecorded, sumSimulatorErrors, type RecordedTtl, type SimulatorError } from "./replay-recorded.js";
import type { ReplaySession } from "./replay-session.js";

/** A compaction strategy, or `recorded`: the harness's own requests as it sent them. */
export type ReplayStrategy = StrategyName | "recorded";

export interface SweepInput {
  /** A file, a suite, or the chained inputs. */
  name: string;
  sessions: ReplaySession[];
}

export interface SweepOptions {
  strategies: ReplayStrategy[];
  budgets: number[];
  blockTokens?: number;
  /** Absent: each session's own rules, else Anthropic's. */
  cache?: CacheRules;
  /** The model whose cache rules (minimum cacheable prefix) apply. */
  model?: string;
  /** Dollars for one request's usage of that model (the CLI's price table). */
  price?: (usage: Usage) => number | null;
  compaction?: ReplayOptions["compaction"];
  /** The cache marks' TTL (default 5 minutes). */
  cacheTtl?: ReplayTtl;
  /** The `recorded` strategy's marks: as each session was billed (the default), or one TTL for all. */
  recordedTtl?: RecordedTtl;
  /** Tools+system (and a hidden prefix) cached before each session's first request; without it `recorded` caches the part its first bill read. */
  warmPrefix?: boolean;
  /** Counts the mirror's and the cache simulator's tokens (default chars4). */
  counter?: TokenCounter;
  /** Called after each replay, for a progress line. */
  onProgress?: (done: number, total: number, label: string) => void;
}

export interface SweepRow {
  input: string;
  strategy: ReplayStrategy;
  /** Null for `recorded` (the harness's own compaction, no budget of the replay's). */
  budget: number | null;
  figures: ReplayFigures;
  /** `recorded` only: the simulator's error against the bills, per session (none without bills). */
  sessionErrors?: SimulatorError[];
  /** `recorded` only: the row's sessions taken together; null without bills. */
  error?: SimulatorError | null;
}

export interface SweepResult {
  rows: SweepRow[];
  /** One per (strategy, budget): the inputs summed. */
  total: SweepRow[];
}

export function runSweep(inputs: readonly SweepInput[], options: SweepOptions): SweepResult {
  const rows: SweepRow[] = [];
  let done = 0;
  const compaction = options.strategies.filter((s): s is StrategyName => s !== "recorded");
  const recorded = options.strategies.includes("recorded");
  const jobs = inputs.length * (compaction.length * options.budgets.length + (recorded ? 1 : 0));
  for (const given of inputs) {
    const input = { ...given, sessions: given.sessions.map((s) => countedBy(s, options.counter)) };
    if (recorded) {
      const parts = input.sessions.map((session) => replayRecorded(session, (model) => sessionCache(session, options, model, !options.warmPrefix), {
        ...(options.price ? { price: options.price } : {}), ...(options.recordedTtl ? { ttl: options.recordedTtl } : {}), ...(options.warmPrefix ? { warmPrefix: true } : {}),
        ...(options.counter ? { counter: options.counter } : {}),
      }));
      const sessionErrors = parts.flatMap((p) => (p.error ? [p.error] : []));
      rows.push({
        input: input.name, strategy: "recorded", budget: null, figures: sumFigures(parts.map((p) => p.figures)),
        sessionErrors, error: sumSimulatorErrors(input.name, sessionErrors),
      });
      options.onProgress?.(++done, jobs, `${input.name} recorded`);
    }
    for (const budget of options.budgets) {
      for (const strategy of compaction) {
        const parts = input.sessions.map((session) => replayOne(session, strategy, budget, options));
        rows.push({ input: input.name, strategy, budget, figures: sumFigures(parts) });
        options.onProgress?.(++done, jobs, `${input.name} ${strategy} ${budget}`);
      }
    }
  }
  const total: SweepRow[] = [];
  if (recorded) {
    const mine = rows.filter((r) => r.strategy === "recorded");
    const errors = mine.flatMap((r) => r.sessionErrors ?? []);
    total.push({ input: "total", strategy: "recorded", budget: null, figures: sumFigures(mine.map((r) => r.figures)), sessionErrors: errors, error: sumSimulatorErrors("total", errors) });
  }
  for (const budget of options.budgets) {
    for (const strategy of compaction) {
      const mine = rows.filter((r) => r.strategy === strategy && r.budget === budget).map((r) => r.figures);
      total.push({ input: "total", strategy, budget, figures: sumFigures(mine) });
    }
  }
  return { rows, total };
}

/**
 * A fresh simulator for `session`: the rules asked for, else its own, else Anthropic's; the
 * minimum of `--model`, else of `model`, else of the session's first model; its hidden prefix.
 */
function sessionCache(session: ReplaySession, options: SweepOptions, model = session.requests.find((r) => r.model)?.model, warm = false): ReplayCache {
  model = options.model ?? model;
  const simulator = new PromptCacheSimulator({ rules: options.cache ?? session.cache ?? "anthropic", ...(model ? { model } : {}), ...(options.counter ? { counter: options.counter } : {}) });
  return new HiddenPrefixCache(simulator, session.prefixTokens ?? 0, session.name, options.counter, warm ? warmAsBilled(session) : 0);
}

/** What the session's first bill read from the cache: the part of its hidden prefix other sessions had written. */
function warmAsBilled(session: ReplaySession): number {
  return session.requests.find((r) => r.billed)?.billed?.cacheReadTokens ?? 0;
}

/**
 * The session with its hidden prefix fitted by `counter`: the prefix is the first bill less what
 * the counter counts of the visible prompt, so a replay counting otherwise fits it again.
 */
function countedBy(session: ReplaySession, counter: TokenCounter | undefined): ReplaySession {
  if (!counter || session.prefixTokens === undefined) return session;
  return { ...session, prefixTokens: hiddenPrefixTokens(session, counter) };
}

function replayOne(session: ReplaySession, strategy: StrategyName, budget: number, options: SweepOptions): ReplayFigures {
  return replaySession(session, sessionCache(session, options), {
    strategy, budgetTokens: budget,
    ...(options.blockTokens !== undefined ? { blockTokens: options.blockTokens } : {}),
    ...(options.compaction ? { compaction: options.compaction } : {}),
    ...(options.price ? { price: options.price } : {}),
    ...(options.cacheTtl ? { cacheTtl: options.cacheTtl } : {}),
    ...(options.warmPrefix ? { warmPrefix: true } : {}),
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
