/**
 * The transcript mirror: tiles the session log into sections, compacts the oldest of them into
 * summaries when the request view would pass the budget, builds the request view, and keeps the
 * transcript stats.
 *
 * A section is a contiguous range of messages `[start, end)` closed at a round boundary: it ends
 * just before an assistant message, so a tool call is never split from its result and no closed
 * section can change (only the trailing user message is ever merged into). Tiling is
 * incremental — each commit looks only at messages after the last closed section.
 *
 * Flushed sections form a prefix of the tiling and carry their summary. The request view is one
 * user message holding the summaries, one text block each (so a new summary appends a block and
 * the older prefix stays byte-stable), then the raw messages from the first unflushed one. The
 * log itself is never changed: compaction is a view.
 */
import { createHash } from "node:crypto";
import type { ContentBlock, Message } from "../core/messages.js";
import type { RequestPrice, RequestPricer, Usage } from "../core/provider.js";
import {
  cacheHitRate,
  emptyTranscriptStats,
  limitHitRate,
  type CacheTtlSetting,
  type Section,
  type TranscriptConfig,
  type TranscriptStats,
} from "../core/transcript-types.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import {
  DEFAULT_COMPACTION,
  planFlush,
  predictCut,
  sumRange,
  type CompactionSettings,
  type FlushPlan,
  type ViewShape,
} from "./compaction-plan.js";
import { DEFAULT_SUMMARY_SIZE, SECTION_SUMMARY_SIZE } from "./elider.js";
import { CACHE_TTL_MS, type CacheTtl } from "../cache/cache-rules.js";
import { autoCacheTtl, ttlChoiceRight } from "./cache-ttl-policy.js";
import { assertNever } from "../core/errors.js";

export const DEFAULT_BLOCK_TOKENS = 8_000;
export const DEFAULT_BUDGET_TOKENS = 100_000;
/** How far back from a mark Anthropic's cache looks for an entry (cache-rules.ts has the source). */
const ANTHROPIC_LOOKBACK_BLOCKS = 20;
/** Sections are at most this share of the budget, so a flush can land near its low-water mark. */
const MAX_BLOCK_SHARE = 0.1;

export interface RequestView {
  messages: Message[];
  /** Assistant messages of the log the summaries stand for (0 when nothing is flushed). */
  compactedSteps: number;
  /** Message indexes after which a cache breakpoint may go: the summaries' end, the previous tail, the tail. */
  cacheBreakpoints: number[];
  /** Set when the marks carry the 1-hour TTL (a view asked for with the time it is sent): all of them. */
  cacheOneHourThrough?: number;
}

/** What the mirror needs beyond the task's transcript settings (the replay sweeps these). */
export interface MirrorOptions extends TranscriptConfig {
  compaction?: Partial<Omit<CompactionSettings, "budgetTokens">>;
  /**
   * Chooses each request's TTL in place of `cacheTtl` (the replay's oracle); `index` counts the
   * requests this mirror recorded before.
   */
  chooseCacheTtl?: (atMs: number, index: number) => CacheTtl;
  /** Prices each request as it is counted; without one, costs are not counted (nor unpriced). */
  price?: RequestPricer;
  /** Counts every token the mirror sizes (sections, views, flush triggers). Default chars4. */
  counter?: TokenCounter;
}

export function hashMessages(messages: readonly Message[]): string {
  return createHash("sha256").update(JSON.stringify(messages)).digest("hex").slice(0, 32);
}

/**
 * True when `sections` tile the start of `messages` exactly, each ending at a round boundary
 * (or, for a flushed one, at the end of the log: a flush committed just before its request).
 */
