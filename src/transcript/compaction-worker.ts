/**
 * The compaction worker: writes the summary that replaces flushed messages in the request view.
 *
 * - `modelWorker`: a model request. It sends the request the main loop was about to send — the
 *   same system prompt, tools and messages, so it reads the cached prefix instead of paying
 *   for it again — with an instruction added at the end naming the messages to summarize, and
 *   asks for a structured summary (goal, instructions, findings, work done, files, open problems).
 * - `eliderWorker`: the deterministic elider (elider.ts), no model. The default when the task's
 *   model is scripted, and the fallback when the model worker fails.
 */
import { errorMessage } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import { ZERO_USAGE, type ModelProvider, type ModelRequest, type Usage } from "../core/provider.js";
import { CHARS_PER_TOKEN } from "../core/token-estimate.js";
import { elideToChars } from "./elider.js";

export interface SummarizeRequest {
  /** The raw messages being flushed, oldest first. */
  messages: Message[];
  /** Summaries this one replaces (a merge), oldest first; empty for an appended summary. */
  earlierSummaries: string[];
  targetTokens: number;
  /** Characters a token of the summary takes, as the task's counter counts (default 4). */
  charsPerToken?: number;
  /**
   * The request the main loop would send now, uncompacted by this flush; a model worker sends
   * it again with its instruction so the cached prefix is read, not re-written.
   */
  context: ModelRequest;
  /** Where the flushed messages are in `context.messages`: `[from, to)`. */
  range: { from: number; to: number };
  /**
   * What a model worker sends of the context: `view`, all of it (the cached prefix up to the
   * last request, then what is new), or `prefix`, only up to the end of the flushed messages
   * (read from the cache where the main requests marked the coming cut).
   */
  scope: "view" | "prefix";
}

export interface SummarizeResult {
  summary: string;
  /** The worker request's usage; null when no model was asked. */
  usage: Usage | null;
  /** Set when a model worker failed and the elider stood in. */
  fallbackReason?: string;
}

export interface CompactionWorker {
  readonly kind: "model" | "elider";
  summarize(req: SummarizeRequest, signal: AbortSignal): Promise<SummarizeResult>;
}

export const eliderWorker: CompactionWorker = {
  kind: "elider",
  async summarize(req) {
    return { summary: elide(req), usage: null };
  },
};

/** The elider's summary of a request, synchronously (the replay sizes summaries with it). */
export function elide(req: Pick<SummarizeRequest, "messages" | "earlierSummaries" | "targetTokens" | "charsPerToken">): string {
  return elideToChars(req.messages, req.targetTokens * (req.charsPerToken ?? CHARS_PER_TOKEN), req.earlierSummaries);
}

/** The instruction appended to the worker's request. */
export function summaryInstruction(req: Pick<SummarizeRequest, "range" | "earlierSummaries" | "targetTokens">): string {
  const { from, to } = req.range;
  const scope = req.earlierSummaries.length > 0
    ? `the summaries at the start of this conversation and messages ${from + 1} to ${to}`
    : `messages ${from + 1} to ${to} of this conversation`;
  return [
    `[Compaction] Do not call tools and do not continue the task. Write a summary of ${scope} (counting the messages of this request from 1),`,
    "to stand in for them from now on. Keep what the rest of the work needs, under these headings:",
    "Goal; Instructions (every constraint the user gave); What was found; What was done; Files touched (paths, and what changed);",
    `Open problems. Name exact paths, commands, error messages and values. At most about ${req.targetTokens} tokens.`,
  ].join("\n");
}

/** The worker request: the context request (or its prefix) with the instruction after it. */
export function workerRequest(req: SummarizeRequest): ModelRequest {
  if (req.scope === "prefix") {
    const prefix = req.context.messages.slice(0, req.range.to);
    return {
      system: req.context.system, tools: req.context.tools,
      messages: [...prefix, { role: "user", content: [{ type: "text", text: summaryInstruction(req) }] }],
      // The mark at the cut finds the entry the main requests wrote there; the instruction is plain input.
      cacheBreakpoints: prefix.length > 0 ? [prefix.length - 1] : [],
      maxOutputTokens: Math.max(256, Math.ceil(req.targetTokens * 1.5)),
    };
  }
  const messages = req.context.messages.slice();
  const instruction = { type: "text" as const, text: summaryInstruction(req) };
  const last = messages[messages.length - 1];
  if (last?.role === "user") messages[messages.length - 1] = { role: "user", content: [...last.content, instruction] };
  else messages.push({ role: "user", content: [instruction] });
  // Read the context's cached prefix; write nothing new: the instruction is never sent again.
  const cached = req.context.cacheBreakpoints.filter((i) => i < req.context.messages.length - 1);
  return {
    system: req.context.system, tools: req.context.tools, messages,
    cacheBreakpoints: cached, maxOutputTokens: Math.max(256, Math.ceil(req.targetTokens * 1.5)),
  };
}

/** A worker that asks `provider`; a failure or an empty answer falls back to the elider. */
export function modelWorker(provider: ModelProvider): CompactionWorker {
  return {
    kind: "model",
    async summarize(req, signal) {
      let text = "";
      let usage: Usage = ZERO_USAGE;
      try {
        for await (const event of provider.stream(workerRequest(req), signal)) {
          if (event.type === "text") text += event.delta;
          else if (event.type === "usage") usage = event.usage;
        }
      } catch (err) {
        if (signal.aborted) throw err;
        return { summary: elide(req), usage: null, fallbackReason: `the compaction worker failed (${errorMessage(err)}); the elider summarized instead` };
      }
      if (text.trim() === "") {
        return { summary: elide(req), usage, fallbackReason: "the compaction worker wrote no summary; the elider summarized instead" };
      }
      return { summary: text.trim(), usage };
    },
  };
}
