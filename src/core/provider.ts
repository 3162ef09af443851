/**
 * The model port. A provider turns a `ModelRequest` into a stream of events; adapters for real
 * APIs live in src/providers and never import tools.
 */
import type { Message } from "./messages.js";
import type { ToolSpec } from "./tool.js";

export interface ModelRequest {
  system: string | null;
  tools: ToolSpec[];
  messages: Message[];
  /**
   * Message indexes after which the provider may place a prompt-cache breakpoint (the end of
   * the stable prefix and the conversation tail). Providers with explicit caching also mark
   * the end of tools+system themselves. Providers without explicit caching ignore it.
   */
  cacheBreakpoints: number[];
  /**
   * Optional, for a stable prefix that should outlive pauses: the tools+system mark and every
   * breakpoint at a message index ≤ this one are written with the 1-hour TTL instead of the
   * default 5 minutes; -1 gives only the tools+system mark the hour. Absent: every mark is
   * 5 minutes, as before. One cut rather than a TTL per mark because Anthropic rejects a
   * 1-hour mark that follows a 5-minute one: a cut can only say what the API accepts.
   */
  cacheOneHourThrough?: number;
  maxOutputTokens?: number;
  /**
   * How many assistant messages of the conversation the request's leading summaries stand for
   * (0 or absent: nothing is compacted). Real APIs ignore it; the scripted provider counts its
   * position in the script with it, since compaction takes assistant messages out of the view.
   */
  compactedSteps?: number;
  /**
   * The JSON Schema the turn's final answer must follow (a task's `output:`), for a provider that
   * can constrain its text to a schema (the Responses API's `text.format`); the others ignore it,
   * as the `final_answer` tool carries the same schema in `tools` (so a cassette's request key
   * leaves it out: `tools` decides it).
   */
  outputSchema?: Record<string, unknown>;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "other";

/** `inputTokens` excludes cached tokens: input + cacheRead + cacheWrite is the whole prompt. */
export interface Usage {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of `cacheWriteTokens`, those written with the 1-hour TTL (priced higher); absent means 0. */
  cacheWrite1hTokens?: number;
  /** Every token the model wrote, billed at the output price, reasoning included. */
  outputTokens: number;
  /**
   * Of `outputTokens`, those the model spent reasoning (OpenAI's `reasoning_tokens`, Anthropic's
   * `thinking_tokens`): a part, never added on top. Absent means unknown or 0.
   */
  reasoningTokens?: number;
}

/** What one request cost: dollars, or unpriced (a model with no known price — never $0). */
export type RequestPrice = { priced: true; usd: number } | { priced: false };

/**
 * Prices one request's usage; `who` says whether it was the task's own model or the compaction
 * worker's (which may be another model). The runner builds one from the price table.
 */
export type RequestPricer = (usage: Usage, who: "task" | "worker") => RequestPrice;

export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 });

/** The sum of two usages; `cacheWrite1hTokens` and `reasoningTokens` appear only when one of them has some. */
export function addUsage(a: Usage, b: Usage): Usage {
  const hour = (a.cacheWrite1hTokens ?? 0) + (b.cacheWrite1hTokens ?? 0);
  const reasoning = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    ...(hour > 0 ? { cacheWrite1hTokens: hour } : {}),
    outputTokens: a.outputTokens + b.outputTokens,
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

export type StreamEvent =
  | { type: "text"; delta: string }
  | { type: "tool_call"; id: string; name: string; input: unknown }
  /** A reasoning item to carry back in the conversation (see `ReasoningBlock`): kept in the assistant message, never shown. */
  | { type: "reasoning"; provider: string; id: string; data: string; summary: string }
  | { type: "usage"; usage: Usage }
  | { type: "stop"; reason: StopReason };

/**
 * Contract: `stream` yields text deltas and complete tool calls in the order the model produced
 * them, at most one `usage` (the request's totals) and exactly one `stop`, last. Failures are
 * thrown as `ProviderError` (retryable ones already retried, bounded); an aborted `signal`
 * ends the stream with an error promptly. A provider keeps no conversation state of its own.
 */
export interface ModelProvider {
  /** `"anthropic:claude-sonnet-4-6"`, `"scripted:fix-add"`: the provider's name, a colon, its model (`providerNameOf`). */
  readonly id: string;
  /**
   * true: the provider answers from a script in the task file and no model reads the requests
   * (its registry entry's `scripted` capability; the agent then compacts with the elider).
   */
  readonly answersFromScript?: boolean;
  stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent>;
}

/** A provider id's provider name (`anthropic:claude-sonnet-4-6` → `anthropic`; an id without a model is all name). */
export function providerNameOf(id: string): string {
  const colon = id.indexOf(":");
  return colon === -1 ? id : id.slice(0, colon);
}
