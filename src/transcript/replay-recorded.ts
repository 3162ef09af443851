/**
 * The `recorded` replay: each request of an imported log sent again exactly as the harness sent
 * it (after its own compaction, with the session's hidden prefix), through the prompt-cache
 * simulator — and, where the log carries the provider's bill, the simulator's error against it:
 * simulated vs billed cache read, cache write, uncached input and hit rate, per session and in
 * total, so a benchmarker sees how far to trust the other strategies' figures.
 *
 * Marks are placed as a harness like Claude Code places them: the end of tools+system (the
 * hidden prefix), the previous request's last message when this request still carries it, and
 * its own last message, with the TTL the session was billed with (the hour when any of its bills
 * has 1-hour writes) unless one is asked for. Each request goes to its own model's cache.
 */
import type { Message } from "../core/messages.js";
import type { Usage } from "../core/provider.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import { fixedTokensOf } from "./compaction.js";
import type { ReplayCache, ReplayFigures } from "./replay.js";
import { figuresOf } from "./replay.js";
import { sentMessages, type ReplaySession, type SessionFormat } from "./replay-session.js";
import { TranscriptMirror } from "./transcript-mirror.js";

/** Prompt-side sums over the requests that carry a bill. */
export interface PromptTotals {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of `cacheWriteTokens`, the 1-hour ones. */
  cacheWrite1hTokens: number;
  /** cacheRead ÷ (input + cacheRead + cacheWrite); 0 without tokens. */
  hitRate: number;
  /** input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads: the prompt's bill in input tokens. */
  billedEquivalent: number;
}

/** The marks' TTL of a `recorded` replay: as the session was billed, or one for every mark. */
export type RecordedTtl = "as-billed" | "5m" | "1h";

export interface RecordedOptions {
  /** Dollars for one request's usage; unset, or null for any request: not priced. */
  price?: (usage: Usage) => number | null;
  ttl?: RecordedTtl;
  /** The hidden prefix and tools+system cached before each model's first request (`--warm-prefix`). */
  warmPrefix?: boolean;
  /** Counts the requests' tokens (default chars4); the caches `cacheFor` makes should count alike. */
  counter?: TokenCounter;
}

export interface SimulatorError {
  /** A session, an input, or `total`. */
  name: string;
  format: SessionFormat | "mixed";
  /** Requests with a bill (the ones compared). */
  billedRequests: number;
  simulated: PromptTotals;
  billed: PromptTotals;
  /** (simulated − billed) ÷ billed, in percent; null where the bill is 0. */
  cacheReadErrorPct: number | null;
  cacheWriteErrorPct: number | null;
  inputErrorPct: number | null;
  /** (simulated − billed hit rate) in points. */
  hitRateErrorPoints: number;
  /** Simulated ÷ billed billed-equivalent: how far the replay's cost figures stand from the bill; null where the bill is 0. */
  billedEquivalentRatio: number | null;
}

export interface RecordedReplay {
  figures: ReplayFigures;
  /** Null when no request carries a bill. */
  error: SimulatorError | null;
}

/**
 * `cacheFor(model)` gives the cache a request of that model goes through (each model has a
 * cache of its own: a model switch finds nothing cached); called once per model.
 */
