/**
 * The replay: a recorded session sent again, request by request, through the transcript
 * mirror under one compaction strategy and budget and through the prompt-cache simulator, so a
 * strategy's cache hit rate, cost and retained context can be measured without a model. The
 * recorded assistant messages stand as they were (the replay asks what the requests would have
 * cost, not what the model would have done).
 *
 * The compaction worker is modelled as a model would be, for every strategy alike: its request
 * is the main request it interrupts plus an instruction (through the same cache), and it writes
 * a summary the size of the elider's, so no strategy looks cheap by moving cost into its worker.
 */
import type { Message } from "../core/messages.js";
import type { ModelRequest, Usage } from "../core/provider.js";
import { billedEquivalentInput, type TranscriptStats } from "../core/transcript-types.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import type { CompactionSettings, StrategyName } from "./compaction-plan.js";
import { elide, summaryInstruction, workerRequest } from "./compaction-worker.js";
import { fixedTokensOf, summarizeRequest } from "./compaction.js";
import type { ReplaySession } from "./replay-session.js";
import { TranscriptMirror, type MirrorOptions, type RequestView } from "./transcript-mirror.js";
import { CACHE_TTL_SETTINGS, oracleCacheTtl, type CacheTtlSetting } from "./cache-ttl-policy.js";

/** The cache the replay sends requests through (the prompt-cache simulator, at a given time). */
export interface ReplayCache {
  observe(req: ModelRequest, atMs: number): Usage;
}

export interface ReplayOptions {
  strategy: StrategyName;
  budgetTokens: number;
  blockTokens?: number;
  compaction?: Partial<Omit<CompactionSettings, "budgetTokens" | "strategy">>;
  /**
   * The cache marks' TTL (default 5 minutes): as the engine chooses it, or `oracle`, which knows
   * the gap after each request from the recorded times (1 hour exactly when it is longer than 5
   * minutes and at most an hour) — an upper bound for `auto`, which never reads them.
   */
  cacheTtl?: ReplayTtl;
  /**
   * The tools and system prompt are in the cache before the first request (other sessions of
   * the same agent wrote them): the simulator is seeded with them, 5-minute marked, at the first
   * request's time, and the seeding is not counted.
   */
  warmPrefix?: boolean;
  /** Dollars for one request's usage (main or worker); unset, or null for any request: not priced. */
  price?: (usage: Usage) => number | null;
  /** Counts the mirror's tokens and the modelled output (default chars4); the cache must count with the same. */
  counter?: TokenCounter;
}

export type ReplayTtl = CacheTtlSetting | "oracle";
export const REPLAY_TTLS = [...CACHE_TTL_SETTINGS, "oracle"] as const satisfies readonly ReplayTtl[];

export interface ReplayFigures {
  requests: number;
  hitRate: number;
  /** HR*(B) = 1 − Σ new tokens / Σ min(uncompacted request tokens, B). */
  limit: number;
  /** (limit − hitRate) in points. */
  gapPoints: number;
  flushes: number;
  freeFlushes: number;
  summaryMerges: number;
  peakRequestTokens: number;
  /** Σ tokens sent ÷ Σ min(uncompacted request tokens, B). */
  retainedContext: number;
  workerRequests: number;
  workerTokens: number;
  /** input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads, main and worker requests. */
  billedEquivalent: number;
  workerBilledEquivalent: number;
  /** billedEquivalent ÷ retainedContext. */
  costPerRetained: number;
  /** Uncached prompt tokens beyond each token's first send, worker included. */
  rewriteWaste: number;
  /** The smallest raw tail after a flush, as a share of the budget; null without flushes. */
  minRawTailShare: number | null;
  /** Dollars, each request priced on its own (worker included); null when not priced. */
  costUsd: number | null;
  /** Main requests marked with the 1-hour TTL. */
  oneHourRequests: number;
  /** TTL choices judged by the gap that followed (right: 1 hour exactly when it was over 5 minutes and at most an hour). */
  ttlChoicesRight: number;
  ttlChoicesWrong: number;
  stats: TranscriptStats;
}

