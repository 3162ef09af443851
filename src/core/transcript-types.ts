/**
 * The transcript mirror's shapes, shared by the engine, the runner's reports and the
 * compaction worker. The logic lives in src/transcript.
 */

/** A contiguous range of session messages `[start, end)`, closed at a round boundary. */
export interface Section {
  start: number;
  end: number;
  /** Hash of the messages the section covers, so a resumed log can tell whether it still tiles. */
  hash: string;
  /** Estimated tokens of the raw messages. */
  tokens: number;
  /** The summary that replaces the messages in requests once flushed; null while raw. */
  summary: string | null;
}

export interface TranscriptStats {
  requests: number;
  /** Compaction flushes, free ones included. */
  flushes: number;
  /** Flushes made when the cache had expired anyway (an idle gap past its TTL): they cost no cache. */
  freeFlushes: number;
  /** Second-level compactions: the summaries merged into one. */
  summaryMerges: number;
  blockTokens: number;
  sections: number;
  inputTokens: number;
  cacheReadTokens: number;
  /** Cache writes of every TTL; `cacheWrite1hTokens` of them with the 1-hour TTL. */
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  /** Output tokens, reasoning included; `reasoningTokens` of them spent reasoning (a part, never on top). */
  outputTokens: number;
  reasoningTokens: number;
  /** The largest request sent, in estimated tokens. */
  peakRequestTokens: number;
  /** Σ estimated tokens of the requests sent (the context they carried). */
  requestTokens: number;
  workerRequests: number;
  /** The compaction worker's prompt tokens, cached ones included (its figures are counted apart). */
  workerInputTokens: number;
  workerCacheReadTokens: number;
  workerCacheWriteTokens: number;
  workerOutputTokens: number;
  /** Σ tokens new to each request (appended since the one before): what no cache can save. */
  newTokens: number;
  /** Σ min(uncompacted request tokens, budget): the context a request could have carried. */
  budgetedTokens: number;
  /** Dollars of the task model's priced requests (the worker's are in `workerCostUsd`). */
  costUsd: number;
  /** Dollars of the compaction worker's priced requests. */
  workerCostUsd: number;
  /** Requests (task and worker) with no known price: their cost is unknown, not $0. */
  unpricedRequests: number;
  /** Main requests whose cache marks carried the 1-hour TTL. */
  oneHourRequests: number;
  /**
   * Of the TTL choices a later request judged (the last request's is never judged): right when
   * the choice was 1 hour exactly for a gap that outlived 5 minutes but not an hour.
   */
  ttlChoicesRight: number;
  ttlChoicesWrong: number;
  /** cacheRead / (input + cacheRead + cacheWrite); 0 before any request. */
  cacheHitRate: number;
  /** The limit HR*(B) = 1 − newTokens / budgetedTokens; 0 before any request. */
  limitHitRate: number;
}

/**
 * The providers that run a named model. Core may not import the provider registry: a test
 * (test/providers/provider-registry.test.ts) checks this type equals the registry's `NamedProviderName`.
 */
export type ModelProviderName = "anthropic" | "openai" | "openai-responses" | "gemini" | "anthropic-bedrock" | "anthropic-vertex";

/** The model that summarizes flushed sections; unset: the task's own model (the elider when scripted). */
export interface TranscriptWorkerConfig {
  provider: ModelProviderName;
  name: string;
}

/** The TTL of the cache marks: always 5 minutes, always 1 hour, or chosen per request (transcript/cache-ttl-policy.ts). */
export type CacheTtlSetting = "5m" | "1h" | "auto";

export interface TranscriptConfig {
  /** The cache marks' TTL; default 5 minutes. */
  cacheTtl?: CacheTtlSetting;
  /** Target size of one section, in estimated tokens. */
  blockTokens?: number;
  /** The request view is kept under this many estimated tokens by flushing old sections. */
  budgetTokens?: number;
  worker?: TranscriptWorkerConfig;
}

