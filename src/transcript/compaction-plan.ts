/**
 * When and what to compact: pure decisions over the shape of the request view.
 *
 * The view is `fixed` (system prompt and tools) + the summaries of flushed messages + the raw
 * rest. A plan says where the new summary ends (`cut`, a round boundary) and whether it is
 * appended after the earlier summaries (the older prefix stays byte-stable and cached) or
 * replaces them (one summary of everything before `cut`: the whole prefix is new).
 *
 * Strategies:
 * - `sections` (rhema's): when the view would pass the budget, flush the oldest raw sections
 *   into one appended summary until the view is at the low-water mark, never cutting into the
 *   newest `minTailShare` of the budget while the budget allows; merge the summaries into one
 *   when they pass `mergeShare` of the budget (rare). When the cache has expired anyway (an
 *   idle gap past its TTL) a flush is free: flush early, at any size above the low-water mark.
 * - `summarize-all` (Claude Code-like): at `summarizeAllAt` of the budget, everything becomes
 *   one summary.
 * - `keep-recent` (Gemini CLI / pi-like): at the budget, everything but the newest
 *   `keepRecentShare` of the budget becomes one summary that replaces the old one.
 * - `none`: append-only.
 */
import { summaryTargetTokens, type SummarySize } from "./elider.js";

export const STRATEGY_NAMES = ["sections", "summarize-all", "keep-recent", "none"] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export interface CompactionSettings {
  strategy: StrategyName;
  budgetTokens: number;
  /** Sections strategy: the view after a flush is at most this share of the budget. */
  lowWaterShare: number;
  /** Sections strategy: a flush keeps at least this share of the budget as raw recent messages. */
  minTailShare: number;
  /** Sections strategy: summaries are merged into one when they pass this share of the budget. */
  mergeShare: number;
  /** summarize-all: the share of the budget at which everything is summarized. */
  summarizeAllAt: number;
  /** keep-recent: the share of the budget kept verbatim. */
  keepRecentShare: number;
  summarySize: SummarySize;
}

export const DEFAULT_COMPACTION: Omit<CompactionSettings, "budgetTokens" | "summarySize"> = {
  strategy: "sections",
  lowWaterShare: 0.4,
  minTailShare: 0.25,
  mergeShare: 0.3,
  summarizeAllAt: 0.8,
  keepRecentShare: 0.3,
};

/** What a planner sees: token counts only, so it stays pure and cheap. */
export interface ViewShape {
  /** System prompt and tool definitions. */
  fixedTokens: number;
  /** Tokens of the summaries (the summary message), 0 when nothing is flushed. */
  summaryTokens: number;
  /** Where the raw rest starts in the log. */
  rawStart: number;
  /** Estimated tokens of each log message (the whole log). */
  messageTokens: readonly number[];
  /** Message indexes where a raw closed section ends (each a round boundary), oldest first. */
  sectionEnds: readonly number[];
  /** Indexes of every round boundary after rawStart (an assistant message starts there). */
  roundStarts: readonly number[];
  /** The cache expired since the last request: rewriting the prefix costs nothing extra. */
  idle: boolean;
}

export type FlushPlan =
  | { mode: "append"; cut: number; free: boolean }
  | { mode: "replace"; cut: number; free: boolean; merge: boolean };

export function viewTokens(shape: ViewShape): number {
  return shape.fixedTokens + shape.summaryTokens + sumRange(shape.messageTokens, shape.rawStart, shape.messageTokens.length);
}

export function planFlush(shape: ViewShape, settings: CompactionSettings): FlushPlan | null {
  switch (settings.strategy) {
    case "sections": return planSections(shape, settings);
    case "summarize-all": return planSummarizeAll(shape, settings);
    case "keep-recent": return planKeepRecent(shape, settings);
    case "none": return null;
  }
}

function planSections(shape: ViewShape, s: CompactionSettings): FlushPlan | null {
  const budget = s.budgetTokens;
  const total = viewTokens(shape);
  const lowWater = s.lowWaterShare * budget;
  const over = total > budget;
  const free = !over && shape.idle && total > lowWater;
  if (!over && !free) return null;
  const n = shape.messageTokens.length;
  const minTail = s.minTailShare * budget;
  const after = (end: number) => {
    const covered = sumRange(shape.messageTokens, shape.rawStart, end);
    return total - covered + summaryTargetTokens(covered, s.summarySize);
  };
  // As deep as the raw tail floor allows (a free flush stops at the low-water mark), and past the
  // floor only when nothing less brings the view under the budget. The requests have marked
  // `predictCut`'s end, which is this one or near it, so the worker reads the prefix from the cache.
  let cut = shape.rawStart;
  let projected = total;
  for (const end of shape.sectionEnds) {
    if (free && projected <= lowWater) break;
    if (sumRange(shape.messageTokens, end, n) < minTail && projected <= budget) break;
    cut = end;
    projected = after(cut);
  }
  if (cut === shape.rawStart) return null;
  return withMerge(shape, s, cut, free);
}

/** An appended summary, or — when the summaries would pass their share of the budget — a merge. */
function withMerge(shape: ViewShape, s: CompactionSettings, cut: number, free: boolean): FlushPlan {
  const summaries = shape.summaryTokens + summaryTargetTokens(sumRange(shape.messageTokens, shape.rawStart, cut), s.summarySize);
  if (summaries > s.mergeShare * s.budgetTokens) return { mode: "replace", cut, free: free || shape.idle, merge: true };
  return { mode: "append", cut, free: free || shape.idle };
}

/**
 * Sections strategy: where the next flush will most likely cut — the deepest raw section end that
 * still leaves the raw tail floor when the view reaches the budget (a deep flush is a rare one).
 * The mirror marks it in every request, so the worker's request for that flush reads the whole
 * prefix up to the cut from the cache. Null for the other strategies, or when no end qualifies yet.
 */
export function predictCut(shape: ViewShape, s: CompactionSettings): number | null {
  if (s.strategy !== "sections") return null;
  // When the view reaches the budget, a cut at `end` keeps B − fixed − summaries − the new summary − covered raw.
  const room = s.budgetTokens * (1 - s.minTailShare) - shape.fixedTokens - shape.summaryTokens;
  let best: number | null = null;
  for (const end of shape.sectionEnds) {
    const covered = sumRange(shape.messageTokens, shape.rawStart, end);
    if (covered + summaryTargetTokens(covered, s.summarySize) > room) break;
    best = end;
  }
  return best;
}

function planSummarizeAll(shape: ViewShape, s: CompactionSettings): FlushPlan | null {
  if (viewTokens(shape) <= s.summarizeAllAt * s.budgetTokens) return null;
  return { mode: "replace", cut: shape.messageTokens.length, free: shape.idle, merge: false };
}

function planKeepRecent(shape: ViewShape, s: CompactionSettings): FlushPlan | null {
  if (viewTokens(shape) <= s.budgetTokens) return null;
  const n = shape.messageTokens.length;
  const keep = s.keepRecentShare * s.budgetTokens;
  // The earliest round boundary whose tail fits what is kept verbatim.
  const cut = shape.roundStarts.find((i) => sumRange(shape.messageTokens, i, n) <= keep) ?? n;
  if (cut <= shape.rawStart && shape.summaryTokens === 0) return null;
  return { mode: "replace", cut: Math.max(cut, shape.rawStart), free: shape.idle, merge: false };
}

export function sumRange(values: readonly number[], from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += values[i]!;
  return sum;
}
