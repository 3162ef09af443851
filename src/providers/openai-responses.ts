/**
 * The `openai-responses` provider: OpenAI's Responses API through the official SDK, streamed —
 * the API Codex and the reasoning models are built on. It owns the mapping both ways and hands
 * failures to the shared bounded retry, classified as the Chat Completions provider classifies
 * them (the same SDK's errors).
 *
 * Mapping decisions:
 * - Nothing is stored on OpenAI's side (`store: false`): every request carries the whole
 *   conversation, so a resumed session needs nothing the server kept. A reasoning model's
 *   reasoning items come back encrypted (`include: ["reasoning.encrypted_content"]`), are kept in
 *   the assistant message as `reasoning` blocks (this provider's name on them) and are sent back
 *   in place on every later request: the model keeps its reasoning across a tool-calling turn.
 *   Another provider's reasoning blocks are left out.
 * - `prompt_cache_key` is a hash of the model, the instructions and the tools — the stable prefix —
 *   so requests that share a prefix are routed to the same cache, across runs and resumes alike.
 * - A tool result is a `function_call_output` item answering its call; images in it go in the
 *   item itself (`input_image`), an error result starts with `Error: ` (the protocol has no error
 *   flag).
 * - Usage: `input_tokens` counts cached and cache-written tokens too; ours excludes them.
 *   `output_tokens` counts reasoning too, and so does ours (`reasoningTokens` is the part).
 * - Stop: `response.completed` with function calls is `tool_use`, without `end_turn`;
 *   `response.incomplete` is `max_tokens` (or `refusal` for a content filter); a refusal streams
 *   as text and stops with `refusal`. `response.failed`, an `error` event and a stream that ends
 *   before its response does are retryable failures.
 */
import type OpenAI from "openai";
import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItem,
  ResponseInputItem,
  ResponseInputMessageContentList,
  ResponseStreamEvent,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { createHash } from "node:crypto";
import { isStrictSchema } from "./strict-schema.js";
import { ProviderError } from "../core/errors.js";
import type { ContentBlock, Message, ReasoningBlock, ToolResultBlock } from "../core/messages.js";
import type { ModelProvider, ModelRequest, StopReason, StreamEvent, Usage } from "../core/provider.js";
import { openaiClient, openaiFailure } from "./openai.js";
import { DEFAULT_STREAM_IDLE_MS, StreamIdleWatch } from "./stream-idle.js";
import { abortedError, streamWithRetry, type RetryOptions } from "./provider-retry.js";
import { EMPTY_CONTENT_TEXT, imageDataUrl, parseToolInput, resultBlocks, toolInputObject } from "./wire-mapping.js";

/** The provider's name: on its id, its failures and the reasoning blocks it keeps. */
export const RESPONSES_PROVIDER = "openai-responses";

export interface OpenAIResponsesProviderOptions {
  /** The model name, e.g. `"gpt-5"`; the provider id is `openai-responses:<model>`. */
  model: string;
  /** A compatible server may need none; pass any placeholder then. */
  apiKey: string;
  /** The API root including `/v1` (default https://api.openai.com/v1). */
  baseUrl?: string;
  /** The output cap when the request sets none; unset sends no cap (the server decides). */
  maxOutputTokens?: number;
  /** How long one HTTP request may take (default: the SDK's, 10 minutes). */
  timeoutMs?: number;
  /** The longest the stream may send no event before the attempt ends, retryable (default 5m; Infinity: none). */
  streamIdleMs?: number;
  retry?: RetryOptions;
}

export class OpenAIResponsesProvider implements ModelProvider {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly maxOutputTokens: number | undefined;
  private readonly retry: RetryOptions;
  private readonly streamIdleMs: number;

  constructor(options: OpenAIResponsesProviderOptions) {
    if (!options.model) throw new TypeError("OpenAIResponsesProvider: expected a non-empty `model`, got an empty one");
    this.model = options.model;
    this.id = `${RESPONSES_PROVIDER}:${options.model}`;
    this.maxOutputTokens = options.maxOutputTokens;
    this.retry = options.retry ?? {};
    this.streamIdleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
    this.client = openaiClient(options);
  }