export function sectionsTile(sections: readonly Section[], messages: readonly Message[]): boolean {
  let expectedStart = 0;
  let flushedRun = true;
  for (const s of sections) {
    if (s.start !== expectedStart || s.end <= s.start || s.end > messages.length) return false;
    if (s.summary !== null && !flushedRun) return false;
    if (s.summary === null) flushedRun = false;
    const atEnd = s.end === messages.length;
    if (atEnd ? s.summary === null : messages[s.end]?.role !== "assistant") return false;
    if (hashMessages(messages.slice(s.start, s.end)) !== s.hash) return false;
    expectedStart = s.end;
  }
  return true;
}

/** The text block one flushed section stands as in the request view. */
export function summaryBlockText(section: Section, first: boolean): string {
  const preface = first
    ? "[This conversation was compacted: the blocks below summarize its earlier messages; the messages after them are verbatim.]\n"
    : "";
  return `${preface}[Summary of messages ${section.start + 1}–${section.end}]\n${section.summary ?? ""}`;
}

export class TranscriptMirror {
  readonly blockTokens: number;
  readonly budgetTokens: number;
  readonly settings: CompactionSettings;
  readonly counter: TokenCounter;
  private readonly cacheTtl: CacheTtlSetting;
  private readonly chooseCacheTtl: MirrorOptions["chooseCacheTtl"];
  private readonly price: RequestPricer | null;
  private closed: Section[] = [];
  private pendingAdoption: Section[] | null = null;
  private stats: TranscriptStats;
  /** Per-message token estimates of closed sections' messages, by index. */
  private tokenCache: number[] = [];
  private lastRequestAtMs: number | null = null;
  /** The gaps between the requests this mirror recorded, ms, oldest first. */
  private readonly gapsMs: number[] = [];
  /** The TTL the last view sent at a time chose, until its request is recorded. */
  private viewTtl: CacheTtl | null = null;
  /** The last recorded request's TTL: how long its entries live, and the choice its successor judges. */
  private lastTtl: CacheTtl | null = null;
  private lastUncompactedTokens = 0;
  /** The coming cut the last view marked (null: none, or none since this mirror was made). */
  private markedCut: number | null = null;

  constructor(config: MirrorOptions = {}) {
    this.budgetTokens = config.budgetTokens ?? DEFAULT_BUDGET_TOKENS;
    this.blockTokens = config.blockTokens ?? Math.min(DEFAULT_BLOCK_TOKENS, Math.round(this.budgetTokens * MAX_BLOCK_SHARE));
    const strategy = config.compaction?.strategy ?? DEFAULT_COMPACTION.strategy;
    this.settings = {
      ...DEFAULT_COMPACTION, summarySize: strategy === "sections" ? SECTION_SUMMARY_SIZE : DEFAULT_SUMMARY_SIZE,
      ...config.compaction, budgetTokens: this.budgetTokens,
    };
    this.cacheTtl = config.cacheTtl ?? "5m";
    this.chooseCacheTtl = config.chooseCacheTtl;
    this.price = config.price ?? null;
    this.counter = config.counter ?? chars4Counter;
    this.stats = emptyTranscriptStats(this.blockTokens);
  }

  sections(): Section[] {
    return this.closed.map((s) => ({ ...s }));
  }

  currentStats(): TranscriptStats {
    return {
      ...this.stats, sections: this.closed.length,
      cacheHitRate: cacheHitRate(this.stats), limitHitRate: limitHitRate(this.stats),
    };
  }

  /** Continues counting from saved stats, so a resumed run reads as one. */
  carryStats(saved: TranscriptStats): void {
    this.stats = { ...emptyTranscriptStats(this.blockTokens), ...saved, blockTokens: this.blockTokens };
  }

  resetStats(): void {
    this.stats = emptyTranscriptStats(this.blockTokens);
  }

  /** Sections from a save: adopted at the next request if they tile the log, else rebuilt. */
  adopt(sections: Section[]): void {
    this.pendingAdoption = sections.map((s) => ({ ...s }));
  }

