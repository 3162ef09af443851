/**
 * The deterministic elider: a summary of a run of messages without a model. It keeps every
 * message in order — each user text, each assistant text, each tool call with its input, each
 * tool result with its outcome — and cuts long texts to their head and tail so the whole fits a
 * token target. It is the compaction worker when the task's model is scripted (a model worker
 * would consume the script's steps) and the fallback when a model worker fails; the replay
 * also uses it to size the summaries a model would write.
 */
import type { ContentBlock, Message } from "../core/messages.js";
import { CHARS_PER_TOKEN } from "../core/token-estimate.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";

/** What a summary may cost: a share of what it covers, within bounds. */
export interface SummarySize {
  /** Share of the covered tokens the summary may take. Default 0.1. */
  ratio: number;
  minTokens: number;
  maxTokens: number;
}

/** One summary of everything so far (summarize-all, keep-recent): a tenth, at most 4,000 tokens. */
export const DEFAULT_SUMMARY_SIZE: SummarySize = { ratio: 0.1, minTokens: 200, maxTokens: 4_000 };
/**
 * One summary per flush, appended after the earlier ones (sections): a twentieth of what it
 * covers. They add up over a long task, so each is half the share of a one-off summary; the
 * replay shows smaller ones cost less per retained context (fewer merges, longer cycles).
 */
export const SECTION_SUMMARY_SIZE: SummarySize = { ratio: 0.05, minTokens: 200, maxTokens: 2_000 };

/** The token target of a summary of `coveredTokens` tokens. */
export function summaryTargetTokens(coveredTokens: number, size: SummarySize = DEFAULT_SUMMARY_SIZE): number {
  return Math.round(Math.min(size.maxTokens, Math.max(size.minTokens, coveredTokens * size.ratio)));
}

/** A line of the summary before cutting: a label and the text that may be cut. */
interface Item {
  label: string;
  text: string;
}

/** Never cut a text below this many characters (head + tail): shorter cuts say nothing. */
const MIN_KEPT_CHARS = 40;

/**
 * Summarizes `messages` (after any `earlier` summaries it replaces) into about `targetTokens`
 * tokens of plain text. When even the shortest line per item would not fit, the middle items
 * go and a line says how many.
 */
export function elideMessages(messages: readonly Message[], targetTokens: number, earlier: readonly string[] = []): string {
  return elideToChars(messages, targetTokens * CHARS_PER_TOKEN, earlier);
}

/** `elideMessages` to a budget in characters (a counter's characters a token × the target). */
export function elideToChars(messages: readonly Message[], budgetChars: number, earlier: readonly string[] = []): string {
  const all: Item[] = [
    ...earlier.map((text) => ({ label: "Earlier summary", text: oneSpace(text) })),
    ...messages.flatMap((m) => m.content.map((b) => itemOf(m.role, b))),
  ];
  if (all.length === 0) return "(nothing to summarize)";
  const items = fitCount(all, budgetChars);
  const labelChars = items.reduce((n, i) => n + i.label.length + 3, 0);
  const caps = fairShares(items.map((i) => i.text.length), Math.max(budgetChars - labelChars, items.length * MIN_KEPT_CHARS));
  return items.map((item, k) => (item.text === "" ? item.label : `${item.label}: ${cutMiddle(item.text, caps[k]!)}`)).join("\n");
}

/** Keeps the first and last items that fit at their shortest, and a line for those left out between. */
function fitCount(items: Item[], budgetChars: number): Item[] {
  const shortest = (i: Item) => i.label.length + 3 + Math.min(i.text.length, MIN_KEPT_CHARS + 24);
  let total = items.reduce((n, i) => n + shortest(i), 0);
  if (total <= budgetChars) return items;
  const head: Item[] = [];
  const tail: Item[] = [];
  let lo = 0;
  let hi = items.length - 1;
  total = 0;
  // Alternate from both ends, favouring the newest: they say where the work stands.
  while (lo <= hi) {
    const next = tail.length <= head.length ? items[hi]! : items[lo]!;
    if (total + shortest(next) > budgetChars - 40) break;
    total += shortest(next);
    if (next === items[hi]) { tail.unshift(next); hi--; } else { head.push(next); lo++; }
  }
  const dropped = hi - lo + 1;
  return dropped > 0 ? [...head, { label: `[${dropped} earlier items cut]`, text: "" }, ...tail] : [...head, ...tail];
}

function itemOf(role: Message["role"], block: ContentBlock): Item {
  switch (block.type) {
    case "text":
      return { label: role === "user" ? "User" : "Assistant", text: oneSpace(block.text) };
    case "image":
      return { label: role === "user" ? "User" : "Assistant", text: `[image ${block.mediaType}]` };
    case "reasoning":
      return { label: "Reasoning", text: oneSpace(block.summary) };
    case "tool_call":
      return { label: `Call ${block.name}`, text: oneSpace(JSON.stringify(block.input ?? null)) };
    case "tool_result": {
      const text = typeof block.content === "string"
        ? block.content
        : block.content.map((b) => (b.type === "text" ? b.text : `[image ${b.mediaType}]`)).join("\n");
      return { label: block.isError ? "Result (error)" : "Result", text: oneSpace(text) };
    }
  }
}

function oneSpace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * Water-filling: each length gets at most `cap` where the caps sum to `budget`, short texts
 * keep all of theirs and the long ones share the rest equally.
 */
export function fairShares(lengths: readonly number[], budget: number): number[] {
  const order = lengths.map((len, i) => ({ len, i })).sort((a, b) => a.len - b.len);
  const caps = new Array<number>(lengths.length).fill(0);
  let left = budget;
  for (const [k, { len, i }] of order.entries()) {
    const fair = Math.floor(left / (order.length - k));
    caps[i] = Math.min(len, fair);
    left -= caps[i]!;
  }
  return caps;
}

/** `text` cut to `maxChars` by dropping its middle, saying how much was cut. */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(MIN_KEPT_CHARS, maxChars);
  const head = Math.ceil(keep * 0.6);
  const tail = keep - head;
  return `${text.slice(0, head)} …[${text.length - keep} chars cut]… ${text.slice(text.length - tail)}`;
}

/** The counted tokens of a summary text as it stands in a request. */
export function summaryTokens(summary: string, counter: TokenCounter = chars4Counter): number {
  return counter.text(summary);
}
