/**
 * The transcript mirror: tiles the session log into sections and keeps the transcript stats.
 *
 * A section is a contiguous range of messages `[start, end)` closed at a round boundary: it ends
 * just before an assistant message, so a tool call is never split from its result and no closed
 * section can change (only the trailing user message is ever merged into). Tiling is
 * incremental — each commit looks only at messages after the last closed section.
 *
 * Flushing old sections into summaries (compaction) belongs to the transcript issue; until it
 * lands the request view is the whole log, and the prefix-stable breakpoint is the last
 * section's end.
 */
import { createHash } from "node:crypto";
import type { Message } from "../core/messages.js";
import { addUsage, type Usage } from "../core/provider.js";
import {
  cacheHitRate,
  emptyTranscriptStats,
  type Section,
  type TranscriptConfig,
  type TranscriptStats,
} from "../core/transcript-types.js";
import { estimateMessageTokens } from "../core/token-estimate.js";

export const DEFAULT_BLOCK_TOKENS = 8_000;
export const DEFAULT_BUDGET_TOKENS = 100_000;

export interface RequestView {
  messages: Message[];
  /** Message indexes after which a cache breakpoint may go: the stable prefix end, the tail. */
  cacheBreakpoints: number[];
}

export function hashMessages(messages: readonly Message[]): string {
  return createHash("sha256").update(JSON.stringify(messages)).digest("hex").slice(0, 32);
}

/** True when `sections` tile the start of `messages` exactly, each ending at a round boundary. */
export function sectionsTile(sections: readonly Section[], messages: readonly Message[]): boolean {
  let expectedStart = 0;
  for (const s of sections) {
    if (s.start !== expectedStart || s.end <= s.start || s.end >= messages.length) return false;
    if (messages[s.end]?.role !== "assistant") return false;
    if (hashMessages(messages.slice(s.start, s.end)) !== s.hash) return false;
    expectedStart = s.end;
  }
  return true;
}

export class TranscriptMirror {
  readonly blockTokens: number;
  readonly budgetTokens: number;
  private closed: Section[] = [];
  private pendingAdoption: Section[] | null = null;
  private stats: TranscriptStats;

  constructor(config: TranscriptConfig = {}) {
    this.blockTokens = config.blockTokens ?? DEFAULT_BLOCK_TOKENS;
    this.budgetTokens = config.budgetTokens ?? DEFAULT_BUDGET_TOKENS;
    this.stats = emptyTranscriptStats(this.blockTokens);
  }

  sections(): Section[] {
    return this.closed.map((s) => ({ ...s }));
  }

  currentStats(): TranscriptStats {
    return { ...this.stats, sections: this.closed.length, cacheHitRate: cacheHitRate(this.stats) };
  }

  /** Continues counting from saved stats, so a resumed run reads as one. */
  carryStats(saved: TranscriptStats): void {
    this.stats = { ...saved, blockTokens: this.blockTokens };
  }

  resetStats(): void {
    this.stats = emptyTranscriptStats(this.blockTokens);
  }

  /** Sections from a save: adopted at the next request if they tile the log, else rebuilt. */
  adopt(sections: Section[]): void {
    this.pendingAdoption = sections.map((s) => ({ ...s }));
  }

  recordRequest(usage: Usage): void {
    const sum = addUsage(this.stats, usage);
    this.stats = { ...this.stats, ...sum, requests: this.stats.requests + 1 };
  }

  /** Brings the tiling up to date with the log; call after every commit and before a request. */
  refresh(messages: readonly Message[]): void {
    if (this.pendingAdoption) {
      this.closed = sectionsTile(this.pendingAdoption, messages) ? this.pendingAdoption : [];
      this.pendingAdoption = null;
    }
    const lastEnd = this.closed[this.closed.length - 1]?.end ?? 0;
    if (lastEnd > messages.length || (lastEnd > 0 && messages[lastEnd]?.role !== "assistant")) this.closed = [];
    this.closeSections(messages);
  }

  view(messages: readonly Message[]): RequestView {
    this.refresh(messages);
    const breakpoints: number[] = [];
    const stableEnd = this.closed[this.closed.length - 1]?.end;
    if (stableEnd !== undefined && stableEnd - 1 < messages.length - 1) breakpoints.push(stableEnd - 1);
    if (messages.length > 0) breakpoints.push(messages.length - 1);
    return { messages: messages as Message[], cacheBreakpoints: breakpoints };
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
      tokens += estimateMessageTokens(messages[i]!);
    }
  }
}