export function emptyTranscriptStats(blockTokens: number): TranscriptStats {
  return {
    requests: 0, flushes: 0, freeFlushes: 0, summaryMerges: 0, blockTokens, sections: 0,
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, outputTokens: 0, reasoningTokens: 0,
    peakRequestTokens: 0, requestTokens: 0, workerRequests: 0, workerInputTokens: 0, workerCacheReadTokens: 0,
    workerCacheWriteTokens: 0, workerOutputTokens: 0, newTokens: 0, budgetedTokens: 0,
    costUsd: 0, workerCostUsd: 0, unpricedRequests: 0, oneHourRequests: 0, ttlChoicesRight: 0, ttlChoicesWrong: 0,
    cacheHitRate: 0, limitHitRate: 0,
  };
}

export function cacheHitRate(s: Pick<TranscriptStats, "inputTokens" | "cacheReadTokens" | "cacheWriteTokens">): number {
  const prompt = s.inputTokens + s.cacheReadTokens + s.cacheWriteTokens;
  return prompt === 0 ? 0 : s.cacheReadTokens / prompt;
}

export function limitHitRate(s: Pick<TranscriptStats, "newTokens" | "budgetedTokens">): number {
  return s.budgetedTokens === 0 ? 0 : Math.max(0, 1 - s.newTokens / s.budgetedTokens);
}

/**
 * Input priced as plain input tokens: input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 ×
 * reads (Anthropic's multipliers), the main requests' and the worker's together.
 */
export function billedEquivalentInput(s: TranscriptStats): number {
  const fiveMinute = s.cacheWriteTokens - s.cacheWrite1hTokens;
  const workerInput = s.workerInputTokens - s.workerCacheReadTokens - s.workerCacheWriteTokens;
  return s.inputTokens + 1.25 * fiveMinute + 2 * s.cacheWrite1hTokens + 0.1 * s.cacheReadTokens
    + workerInput + 1.25 * s.workerCacheWriteTokens + 0.1 * s.workerCacheReadTokens;
}

/** What the requests cost in all, the worker's included; null when none of them had a price. */
export function totalCostUsd(s: Pick<TranscriptStats, "costUsd" | "workerCostUsd" | "unpricedRequests" | "requests" | "workerRequests">): number | null {
  const all = s.requests + s.workerRequests;
  if (all > 0 && s.unpricedRequests >= all) return null;
  return s.costUsd + s.workerCostUsd;
}

/** Every token the model was sent and wrote — input, cache reads and writes, output — the worker's included. */
export function spentTokens(s: TranscriptStats): number {
  return s.inputTokens + s.cacheReadTokens + s.cacheWriteTokens + s.outputTokens + s.workerInputTokens + s.workerOutputTokens;
}

const SUMMED = [
  "requests", "flushes", "freeFlushes", "summaryMerges", "sections", "inputTokens", "cacheReadTokens",
  "cacheWriteTokens", "cacheWrite1hTokens", "outputTokens", "reasoningTokens", "workerRequests", "workerInputTokens",
  "workerCacheReadTokens", "workerCacheWriteTokens", "workerOutputTokens", "newTokens", "budgetedTokens", "requestTokens",
  "costUsd", "workerCostUsd", "unpricedRequests", "oneHourRequests", "ttlChoicesRight", "ttlChoicesWrong",
] as const satisfies ReadonlyArray<keyof TranscriptStats>;

/** Sums stats (for a suite or a whole run); `blockTokens` is kept when all agree, else 0. */
export function sumTranscriptStats(all: readonly TranscriptStats[]): TranscriptStats {
  const blocks = new Set(all.map((s) => s.blockTokens));
  const total = emptyTranscriptStats(blocks.size === 1 ? [...blocks][0]! : 0);
  for (const s of all) {
    for (const key of SUMMED) total[key] += s[key];
    total.peakRequestTokens = Math.max(total.peakRequestTokens, s.peakRequestTokens);
  }
  total.cacheHitRate = cacheHitRate(total);
  total.limitHitRate = limitHitRate(total);
  return total;
}