  /**
   * Counts one main request: its usage, its price, its size, and what the limit HR*(B) needs.
   * Returns the price (null without a pricer).
   */
  recordRequest(usage: Usage, request?: { tokens: number; uncompactedTokens: number; atMs: number }): RequestPrice | null {
    const s = this.stats;
    const price = this.countCost(usage, "task");
    s.requests += 1;
    s.inputTokens += usage.inputTokens;
    s.cacheReadTokens += usage.cacheReadTokens;
    s.cacheWriteTokens += usage.cacheWriteTokens;
    s.cacheWrite1hTokens += usage.cacheWrite1hTokens ?? 0;
    s.outputTokens += usage.outputTokens;
    s.reasoningTokens += usage.reasoningTokens ?? 0;
    if (!request) return price;
    s.peakRequestTokens = Math.max(s.peakRequestTokens, request.tokens);
    s.requestTokens += request.tokens;
    s.newTokens += Math.max(0, request.uncompactedTokens - this.lastUncompactedTokens);
    s.budgetedTokens += Math.min(request.uncompactedTokens, this.budgetTokens);
    this.lastUncompactedTokens = request.uncompactedTokens;
    this.countTtl(request.atMs);
    this.lastRequestAtMs = request.atMs;
    return price;
  }

  /** Judges the last request's TTL by the gap now ended, and counts this request's. */
  private countTtl(atMs: number): void {
    const ttl = this.viewTtl ?? "5m";
    this.viewTtl = null;
    if (this.lastRequestAtMs !== null) {
      const gap = atMs - this.lastRequestAtMs;
      this.gapsMs.push(gap);
      if (this.lastTtl !== null) {
        if (ttlChoiceRight(this.lastTtl, gap)) this.stats.ttlChoicesRight += 1;
        else this.stats.ttlChoicesWrong += 1;
      }
    }
    if (ttl === "1h") this.stats.oneHourRequests += 1;
    this.lastTtl = ttl;
  }

  /** Counts one compaction worker request; returns its price (null without a pricer). */
  recordWorker(usage: Usage): RequestPrice | null {
    const s = this.stats;
    const price = this.countCost(usage, "worker");
    s.workerRequests += 1;
    s.workerInputTokens += usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    s.workerCacheReadTokens += usage.cacheReadTokens;
    s.workerCacheWriteTokens += usage.cacheWriteTokens;
    s.workerOutputTokens += usage.outputTokens;
    return price;
  }

  private countCost(usage: Usage, who: "task" | "worker"): RequestPrice | null {
    if (!this.price) return null;
    const price = this.price(usage, who);
    if (!price.priced) this.stats.unpricedRequests += 1;
    else if (who === "task") this.stats.costUsd += price.usd;
    else this.stats.workerCostUsd += price.usd;
    return price;
  }

  /** Brings the tiling up to date with the log; call after every commit and before a request. */
  refresh(messages: readonly Message[]): void {
    if (this.pendingAdoption) {
      this.closed = sectionsTile(this.pendingAdoption, messages) ? this.pendingAdoption : [];
      this.pendingAdoption = null;
      this.tokenCache = [];
    }
    const last = this.closed[this.closed.length - 1];
    if (last && (last.end > messages.length || (last.end < messages.length && messages[last.end]?.role !== "assistant"))) {
      this.closed = [];
      this.tokenCache = [];
    }
    this.closeSections(messages);
  }

  /**
   * How a model worker should send its request for `plan`: only the prefix up to the cut when the
   * last request marked that cut (its cache entry is there to read), else the whole view.
   */
  workerScope(messages: readonly Message[], plan: FlushPlan): "prefix" | "view" {
    const marked = this.markedCut;
    if (marked === null || marked > plan.cut) return "view";
    // A read looks back at most 20 blocks from a mark: the marked entry must be within reach of the cut.
    let blocks = 0;
    for (let i = marked; i < plan.cut; i++) blocks += Math.max(1, messages[i]!.content.length);
    return blocks < ANTHROPIC_LOOKBACK_BLOCKS ? "prefix" : "view";
  }