export function replaySession(session: ReplaySession, cache: ReplayCache, options: ReplayOptions): ReplayFigures {
  const counter = options.counter ?? chars4Counter;
  const mirror = new TranscriptMirror({
    budgetTokens: options.budgetTokens,
    ...(options.blockTokens !== undefined ? { blockTokens: options.blockTokens } : {}),
    compaction: { ...options.compaction, strategy: options.strategy },
    ...ttlOptions(session, options.cacheTtl ?? "5m"),
    counter,
  });
  // A harness's hidden prefix (its system prompt and tools, not in the log) counts against the budget too.
  const fixedTokens = fixedTokensOf(session.system, session.tools, counter) + (session.prefixTokens ?? 0);
  const sent = new SentContent(counter);
  let uncached = 0;
  let minTail: number | null = null;
  let dollars: number | null = options.price ? 0 : null;
  const addPrice = (usage: Usage) => {
    if (dollars === null || !options.price) return;
    const usd = options.price(usage);
    dollars = usd === null ? null : dollars + usd;
  };

  const first = session.requests[0];
  if (options.warmPrefix && first) cache.observe({ system: session.system, tools: session.tools, messages: [], cacheBreakpoints: [] }, first.atMs);
  for (const { logLength, atMs } of session.requests) {
    const log = session.messages.slice(0, logLength);
    const plan = mirror.planFlush(log, fixedTokens, atMs);
    if (plan) {
      const summarize = summarizeRequest(mirror, plan, { messages: log, system: session.system, tools: session.tools, fixedTokens });
      const summary = elide(summarize);
      const usage = cache.observe(workerRequest(summarize), atMs);
      const workerUsage = { ...usage, outputTokens: counter.text(summary) };
      mirror.recordWorker(workerUsage);
      addPrice(workerUsage);
      uncached += usage.inputTokens + usage.cacheWriteTokens;
      sent.firstSendTokens += counter.text(summaryInstruction(summarize));
      mirror.applyFlush(log, plan, summary);
      const tail = mirror.uncompactedTokens(log, 0) - mirror.uncompactedTokens(log.slice(0, mirror.rawStart()), 0);
      const share = tail / options.budgetTokens;
      minTail = minTail === null ? share : Math.min(minTail, share);
    }
    const view = mirror.view(log, fixedTokens, atMs);
    const req = toRequest(session, view);
    const usage = cache.observe(req, atMs);
    const reply = session.messages[logLength];
    const mainUsage = { ...usage, outputTokens: reply ? counter.message(reply) : 0 };
    addPrice(mainUsage);
    mirror.recordRequest(
      mainUsage,
      { tokens: mirror.viewTokens(view.messages, fixedTokens), uncompactedTokens: mirror.uncompactedTokens(log, fixedTokens), atMs },
    );
    uncached += usage.inputTokens + usage.cacheWriteTokens;
    sent.request(fixedTokens, view.messages, mirror.rawStart(), log.length);
  }
  return figuresOf(mirror.currentStats(), uncached - sent.firstSendTokens, minTail, dollars);
}

/** The mirror's TTL options for `ttl`; the oracle reads the next request's recorded time. */
function ttlOptions(session: ReplaySession, ttl: ReplayTtl): Pick<MirrorOptions, "cacheTtl" | "chooseCacheTtl"> {
  if (ttl !== "oracle") return { cacheTtl: ttl };
  return {
    chooseCacheTtl: (atMs, index) => {
      const next = session.requests[index + 1];
      return oracleCacheTtl(next === undefined ? null : next.atMs - atMs);
    },
  };
}

function toRequest(session: ReplaySession, view: RequestView): ModelRequest {
  return {
    system: session.system, tools: session.tools, messages: view.messages, cacheBreakpoints: view.cacheBreakpoints,
    ...(view.cacheOneHourThrough !== undefined ? { cacheOneHourThrough: view.cacheOneHourThrough } : {}),
  };
}

/**
 * Which content has been sent before, so re-sends can be told from first sends: the system and
 * tools, each log message by index, each summary block by its text.
 */
class SentContent {
  private readonly seen = new Set<string>();
  firstSendTokens = 0;

  constructor(private readonly counter: TokenCounter) {}

  request(fixedTokens: number, view: readonly Message[], rawStart: number, logLength: number): void {
    this.once("fixed", fixedTokens);
    const rawCount = logLength - rawStart;
    const summaries = view.length - rawCount;
    for (let i = 0; i < view.length; i++) {
      const m = view[i]!;
      if (i < summaries) {
        for (const b of m.content) if (b.type === "text") this.once(`s:${b.text}`, this.counter.text(b.text));
      } else {
        this.once(`m:${rawStart + (i - summaries)}`, this.counter.message(m));
      }
    }
  }

  private once(key: string, tokens: number): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.firstSendTokens += tokens;
  }
}

/** The figures of a replay (or of several summed) from their stats and the two figures stats lack. */
export function figuresOf(stats: TranscriptStats, rewriteWaste: number, minTail: number | null, costUsd: number | null = null): ReplayFigures {
  const retainedContext = stats.budgetedTokens === 0 ? 0 : stats.requestTokens / stats.budgetedTokens;
  const billedEquivalent = billedEquivalentInput(stats);
  const mainOnly = billedEquivalentInput({ ...stats, workerInputTokens: 0, workerCacheReadTokens: 0, workerCacheWriteTokens: 0 });
  return {
    requests: stats.requests,
    hitRate: stats.cacheHitRate,
    limit: stats.limitHitRate,
    gapPoints: (stats.limitHitRate - stats.cacheHitRate) * 100,
    flushes: stats.flushes,
    freeFlushes: stats.freeFlushes,
    summaryMerges: stats.summaryMerges,
    peakRequestTokens: stats.peakRequestTokens,
    retainedContext,
    workerRequests: stats.workerRequests,
    workerTokens: stats.workerInputTokens + stats.workerOutputTokens,
    billedEquivalent,
    workerBilledEquivalent: billedEquivalent - mainOnly,
    costPerRetained: retainedContext === 0 ? 0 : billedEquivalent / retainedContext,
    rewriteWaste: Math.max(0, rewriteWaste),
    minRawTailShare: minTail,
    costUsd,
    oneHourRequests: stats.oneHourRequests,
    ttlChoicesRight: stats.ttlChoicesRight,
    ttlChoicesWrong: stats.ttlChoicesWrong,
    stats,
  };
}

