/**
 * The `anthropic` provider: the Messages API through the official SDK, streamed. It owns the
 * mapping both ways — our messages, tools and cache breakpoints to the wire request, and the
 * SSE events back to our `StreamEvent`s — and hands failures to the shared bounded retry. The
 * mapping is `AnthropicMessagesProvider`'s, over any Messages client and a *platform* (its name,
 * its SDK's error classes, its refusal rules): the cloud platforms that serve Anthropic's models
 * (anthropic-bedrock.ts, anthropic-vertex.ts) are that class with their own SDK's client.
 *
 * Prompt caching: `cache_control: {type: "ephemeral"}` marks the end of the stable prefix (the
 * system block — the API renders tools, then system, then messages — or the last tool when there
 * is no system prompt) and the last block of each message named in `req.cacheBreakpoints`; the
 * marks up to `req.cacheOneHourThrough` carry `ttl: "1h"`. The API takes at most four marks; the
 * last four win. Where the marks go is decided by `planCacheMarks` (src/cache), the same plan the
 * prompt-cache simulator follows. Usage maps `cache_creation.ephemeral_1h_input_tokens` to
 * `cacheWrite1hTokens` and `output_tokens_details.thinking_tokens` to `reasoningTokens`.
 *
 * Extended thinking is not requested (no `thinking` parameter) and a thinking block the API sends
 * anyway is not streamed or kept, so the count is usually absent: it is there when the model
 * reasoned and the API said how much.
 */
import Anthropic, { APIConnectionError, APIError } from "@anthropic-ai/sdk";
import type {
  CacheControlEphemeral,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageDeltaUsage,
  RawMessageStreamEvent,
  StopReason as WireStopReason,
  TextBlockParam,
  Tool as WireTool,
  ToolResultBlockParam,
  ToolUseBlockParam,
  Usage as WireUsage,
} from "@anthropic-ai/sdk/resources/messages";
import { planCacheMarks, type CacheMark } from "../cache/prompt-blocks.js";
import { ProviderError, ProviderRefusedError, assertNever } from "../core/errors.js";
import type { ContentBlock, ImageBlock, Message, ToolResultBlock } from "../core/messages.js";
import type { ModelProvider, ModelRequest, StopReason, StreamEvent, Usage } from "../core/provider.js";
import { abortedError, httpFailureError, streamWithRetry, type RetryOptions } from "./provider-retry.js";
import { classifyAnthropicFailure, shouldRetryHeader, type FailureClass, type FailureFacts } from "./provider-refusal.js";
import { DEFAULT_STREAM_IDLE_MS, StreamIdleWatch } from "./stream-idle.js";
import {
  EMPTY_CONTENT_TEXT,
  ToolCallAccumulator,
  connectionFailureError,
  resultBlocks,
  sdkMessageDetail,
  streamFailureError,
  toolInputObject,
} from "./wire-mapping.js";

const PROVIDER = "anthropic";
export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_DEFAULT_MAX_OUTPUT_TOKENS = 8192;

/** The wire blocks our content maps to; each of them takes a `cache_control` mark. */
type WireBlock = TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam;
interface WireMessage {
  role: "user" | "assistant";
  content: WireBlock[];
}

export interface AnthropicProviderOptions {
  /** The model name, e.g. `"claude-sonnet-4-6"`; the provider id is `anthropic:<model>`. */
  model: string;
  apiKey: string;
  /** The API's origin, without `/v1` (default https://api.anthropic.com). */
  baseUrl?: string;
  /** `max_tokens` when the request sets no `maxOutputTokens` (default 8192). */
  maxOutputTokens?: number;
  /** How long one HTTP request may take (default: the SDK's, 10 minutes). */
  timeoutMs?: number;
  /** The longest the stream may send no content (pings do not count) before the attempt ends, retryable (default 5m; Infinity: none). */
  streamIdleMs?: number;
  retry?: RetryOptions;
}

/** A Messages API client: the first-party SDK's, or a cloud platform's client built on it (Bedrock, Vertex). */
export interface MessagesClient {
  readonly messages: Pick<Anthropic["messages"], "create">;
}