  /** Where the raw rest of the log starts: the end of the last flushed section. */
  rawStart(): number {
    let start = 0;
    for (const s of this.closed) {
      if (s.summary === null) break;
      start = s.end;
    }
    return start;
  }

  /** The flush the strategy asks for before the next request, or null. */
  planFlush(messages: readonly Message[], fixedTokens: number, nowMs: number): FlushPlan | null {
    this.refresh(messages);
    return planFlush(this.shape(messages, fixedTokens, nowMs), this.settings);
  }

  /** The messages a plan summarizes: the raw ones it covers (and, for a replace, nothing else). */
  flushSource(messages: readonly Message[], plan: FlushPlan): { messages: Message[]; earlierSummaries: string[] } {
    const rawStart = this.rawStart();
    const flushed = this.closed.filter((s) => s.summary !== null);
    return {
      messages: messages.slice(rawStart, plan.cut) as Message[],
      earlierSummaries: plan.mode === "replace" ? flushed.map((s) => s.summary!) : [],
    };
  }

  /** Applies a flush with the worker's summary; the caller commits the `flush` boundary next. */
  applyFlush(messages: readonly Message[], plan: FlushPlan, summary: string): void {
    const rawStart = this.rawStart();
    const start = plan.mode === "replace" ? 0 : rawStart;
    const flushedSection: Section = {
      start, end: plan.cut, hash: hashMessages(messages.slice(start, plan.cut)),
      tokens: sumRange(this.tokensOf(messages), start, plan.cut), summary,
    };
    const kept = this.closed.filter((s) => s.start >= plan.cut);
    const before = plan.mode === "replace" ? [] : this.closed.filter((s) => s.end <= rawStart);
    this.closed = [...before, flushedSection, ...kept];
    this.stats.flushes += 1;
    if (plan.free) this.stats.freeFlushes += 1;
    if (plan.mode === "replace" && plan.merge) this.stats.summaryMerges += 1;
    this.closeSections(messages);
  }

  /**
   * The request view: the summaries message, then the raw rest; and where breakpoints go. Given
   * the time the request is sent, the view also chooses its marks' TTL (the next recorded
   * request counts the choice).
   */
  view(messages: readonly Message[], fixedTokens = 0, sentAtMs?: number): RequestView {
    this.refresh(messages);
    const rawStart = this.rawStart();
    const flushed = this.closed.filter((s) => s.summary !== null);
    const out: Message[] = [];
    if (flushed.length > 0) {
      const content: ContentBlock[] = flushed.map((s, k) => ({ type: "text", text: summaryBlockText(s, k === 0) }));
      out.push({ role: "user", content });
    }
    for (let i = rawStart; i < messages.length; i++) out.push(messages[i]!);
    const breakpoints = new Set<number>();
    if (flushed.length > 0 && out.length > 1) breakpoints.add(0);
    // Where the next flush will likely cut: its worker then reads everything before the cut from the cache.
    const cut = predictCut(this.shape(messages, fixedTokens, 0), this.settings);
    if (cut !== null) breakpoints.add((flushed.length > 0 ? 1 : 0) + (cut - rawStart) - 1);
    this.markedCut = cut;
    // The previous request's tail (just before the newest assistant message): a read is sure to
    // find it even when more than 20 blocks were added since. Derived from the log alone, so a
    // retried or resumed request carries the same marks.
    let lastAssistant = -1;
    for (let i = out.length - 1; i > 0; i--) if (out[i]!.role === "assistant") { lastAssistant = i; break; }
    if (lastAssistant > 0) breakpoints.add(lastAssistant - 1);
    if (out.length > 0) breakpoints.add(out.length - 1);
    let compactedSteps = 0;
    for (let i = 0; i < rawStart; i++) if (messages[i]!.role === "assistant") compactedSteps++;
    const cacheBreakpoints = [...breakpoints].sort((a, b) => a - b);
    if (sentAtMs === undefined) return { messages: out, compactedSteps, cacheBreakpoints };
    const ttl = this.chooseTtl(sentAtMs, () => {
      const promptTokens = this.viewTokens(out, fixedTokens);
      const cacheGone = this.lastRequestAtMs === null || sentAtMs - this.lastRequestAtMs > CACHE_TTL_MS[this.lastTtl ?? "5m"];
      return { writtenTokens: cacheGone ? promptTokens : this.uncompactedTokens(messages, fixedTokens) - this.lastUncompactedTokens, promptTokens };
    });
    this.viewTtl = ttl;
    return { messages: out, compactedSteps, cacheBreakpoints, ...(ttl === "1h" ? { cacheOneHourThrough: out.length - 1 } : {}) };
  }