  async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    const body = toResponsesRequest(req, this.model, req.maxOutputTokens ?? this.maxOutputTokens);
    yield* streamWithRetry(RESPONSES_PROVIDER, () => this.attempt(body, signal), (err) => openaiFailure(err, RESPONSES_PROVIDER), signal, this.retry);
  }

  private async *attempt(body: ResponseCreateParamsStreaming, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const idle = new StreamIdleWatch(RESPONSES_PROVIDER, this.streamIdleMs, signal);
    try {
      const events = await this.client.responses.create(body, { signal: idle.signal });
      yield* translateResponsesStream(idle.watch(events, () => true), signal);
    } catch (err) {
      throw idle.failure(err);
    } finally {
      idle.stop();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Request mapping

/** The wire request for `req`; `maxTokens` undefined sends no cap. */
export function toResponsesRequest(req: ModelRequest, model: string, maxTokens: number | undefined): ResponseCreateParamsStreaming {
  const tools: FunctionTool[] = req.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.inputSchema, strict: false }));
  const input: ResponseInputItem[] = [];
  for (const m of req.messages) input.push(...(m.role === "assistant" ? assistantItems(m) : userItems(m)));
  return {
    model,
    stream: true,
    store: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: promptCacheKey(model, req),
    ...(req.system ? { instructions: req.system } : {}),
    input,
    ...(tools.length > 0 ? { tools } : {}),
    ...(req.outputSchema ? { text: { format: { type: "json_schema", name: "final_answer", schema: req.outputSchema, strict: isStrictSchema(req.outputSchema) } } } : {}),
    ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
  };
}

/** The cache routing key: the same for every request that shares the model, instructions and tools. */
export function promptCacheKey(model: string, req: Pick<ModelRequest, "system" | "tools">): string {
  const prefix = JSON.stringify([model, req.system ?? "", req.tools.map((t) => [t.name, t.description, t.inputSchema])]);
  return `rhema-${createHash("sha256").update(prefix).digest("hex").slice(0, 32)}`;
}

/** An assistant message's items in order: its reasoning, its text (consecutive parts as one message), its calls. */
function assistantItems(message: Message): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  let text = "";
  const flushText = () => {
    if (text.trim() !== "") items.push({ role: "assistant", content: text });
    text = "";
  };
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    else {
      flushText();
      items.push(...assistantBlockItems(block));
    }
  }
  flushText();
  return items.length > 0 ? items : [{ role: "assistant", content: EMPTY_CONTENT_TEXT }];
}

function assistantBlockItems(block: Exclude<ContentBlock, { type: "text" }>): ResponseInputItem[] {
  switch (block.type) {
    case "reasoning":
      return block.provider === RESPONSES_PROVIDER ? [reasoningItem(block)] : [];
    case "tool_call":
      return [{ type: "function_call", call_id: block.id, name: block.name, arguments: JSON.stringify(toolInputObject(block.input)) }];
    case "image":
    case "tool_result":
      return []; // not an assistant's: a session never holds one there
  }
}

function reasoningItem(block: ReasoningBlock): ResponseInputItem {
  return {
    type: "reasoning",
    id: block.id,
    summary: block.summary === "" ? [] : [{ type: "summary_text", text: block.summary }],
    encrypted_content: block.data,
  };
}

/** A user message: its tool results as `function_call_output` items, then one message with the rest. */
function userItems(message: Message): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  const content: ResponseInputMessageContentList = [];
  for (const block of message.content) {
    if (block.type === "tool_result") items.push(toCallOutput(block));
    else if (block.type === "text" && block.text.trim() !== "") content.push({ type: "input_text", text: block.text });
    else if (block.type === "image") content.push({ type: "input_image", image_url: imageDataUrl(block), detail: "auto" });
  }
  if (content.length > 0 || items.length === 0) {
    const only = content.length === 1 ? content[0] : undefined;
    items.push({ role: "user", content: content.length === 0 ? EMPTY_CONTENT_TEXT : only?.type === "input_text" ? only.text : content });
  }
  return items;
}