/**
 * What differs between the platforms that serve the Messages API: the provider's name, the error
 * classes its SDK throws (each SDK bundle has its own copy of them, so `instanceof` needs the
 * client's: `AnthropicBedrock.APIError`), and how a failure is judged (provider-refusal.ts).
 */
export interface MessagesPlatform {
  readonly provider: string;
  readonly errors: { readonly APIError: typeof APIError; readonly APIConnectionError: typeof APIConnectionError };
  /** Reads the SDK's error into what provider-refusal.ts judges. */
  facts(err: APIError): FailureFacts;
  classify(facts: FailureFacts): FailureClass;
}

export interface MessagesProviderOptions {
  model: string;
  /** `max_tokens` when the request sets no `maxOutputTokens` (default 8192). */
  maxOutputTokens?: number;
  /** The longest the stream may send no content (pings do not count) before the attempt ends, retryable (default 5m; Infinity: none). */
  streamIdleMs?: number;
  retry?: RetryOptions;
}

/**
 * A provider that speaks the Messages API through `client`: this module's request and stream
 * mapping, the platform's failure rules. The `anthropic`, `anthropic-bedrock` and
 * `anthropic-vertex` providers are this one with different clients.
 */
export class AnthropicMessagesProvider implements ModelProvider {
  readonly id: string;
  private readonly model: string;
  private readonly maxOutputTokens: number;
  private readonly retry: RetryOptions;
  private readonly streamIdleMs: number;

  constructor(private readonly platform: MessagesPlatform, private readonly client: MessagesClient, options: MessagesProviderOptions) {
    if (!options.model) throw new TypeError(`${platform.provider}: expected a non-empty \`model\`, got an empty one`);
    this.model = options.model;
    this.id = `${platform.provider}:${options.model}`;
    this.maxOutputTokens = options.maxOutputTokens ?? ANTHROPIC_DEFAULT_MAX_OUTPUT_TOKENS;
    this.retry = options.retry ?? {};
    this.streamIdleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
  }

  async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    const body = toAnthropicRequest(req, this.model, req.maxOutputTokens ?? this.maxOutputTokens);
    yield* streamWithRetry(this.platform.provider, () => this.attempt(body, signal), (err) => messagesFailure(this.platform, err), signal, this.retry);
  }

  /** One attempt, under the stream's idle limit: the SDK drops `ping` events itself, so every event it yields is content. */
  private async *attempt(body: MessageCreateParamsStreaming, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const idle = new StreamIdleWatch(this.platform.provider, this.streamIdleMs, signal);
    try {
      const events = await this.client.messages.create(body, { signal: idle.signal });
      yield* translateStream(idle.watch(events), signal, this.platform.provider);
    } catch (err) {
      throw idle.failure(err);
    } finally {
      idle.stop();
    }
  }
}

/** The `anthropic` provider: the Messages API at api.anthropic.com (or a compatible base URL), with an API key. */
export class AnthropicProvider extends AnthropicMessagesProvider {
  constructor(options: AnthropicProviderOptions) {
    if (!options.model) throw new TypeError("AnthropicProvider: expected a non-empty `model`, got an empty one");
    super(ANTHROPIC_PLATFORM, new Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL,
      maxRetries: 0, // our own retry decides (provider-retry.ts)
      logLevel: "off", // the library never prints
      webhookKey: null,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    }), options);
  }
}

// ---------------------------------------------------------------------------------------------
// Request mapping

