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
  flushes: number;
  blockTokens: number;
  sections: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of `cacheWriteTokens`, those with the 1-hour TTL; absent means 0. */
  cacheWrite1hTokens?: number;
  outputTokens: number;
  workerRequests: number;
  workerInputTokens: number;
  workerOutputTokens: number;
  /** cacheRead / (input + cacheRead + cacheWrite); 0 before any request. */
  cacheHitRate: number;
}

export interface TranscriptConfig {
  /** Target size of one section, in estimated tokens. */
  blockTokens?: number;
  /** The request view is kept under this many estimated tokens by flushing old sections. */
  budgetTokens?: number;
}

export function emptyTranscriptStats(blockTokens: number): TranscriptStats {
  return {
    requests: 0, flushes: 0, blockTokens, sections: 0,
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0,
    workerRequests: 0, workerInputTokens: 0, workerOutputTokens: 0, cacheHitRate: 0,
  };
}

export function cacheHitRate(s: Pick<TranscriptStats, "inputTokens" | "cacheReadTokens" | "cacheWriteTokens">): number {
  const prompt = s.inputTokens + s.cacheReadTokens + s.cacheWriteTokens;
  return prompt === 0 ? 0 : s.cacheReadTokens / prompt;
}

/** Sums stats (for a suite or a whole run); `blockTokens` is kept when all agree, else 0. */
export function sumTranscriptStats(all: readonly TranscriptStats[]): TranscriptStats {
  const blocks = new Set(all.map((s) => s.blockTokens));
  const total = emptyTranscriptStats(blocks.size === 1 ? [...blocks][0]! : 0);
  for (const s of all) {
    total.requests += s.requests; total.flushes += s.flushes; total.sections += s.sections;
    total.inputTokens += s.inputTokens; total.cacheReadTokens += s.cacheReadTokens;
    total.cacheWriteTokens += s.cacheWriteTokens; total.outputTokens += s.outputTokens;
    if (s.cacheWrite1hTokens) total.cacheWrite1hTokens = (total.cacheWrite1hTokens ?? 0) + s.cacheWrite1hTokens;
    total.workerRequests += s.workerRequests; total.workerInputTokens += s.workerInputTokens;
    total.workerOutputTokens += s.workerOutputTokens;
  }
  total.cacheHitRate = cacheHitRate(total);
  return total;
}