  /** The TTL for a request sent at `atMs`: the setting's, `auto`'s guess from the gaps so far, or the caller's choice. */
  private chooseTtl(atMs: number, size: () => { writtenTokens: number; promptTokens: number }): CacheTtl {
    const gaps = this.lastRequestAtMs === null ? [] : [...this.gapsMs, atMs - this.lastRequestAtMs];
    if (this.chooseCacheTtl) return this.chooseCacheTtl(atMs, this.lastRequestAtMs === null ? 0 : gaps.length);
    switch (this.cacheTtl) {
      case "5m":
      case "1h":
        return this.cacheTtl;
      case "auto":
        return autoCacheTtl({ gapsMs: gaps, ...size() });
      default:
        return assertNever(this.cacheTtl);
    }
  }

  /** Estimated tokens of the whole log plus `fixedTokens`: the request had nothing been compacted. */
  uncompactedTokens(messages: readonly Message[], fixedTokens: number): number {
    return fixedTokens + sumRange(this.tokensOf(messages), 0, messages.length);
  }

  /** Estimated tokens of a view built by `view`. */
  viewTokens(view: readonly Message[], fixedTokens: number): number {
    return fixedTokens + view.reduce((n, m) => n + this.counter.message(m), 0);
  }

  private shape(messages: readonly Message[], fixedTokens: number, nowMs: number): ViewShape {
    const rawStart = this.rawStart();
    const tokens = this.tokensOf(messages);
    const flushed = this.closed.filter((s) => s.summary !== null);
    const summaryTokens = flushed.length === 0
      ? 0
      : 4 + flushed.reduce((n, s, k) => n + this.counter.text(summaryBlockText(s, k === 0)), 0);
    const roundStarts: number[] = [];
    for (let i = rawStart + 1; i < messages.length; i++) if (messages[i]!.role === "assistant") roundStarts.push(i);
    return {
      fixedTokens, summaryTokens, rawStart, messageTokens: tokens,
      sectionEnds: this.closed.filter((s) => s.summary === null).map((s) => s.end),
      roundStarts,
      idle: this.lastRequestAtMs !== null && nowMs - this.lastRequestAtMs > CACHE_TTL_MS[this.lastTtl ?? "5m"],
    };
  }

  /** Token estimates of every message; closed sections' are computed once. */
  private tokensOf(messages: readonly Message[]): number[] {
    const stable = this.closed[this.closed.length - 1]?.end ?? 0;
    if (this.tokenCache.length > stable) this.tokenCache.length = stable;
    for (let i = this.tokenCache.length; i < stable; i++) this.tokenCache.push(this.counter.message(messages[i]!));
    const out = this.tokenCache.slice();
    for (let i = stable; i < messages.length; i++) out.push(this.counter.message(messages[i]!));
    return out;
  }

  private closeSections(messages: readonly Message[]): void {
    let start = this.closed[this.closed.length - 1]?.end ?? 0;
    let tokens = 0;
    for (let i = start; i < messages.length; i++) {
      if (i > start && messages[i]!.role === "assistant" && tokens >= this.blockTokens) {
        this.closed.push({ start, end: i, hash: hashMessages(messages.slice(start, i)), tokens, summary: null });
        start = i;
        tokens = 0;
      }
      tokens += this.counter.message(messages[i]!);
    }
  }
}