/** The wire request for `req`: system, tools, messages, `max_tokens` and the cache marks. */
export function toAnthropicRequest(req: ModelRequest, model: string, maxTokens: number): MessageCreateParamsStreaming {
  const system: TextBlockParam[] | undefined = req.system ? [{ type: "text", text: req.system }] : undefined;
  const tools: WireTool[] = req.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema as WireTool.InputSchema,
  }));
  const messages = req.messages.map(toWireMessage);
  placeCacheMarks(planCacheMarks(req), { system, tools, messages });
  return {
    model,
    max_tokens: maxTokens,
    stream: true,
    ...(system ? { system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    messages,
  };
}

/** Puts `cache_control` on the wire blocks the marks name (see `planCacheMarks`). */
function placeCacheMarks(marks: readonly CacheMark[], wire: { system: TextBlockParam[] | undefined; tools: WireTool[]; messages: WireMessage[] }): void {
  for (const mark of marks) {
    const target =
      mark.target === "prefix" ? (wire.system?.at(-1) ?? wire.tools.at(-1)) : wire.messages[mark.target.message]?.content.at(-1);
    if (target) target.cache_control = cacheControl(mark);
  }
}

function cacheControl(mark: CacheMark): CacheControlEphemeral {
  return mark.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

/**
 * One message on the wire. Blank text blocks are dropped (the API rejects them), a user
 * message's tool results go first (the API wants them before any text), and a message left
 * with nothing gets `EMPTY_CONTENT_TEXT`.
 */
function toWireMessage(message: Message): WireMessage {
  const blocks = message.content.flatMap(toWireBlock);
  const content =
    message.role === "user" ? [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")] : blocks;
  if (content.length === 0) content.push({ type: "text", text: EMPTY_CONTENT_TEXT });
  return { role: message.role, content };
}

function toWireBlock(block: ContentBlock): WireBlock[] {
  switch (block.type) {
    case "text":
      return block.text.trim() === "" ? [] : [{ type: "text", text: block.text }];
    case "image":
      return [toWireImage(block)];
    case "tool_call":
      return [{ type: "tool_use", id: block.id, name: block.name, input: toolInputObject(block.input) }];
    case "tool_result":
      return [toWireToolResult(block)];
    case "reasoning":
      return []; // another API's item (the Responses API's): this one cannot read it
    default:
      return assertNever(block);
  }
}

function toWireImage(image: ImageBlock): ImageBlockParam {
  return { type: "image", source: { type: "base64", media_type: image.mediaType, data: image.data } };
}

function toWireToolResult(result: ToolResultBlock): ToolResultBlockParam {
  const wire: ToolResultBlockParam = { type: "tool_result", tool_use_id: result.callId };
  if (typeof result.content === "string") {
    if (result.content !== "") wire.content = result.content;
  } else {
    const parts = resultBlocks(result).flatMap((b): Array<TextBlockParam | ImageBlockParam> =>
      b.type === "image" ? [toWireImage(b)] : b.text === "" ? [] : [{ type: "text", text: b.text }],
    );
    if (parts.length > 0) wire.content = parts;
  }
  if (result.isError) wire.is_error = true;
  return wire;
}

// ---------------------------------------------------------------------------------------------
// Stream mapping

/**
 * Our events from the SSE events: text deltas as they come, each tool call once its block
 * stops, then usage and stop after `message_stop`. A stream that ends before `message_stop` is a
 * retryable `provider_stream` error; one cut by `signal` is an abort (the SDK ends it quietly).
 */
export async function* translateStream(events: AsyncIterable<RawMessageStreamEvent>, signal: AbortSignal, provider = PROVIDER): AsyncGenerator<StreamEvent> {
  const calls = new ToolCallAccumulator(provider);
  const usage: Usage = { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
  let stop: StopReason | undefined;
  let ended = false;
  for await (const event of events) {
    switch (event.type) {
      case "message_start":
        mergeUsage(usage, event.message.usage);
        break;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "tool_use") calls.start(event.index, block.id, block.name);
        else if (block.type === "text" && block.text) yield { type: "text", delta: block.text };
        break;
      }
      case "content_block_delta":
        if (event.delta.type === "text_delta" && event.delta.text) yield { type: "text", delta: event.delta.text };
        else if (event.delta.type === "input_json_delta") calls.append(event.index, event.delta.partial_json);
        break;
      case "content_block_stop":
        if (calls.has(event.index)) yield calls.finish(event.index);
        break;
      case "message_delta":
        mergeUsage(usage, event.usage);
        stop = mapStopReason(event.delta.stop_reason);
        break;
      case "message_stop":
        ended = true;
        break;
      default:
        break; // event types newer than this code carry nothing we map
    }
  }
  if (signal.aborted) throw abortedError(provider, signal);
  if (!ended || stop === undefined) {
    throw new ProviderError(`${provider}: the stream ended before the message was complete`, { retryable: true, code: "provider_stream" });
  }
  yield { type: "usage", usage: finalUsage(usage) };
  yield { type: "stop", reason: stop };
}

/**
 * Takes each figure the event states; `input_tokens` already excludes cached tokens. Of the
 * written tokens, `cache_creation.ephemeral_1h_input_tokens` are the 1-hour ones (absent when 0);
 * of the output tokens, `output_tokens_details.thinking_tokens` the reasoning ones (absent when 0
 * or unsent), a part of them as the API bills it.
 */
function mergeUsage(into: Usage, wire: WireUsage | MessageDeltaUsage): void {
  if (typeof wire.input_tokens === "number") into.inputTokens = wire.input_tokens;
  if (typeof wire.cache_read_input_tokens === "number") into.cacheReadTokens = wire.cache_read_input_tokens;
  if (typeof wire.cache_creation_input_tokens === "number") into.cacheWriteTokens = wire.cache_creation_input_tokens;
  const hour = "cache_creation" in wire ? wire.cache_creation?.ephemeral_1h_input_tokens : undefined;
  if (typeof hour === "number" && hour > 0) into.cacheWrite1hTokens = hour;
  if (typeof wire.output_tokens === "number") into.outputTokens = wire.output_tokens;
  const thinking = wire.output_tokens_details?.thinking_tokens;
  if (typeof thinking === "number" && thinking > 0) into.reasoningTokens = thinking;
}

/** The usage as stated, its reasoning share held within the output (a part never exceeds its whole). */
function finalUsage(usage: Usage): Usage {
  const { reasoningTokens, ...rest } = usage;
  const reasoning = Math.min(reasoningTokens ?? 0, usage.outputTokens);
  return reasoning > 0 ? { ...rest, reasoningTokens: reasoning } : rest;
}

export function mapStopReason(reason: WireStopReason | null): StopReason {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "refusal":
      return reason;
    default:
      return "other";
  }
}

/** A `ProviderError` for what the SDK threw: an HTTP status, an `event: error`, a lost connection; a refusal (provider-refusal.ts) as `ProviderRefusedError`. */
function messagesFailure(platform: MessagesPlatform, err: unknown): ProviderError {
  const provider = platform.provider;
  if (err instanceof platform.errors.APIConnectionError) return connectionFailureError(provider, err);
  if (err instanceof platform.errors.APIError) {
    const facts = platform.facts(err);
    const verdict = platform.classify(facts);
    if (err.status !== undefined) {
      const detail = facts.message ?? (err.error ? JSON.stringify(err.error) : sdkMessageDetail(err.message));
      return httpFailureError({ provider, status: err.status, headers: err.headers, kind: facts.type, detail, verdict, cause: err });
    }
    const kind = facts.type ?? "error";
    if (verdict.kind === "refused") {
      return new ProviderRefusedError({ provider, reason: verdict.reason, status: null, kind, detail: facts.message }, { cause: err });
    }
    return new ProviderError(`${provider}: ${kind}: ${facts.message ?? err.message}`, { retryable: verdict.kind === "transient", cause: err });
  }
  return streamFailureError(provider, err);
}

/** What the SDK's error says, as provider-refusal.ts judges it. */
export function anthropicFailureFacts(err: APIError): FailureFacts {
  return { status: err.status ?? null, type: err.type, code: err.errorCode, message: err.apiMessage ?? null, shouldRetry: shouldRetryHeader(err.headers) };
}

/** Anthropic's own API: its SDK's errors, its refusal rules. */
const ANTHROPIC_PLATFORM: MessagesPlatform = {
  provider: PROVIDER,
  errors: Anthropic,
  facts: anthropicFailureFacts,
  classify: classifyAnthropicFailure,
};