export function replayRecorded(session: ReplaySession, cacheFor: (model: string | undefined) => ReplayCache, options: RecordedOptions = {}): RecordedReplay {
  const { price, ttl = "as-billed", counter = chars4Counter } = options;
  const oneHour = ttl === "1h" || (ttl === "as-billed" && session.requests.some((r) => (r.billed?.cacheWrite1hTokens ?? 0) > 0));
  const caches = new Map<string | undefined, ReplayCache>();
  const cacheOf = (model: string | undefined, atMs: number) => {
    let cache = caches.get(model);
    if (!cache) {
      caches.set(model, cache = cacheFor(model));
      // Other sessions of the harness wrote its tools and system prompt: seeded, not counted.
      if (options.warmPrefix) cache.observe({ system: session.system, tools: session.tools, messages: [], cacheBreakpoints: [], ...(oneHour ? { cacheOneHourThrough: -1 } : {}) }, atMs);
    }
    return cache;
  };
  const mirror = new TranscriptMirror({ budgetTokens: Number.MAX_SAFE_INTEGER, compaction: { strategy: "none" }, counter });
  const fixedTokens = fixedTokensOf(session.system, session.tools, counter) + (session.prefixTokens ?? 0);
  const firstSent = new Set<Message>();
  let firstSendTokens = fixedTokens;
  let uncached = 0;
  let dollars: number | null = price ? 0 : null;
  const simulated: Usage[] = [];
  const billed: Usage[] = [];
  let previousTail: Message | null = null;
  for (const request of session.requests) {
    const messages = sentMessages(session, request);
    const tail = messages.length - 1;
    const previous = previousTail === null ? -1 : messages.lastIndexOf(previousTail, tail - 1);
    const usage = cacheOf(request.model, request.atMs).observe({
      system: session.system, tools: session.tools, messages,
      cacheBreakpoints: [...(previous >= 0 ? [previous] : []), ...(tail >= 0 ? [tail] : [])],
      ...(oneHour ? { cacheOneHourThrough: tail } : {}),
    }, request.atMs);
    previousTail = messages[tail] ?? null;
    const reply = session.messages[request.logLength];
    const mainUsage = { ...usage, outputTokens: request.billed?.outputTokens ?? (reply ? counter.message(reply) : 0) };
    if (dollars !== null && price) {
      const usd = price(mainUsage);
      dollars = usd === null ? null : dollars + usd;
    }
    mirror.recordRequest(mainUsage, {
      tokens: mirror.viewTokens(messages, fixedTokens),
      uncompactedTokens: mirror.uncompactedTokens(session.messages.slice(0, request.logLength), fixedTokens),
      atMs: request.atMs,
    });
    uncached += usage.inputTokens + usage.cacheWriteTokens;
    for (const m of messages) {
      if (firstSent.has(m)) continue;
      firstSent.add(m);
      firstSendTokens += counter.message(m);
    }
    if (request.billed) {
      simulated.push(usage);
      billed.push(request.billed);
    }
  }
  return {
    figures: figuresOf(mirror.currentStats(), uncached - firstSendTokens, null, dollars),
    error: billed.length === 0 ? null : errorOf(session.name, session.format ?? "corpus", totalsOf(simulated), totalsOf(billed), billed.length),
  };
}

function totalsOf(usages: readonly Usage[]): PromptTotals {
  const sum = (pick: (u: Usage) => number) => usages.reduce((n, u) => n + pick(u), 0);
  return withHitRate({
    inputTokens: sum((u) => u.inputTokens), cacheReadTokens: sum((u) => u.cacheReadTokens),
    cacheWriteTokens: sum((u) => u.cacheWriteTokens), cacheWrite1hTokens: sum((u) => u.cacheWrite1hTokens ?? 0),
  });
}

function withHitRate(t: Omit<PromptTotals, "hitRate" | "billedEquivalent">): PromptTotals {
  const prompt = t.inputTokens + t.cacheReadTokens + t.cacheWriteTokens;
  return {
    ...t, hitRate: prompt === 0 ? 0 : t.cacheReadTokens / prompt,
    billedEquivalent: t.inputTokens + 1.25 * (t.cacheWriteTokens - t.cacheWrite1hTokens) + 2 * t.cacheWrite1hTokens + 0.1 * t.cacheReadTokens,
  };
}

function errorOf(name: string, format: SimulatorError["format"], simulated: PromptTotals, billed: PromptTotals, billedRequests: number): SimulatorError {
  const pct = (sim: number, bill: number) => (bill === 0 ? null : ((sim - bill) / bill) * 100);
  return {
    name, format, billedRequests, simulated, billed,
    cacheReadErrorPct: pct(simulated.cacheReadTokens, billed.cacheReadTokens),
    cacheWriteErrorPct: pct(simulated.cacheWriteTokens, billed.cacheWriteTokens),
    inputErrorPct: pct(simulated.inputTokens, billed.inputTokens),
    hitRateErrorPoints: (simulated.hitRate - billed.hitRate) * 100,
    billedEquivalentRatio: billed.billedEquivalent === 0 ? null : simulated.billedEquivalent / billed.billedEquivalent,
  };
}

/** Several sessions' errors taken together (their sums compared), named `name`. */
export function sumSimulatorErrors(name: string, parts: readonly SimulatorError[]): SimulatorError | null {
  if (parts.length === 0) return null;
  const add = (pick: (e: SimulatorError) => PromptTotals) => withHitRate({
    inputTokens: parts.reduce((n, e) => n + pick(e).inputTokens, 0),
    cacheReadTokens: parts.reduce((n, e) => n + pick(e).cacheReadTokens, 0),
    cacheWriteTokens: parts.reduce((n, e) => n + pick(e).cacheWriteTokens, 0),
    cacheWrite1hTokens: parts.reduce((n, e) => n + pick(e).cacheWrite1hTokens, 0),
  });
  const formats = new Set(parts.map((e) => e.format));
  return errorOf(name, formats.size === 1 ? parts[0]!.format : "mixed", add((e) => e.simulated), add((e) => e.billed), parts.reduce((n, e) => n + e.billedRequests, 0));
}
