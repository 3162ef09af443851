/**
 * Pieces of wire mapping that every HTTP provider needs the same way: tool-call arguments that
 * arrive as JSON fragments and are parsed once complete, the placeholder for an empty message,
 * the text of a tool result, and the classification of failures that are not HTTP statuses.
 * Each provider's own file keeps the shape of its wire format; only what is shared lives here.
 */
import { ProviderError, errorMessage } from "../core/errors.js";
import type { ImageBlock, TextBlock, ToolResultBlock } from "../core/messages.js";
import type { StreamEvent } from "../core/provider.js";

/**
 * Sent in place of an assistant message with no content: both APIs reject an empty one, and a
 * step that produced nothing (a refusal, a cut-off) is still part of the conversation.
 */
export const EMPTY_CONTENT_TEXT = "(no content)";

/** A tool call being streamed: id and name known at its start, arguments as JSON fragments. */
interface PendingCall {
  id: string;
  name: string;
  json: string;
}

/**
 * Collects streamed tool calls by a key (Anthropic's content-block index, OpenAI's tool-call
 * index) and turns each into one complete `tool_call` event: `{}` for empty arguments, a
 * retryable `provider_stream` error for arguments that are not a JSON object.
 */
export class ToolCallAccumulator {
  private readonly calls = new Map<number, PendingCall>();

  constructor(private readonly provider: string) {}

  /** Starts a call, or fills in an id or name that an earlier fragment left empty. */
  start(key: number, id: string | undefined, name: string | undefined): void {
    const call = this.calls.get(key);
    if (!call) this.calls.set(key, { id: id ?? "", name: name ?? "", json: "" });
    else {
      if (!call.id && id) call.id = id;
      if (!call.name && name) call.name = name;
    }
  }

  append(key: number, fragment: string): void {
    const call = this.calls.get(key);
    if (call) call.json += fragment;
    else this.calls.set(key, { id: "", name: "", json: fragment });
  }

  has(key: number): boolean {
    return this.calls.has(key);
  }

  /** The finished call under `key`, removed from the pending set. */
  finish(key: number): Extract<StreamEvent, { type: "tool_call" }> {
    const call = this.calls.get(key);
    if (!call) throw new ProviderError(`${this.provider}: the stream ended a tool call it never started`, { retryable: true, code: "provider_stream" });
    this.calls.delete(key);
    return { type: "tool_call", id: call.id, name: call.name, input: parseToolInput(this.provider, call.name, call.json) };
  }

  /** Every pending call, finished in key order. */
  finishAll(): Array<Extract<StreamEvent, { type: "tool_call" }>> {
    return [...this.calls.keys()].sort((a, b) => a - b).map((key) => this.finish(key));
  }
}

/** Parses a tool call's streamed arguments: `{}` when empty; a JSON object or a stream error. */
export function parseToolInput(provider: string, name: string, json: string): Record<string, unknown> {
  if (json.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new ProviderError(`${provider}: the model sent malformed JSON arguments for tool "${name}": ${errorMessage(err)}`, {
      retryable: true,
      code: "provider_stream",
      cause: err,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProviderError(`${provider}: the model sent arguments for tool "${name}" that are not a JSON object: ${json.slice(0, 200)}`, {
      retryable: true,
      code: "provider_stream",
    });
  }
  return value as Record<string, unknown>;
}

/** A tool result's content as blocks (a plain string becomes one text block, or none if empty). */
export function resultBlocks(result: ToolResultBlock): Array<TextBlock | ImageBlock> {
  if (typeof result.content !== "string") return result.content;
  return result.content === "" ? [] : [{ type: "text", text: result.content }];
}

/** An image as a `data:` URL, for wire formats that take images by URL. */
export function imageDataUrl(image: ImageBlock): string {
  return `data:${image.mediaType};base64,${image.data}`;
}

/** A call's input as a JSON object for the wire (a missing or non-object input becomes `{}`). */
export function toolInputObject(input: unknown): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/**
 * A failure that is not an HTTP status and not ours: the stream broke (a torn connection, an SSE
 * frame whose JSON does not parse). Retryable: a fresh request may well succeed.
 */
export function streamFailureError(provider: string, err: unknown): ProviderError {
  const what = err instanceof SyntaxError ? "the stream sent malformed data" : "the stream failed";
  return new ProviderError(`${provider}: ${what}: ${errorMessage(err)}`, { retryable: true, code: "provider_stream", cause: err });
}

/** A connection that could not be made or timed out before a response. Retryable. */
export function connectionFailureError(provider: string, err: unknown): ProviderError {
  const head = errorMessage(err).replace(/\.$/, "");
  const chain = [head.charAt(0).toLowerCase() + head.slice(1)];
  // "connection error: fetch failed: connect ECONNREFUSED 127.0.0.1:9" — the cause says why
  for (let c = err instanceof Error ? err.cause : undefined; c instanceof Error && chain.length < 4; c = c.cause) chain.push(c.message);
  return new ProviderError(`${provider}: ${chain.join(": ")}`, { retryable: true, cause: err });
}

/**
 * What an SDK's error message says beyond the status, for a body that was not JSON (a proxy's
 * HTML page, a plain-text 502): the status stripped, cut to 300 characters; null when empty.
 */
export function sdkMessageDetail(message: string): string | null {
  const rest = message.replace(/^\d{3}\s*/, "").replace(/\s+/g, " ").trim();
  if (rest === "" || rest === "status code (no body)") return null;
  return rest.length > 300 ? `${rest.slice(0, 300)}…` : rest;
}
