/**
 * What every importer does alike, as the harnesses' logs need it: the log built message by
 * message (user text merged into the user's turn, a tool result whose call is not in the log
 * kept as user text), one request per model response with its time, bill and model, the
 * harness's own compaction (later requests carry its summary and what follows), the lines
 * skipped counted by kind, and the hidden prefix fitted from the first bill.
 */
import type { CacheRules } from "../../cache/prompt-cache-simulator.js";
import { chars4Counter, type TokenCounter } from "../../core/token-counter.js";
import { promptLayout } from "../../cache/prompt-blocks.js";
import type { ContentBlock, Message, TextBlock, ImageBlock } from "../../core/messages.js";
import type { Usage } from "../../core/provider.js";
import type { ToolSpec } from "../../core/tool.js";
import { DEFAULT_STEP_GAP_MS, pushUserText, sentMessages, type ReplayRequest, type ReplaySession, type SessionFormat } from "../replay-session.js";

export interface RequestFacts {
  /** When the response was recorded, ms since the epoch; NaN when unknown. */
  atMs: number;
  billed?: Usage;
  model?: string;
}

export class SessionBuilder {
  readonly messages: Message[] = [];
  readonly requests: ReplayRequest[] = [];
  private readonly skippedKinds = new Map<string, number>();
  private readonly callIds = new Set<string>();
  private lead: Message[] | null = null;
  private leadFrom = 0;

  constructor(readonly name: string, readonly format: SessionFormat) {}

  skip(kind: string, count = 1): void {
    if (count > 0) this.skippedKinds.set(kind, (this.skippedKinds.get(kind) ?? 0) + count);
  }

  userText(text: string): void {
    pushUserText(this.messages, text);
  }

  /** User content; a tool result whose call the log lacks becomes text. */
  userBlocks(blocks: readonly ContentBlock[]): void {
    const content = blocks.map((b): ContentBlock => (b.type === "tool_result" && !this.callIds.has(b.callId) ? { type: "text", text: resultText(b.content) } : b));
    if (content.length === 0) return;
    const last = this.messages[this.messages.length - 1];
    if (last?.role === "user") last.content.push(...content);
    else this.messages.push({ role: "user", content });
  }

  /** A model response: its request (sent with the log so far), then the message. Returns the message's index. */
  assistant(blocks: readonly ContentBlock[], facts: RequestFacts): number {
    this.requests.push({
      logLength: this.messages.length,
      atMs: facts.atMs,
      ...(facts.billed ? { billed: facts.billed } : {}),
      ...(facts.model ? { model: facts.model } : {}),
      ...(this.lead ? { sent: { lead: this.lead, from: this.leadFrom } } : {}),
    });
    this.messages.push({ role: "assistant", content: [] });
    const index = this.messages.length - 1;
    this.extendAssistant(index, blocks);
    return index;
  }

  /** More blocks of a response already begun (a log that writes one line per block). */
  extendAssistant(index: number, blocks: readonly ContentBlock[]): void {
    for (const b of blocks) if (b.type === "tool_call") this.callIds.add(b.id);
    this.messages[index]!.content.push(...blocks);
  }

  /** Updates the bill of the request that `index`'s message answers (the last line of a response carries the final one). */
  rebill(index: number, billed: Usage): void {
    const request = this.requests.find((r) => r.logLength === index);
    if (request) request.billed = billed;
  }

  /** The harness compacted: from here on its requests carry `summary`, then the log from this point. */
  compact(summary: Message): void {
    this.lead = [summary];
    this.leadFrom = this.messages.length;
  }

  finish(prefix: { system: string | null; tools: ToolSpec[]; fitHiddenPrefix: boolean; cache?: CacheRules }): ReplaySession {
    const session: ReplaySession = {
      name: this.name, system: prefix.system, tools: prefix.tools, messages: this.messages,
      requests: relativeTimes(this.requests), format: this.format,
      ...(prefix.cache ? { cache: prefix.cache } : {}),
    };
    if (prefix.fitHiddenPrefix) session.prefixTokens = hiddenPrefixTokens(session);
    if (this.skippedKinds.size > 0) session.skipped = Object.fromEntries([...this.skippedKinds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return session;
  }
}

/** Times from the first request on; an unknown time is a default step after the one before. */
function relativeTimes(requests: readonly ReplayRequest[]): ReplayRequest[] {
  const start = requests.find((r) => Number.isFinite(r.atMs))?.atMs ?? 0;
  let previous: number | null = null;
  return requests.map((r) => {
    const atMs: number = Number.isFinite(r.atMs) ? r.atMs - start : previous === null ? 0 : previous + DEFAULT_STEP_GAP_MS;
    previous = atMs;
    return { ...r, atMs };
  });
}

/**
 * The tokens the first billed request carried beyond what the log shows it: its billed prompt
 * (input + cache read + cache write) less the estimate of its visible prompt, never below 0.
 */
export function hiddenPrefixTokens(session: ReplaySession, counter: TokenCounter = chars4Counter): number {
  const first = session.requests.find((r) => r.billed);
  if (!first?.billed) return 0;
  const billed = first.billed.inputTokens + first.billed.cacheReadTokens + first.billed.cacheWriteTokens;
  return Math.max(0, billed - visiblePromptTokens(session, first, counter));
}

/** The tokens `counter` counts for what the log shows `request` carried, as the simulator lays it out. */
export function visiblePromptTokens(session: ReplaySession, request: ReplayRequest, counter: TokenCounter = chars4Counter): number {
  const layout = promptLayout({ system: session.system, tools: session.tools, messages: sentMessages(session, request), cacheBreakpoints: [] }, new WeakMap(), counter);
  return layout.blocks.reduce((n, b) => n + (b.tokens ?? 0), 0);
}

function resultText(content: string | Array<TextBlock | ImageBlock>): string {
  return typeof content === "string" ? content : content.map((b) => (b.type === "text" ? b.text : "")).join("");
}

/** An ISO time as ms since the epoch; NaN when absent or not a time. */
export function isoMs(value: unknown): number {
  return typeof value === "string" ? Date.parse(value) : NaN;
}

/** A whole number of tokens from a log's field; 0 when absent or not a count. */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}