function toCallOutput(result: ToolResultBlock): ResponseInputItem {
  const blocks = resultBlocks(result);
  const mark = (text: string) => (result.isError ? `Error: ${text}` : text);
  if (blocks.every((b) => b.type === "text")) {
    const text = blocks.map((b) => (b.type === "text" ? b.text : "")).join("\n");
    return { type: "function_call_output", call_id: result.callId, output: mark(text === "" ? EMPTY_CONTENT_TEXT : text) };
  }
  const parts: ResponseFunctionCallOutputItem[] = blocks.map((b) =>
    b.type === "text" ? { type: "input_text", text: b.text } : { type: "input_image", image_url: imageDataUrl(b), detail: "auto" });
  if (result.isError) parts.unshift({ type: "input_text", text: "Error:" });
  return { type: "function_call_output", call_id: result.callId, output: parts };
}

// ---------------------------------------------------------------------------------------------
// Stream mapping

/**
 * Our events from the Responses API's stream: text (and refusal) deltas as they come; each
 * reasoning item and function call when its item is done, in output order; then usage and stop
 * from the response's end. A stream that ends before `response.completed`/`response.incomplete`
 * is a retryable `provider_stream` error; one cut by `signal` an abort.
 */
export async function* translateResponsesStream(events: AsyncIterable<ResponseStreamEvent>, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  let calls = 0;
  let refused = false;
  for await (const event of events) {
    switch (event.type) {
      case "response.output_text.delta":
        if (event.delta) yield { type: "text", delta: event.delta };
        break;
      case "response.refusal.delta":
        refused = true;
        if (event.delta) yield { type: "text", delta: event.delta };
        break;
      case "response.output_item.done": {
        const item = event.item;
        if (item.type === "function_call") {
          calls++;
          yield { type: "tool_call", id: item.call_id, name: item.name, input: parseToolInput(RESPONSES_PROVIDER, item.name, item.arguments) };
        } else if (item.type === "reasoning") {
          const summary = (item.summary ?? []).map((s) => s.text).join("\n\n");
          yield { type: "reasoning", provider: RESPONSES_PROVIDER, id: item.id, data: item.encrypted_content ?? "", summary };
        }
        break;
      }
      case "response.completed":
      case "response.incomplete": {
        const { response } = event;
        if (response.usage) yield { type: "usage", usage: mapResponsesUsage(response.usage) };
        const reason: StopReason = refused ? "refusal" : event.type === "response.completed"
          ? (calls > 0 ? "tool_use" : "end_turn")
          : response.incomplete_details?.reason === "content_filter" ? "refusal" : "max_tokens";
        yield { type: "stop", reason };
        return;
      }
      case "response.failed": {
        const error = event.response.error;
        throw new ProviderError(`${RESPONSES_PROVIDER}: the response failed: ${error ? `${error.code}: ${error.message}` : "no reason given"}`, { retryable: true, code: "provider_stream" });
      }
      case "error":
        throw new ProviderError(`${RESPONSES_PROVIDER}: ${event.code ?? "error"}: ${event.message}`, { retryable: true, code: "provider_stream" });
      default:
        break; // created, in_progress, content parts, summaries' deltas: what the done items and the end carry whole
    }
  }
  if (signal.aborted) throw abortedError(RESPONSES_PROVIDER, signal);
  throw new ProviderError(`${RESPONSES_PROVIDER}: the stream ended before the response did`, { retryable: true, code: "provider_stream" });
}

/** `input_tokens` holds the cached and cache-written tokens; ours holds neither. */
export function mapResponsesUsage(wire: ResponseUsage): Usage {
  const cached = wire.input_tokens_details?.cached_tokens ?? 0;
  const written = wire.input_tokens_details?.cache_write_tokens ?? 0;
  const output = wire.output_tokens ?? 0;
  const reasoning = Math.min(output, wire.output_tokens_details?.reasoning_tokens ?? 0);
  return {
    inputTokens: Math.max(0, (wire.input_tokens ?? 0) - cached - written),
    cacheReadTokens: cached,
    cacheWriteTokens: written,
    outputTokens: output,
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}
