/**
 * The `openai` provider: Chat Completions through the official SDK, streamed — for OpenAI and
 * for any server that speaks the same protocol at another base URL (Ollama, vLLM, llama.cpp,
 * LM Studio). It owns the mapping both ways and hands failures to the shared bounded retry.
 *
 * Mapping decisions:
 * - Tool results become `role: "tool"` messages, one per result, before any other content of
 *   the user message they came in. A tool message carries text only, so an image result leaves
 *   a note in it (`[image/png image: attached in the next user message]`) and the images follow
 *   in one user message after all of that round's tool messages. An error result starts with
 *   `Error: ` (the protocol has no error flag).
 * - Caching is automatic on OpenAI's side: `cacheBreakpoints` are ignored; cached prompt tokens
 *   come back as `cacheReadTokens`, and there are no cache writes to report. A reasoning model's
 *   `completion_tokens_details.reasoning_tokens` come back as `reasoningTokens`, a part of the
 *   output tokens.
 * - A stream that ends with `finish_reason: "stop"` but carried tool calls reports `tool_use`:
 *   some compatible servers say "stop" either way. A tool call a server sends without an id gets
 *   one from `newId`, so a later result can answer it. A refusal streams as text and stops with
 *   `refusal`.
 */
import OpenAI, { APIConnectionError, APIError } from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionContentPartText,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
} from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import { randomUUID } from "node:crypto";
import { ProviderError, ProviderRefusedError } from "../core/errors.js";
import { toolCallsOf, toolResultsOf, type Message, type ToolResultBlock } from "../core/messages.js";
import type { ModelProvider, ModelRequest, StopReason, StreamEvent, Usage } from "../core/provider.js";
import { DEFAULT_STREAM_IDLE_MS, StreamIdleWatch } from "./stream-idle.js";
import { abortedError, httpFailureError, streamWithRetry, type RetryOptions } from "./provider-retry.js";
import { classifyOpenAIFailure, shouldRetryHeader, type FailureFacts } from "./provider-refusal.js";
import {
  EMPTY_CONTENT_TEXT,
  ToolCallAccumulator,
  connectionFailureError,
  imageDataUrl,
  resultBlocks,
  sdkMessageDetail,
  streamFailureError,
  toolInputObject,
} from "./wire-mapping.js";

const PROVIDER = "openai";
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Which request field carries the output cap: OpenAI's current one, or the older one servers know. */
export type MaxTokensField = "max_completion_tokens" | "max_tokens";

export interface OpenAIProviderOptions {
  /** The model name, e.g. `"gpt-4.1"` or `"qwen2.5-coder:7b"`; the provider id is `openai:<model>`. */
  model: string;
  /** A compatible local server may need none; pass any placeholder then. */
  apiKey: string;
  /** The API root including `/v1` (default https://api.openai.com/v1). */
  baseUrl?: string;
  /** The output cap when the request sets none; unset sends no cap (the server decides). */
  maxOutputTokens?: number;
  /** Default: `max_completion_tokens` for OpenAI itself (api.openai.com), `max_tokens` for other servers. */
  maxTokensField?: MaxTokensField;
  /** How long one HTTP request may take (default: the SDK's, 10 minutes). */
  timeoutMs?: number;
  /** The longest the stream may send no content (keep-alive chunks do not count) before the attempt ends, retryable (default 5m; Infinity: none). */
  streamIdleMs?: number;
  retry?: RetryOptions;
  /** Ids for tool calls a server sends without one (default: random). */
  newId?: () => string;
}

export class OpenAIProvider implements ModelProvider {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly maxOutputTokens: number | undefined;
  private readonly maxTokensField: MaxTokensField;
  private readonly retry: RetryOptions;
  private readonly newId: () => string;
  private readonly streamIdleMs: number;

  constructor(options: OpenAIProviderOptions) {
    if (!options.model) throw new TypeError("OpenAIProvider: expected a non-empty `model`, got an empty one");
    this.model = options.model;
    this.id = `${PROVIDER}:${options.model}`;
    this.maxOutputTokens = options.maxOutputTokens;
    this.maxTokensField = options.maxTokensField ?? (isOpenAIItself(options.baseUrl) ? "max_completion_tokens" : "max_tokens");
    this.retry = options.retry ?? {};
    this.streamIdleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
    this.newId = options.newId ?? (() => `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`);
    this.client = openaiClient(options);
  }

  async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    const maxTokens = req.maxOutputTokens ?? this.maxOutputTokens;
    const body = toOpenAIRequest(req, this.model, { maxTokens, maxTokensField: this.maxTokensField });
    yield* streamWithRetry(PROVIDER, () => this.attempt(body, signal), openaiFailure, signal, this.retry);
  }

  /** One attempt, under the stream's idle limit: a chunk that carries nothing (a keep-alive) is not content. */
  private async *attempt(body: ChatCompletionCreateParamsStreaming, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const idle = new StreamIdleWatch(PROVIDER, this.streamIdleMs, signal);
    try {
      const chunks = await this.client.chat.completions.create(body, { signal: idle.signal });
      yield* translateStream(idle.watch(chunks, chunkHasContent), signal, this.newId);
    } catch (err) {
      throw idle.failure(err);
    } finally {
      idle.stop();
    }
  }
}

/** Whether a chunk carries anything: text, a refusal, tool-call input, a finish reason or usage (not an empty keep-alive delta). */
function chunkHasContent(chunk: ChatCompletionChunk): boolean {
  if (chunk.usage) return true;
  return (chunk.choices ?? []).some((c) =>
    Boolean(c.finish_reason || c.delta?.content || c.delta?.refusal || (c.delta?.tool_calls?.length ?? 0) > 0));
}

/**
 * The SDK's client for both OpenAI providers: no retries of its own (provider-retry.ts decides),
 * silent, and blind to the environment (organization, project and the rest passed as null, so
 * the SDK reads no OPENAI_* variable behind the env record the CLI hands in).
 */
export function openaiClient(options: { apiKey: string; baseUrl?: string | undefined; timeoutMs?: number | undefined }): OpenAI {
  return new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
    maxRetries: 0,
    logLevel: "off",
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
}

/** Whether `baseUrl` is OpenAI's own API (absent means the default, which is). */
function isOpenAIItself(baseUrl: string | undefined): boolean {
  if (baseUrl === undefined) return true;
  try {
    return new URL(baseUrl).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Request mapping

/** The wire request for `req`. `maxTokens` undefined sends no cap. */
export function toOpenAIRequest(
  req: ModelRequest,
  model: string,
  cap: { maxTokens?: number | undefined; maxTokensField: MaxTokensField },
): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (req.system) messages.push({ role: "system", content: req.system });
  for (const m of req.messages) messages.push(...(m.role === "assistant" ? [toAssistantMessage(m)] : toUserMessages(m)));
  const tools: ChatCompletionFunctionTool[] = req.tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
  return {
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(cap.maxTokens !== undefined ? { [cap.maxTokensField]: cap.maxTokens } : {}),
  };
}

function toAssistantMessage(message: Message): ChatCompletionMessageParam {
  const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
  const calls = toolCallsOf(message).map((c) => ({
    id: c.id,
    type: "function" as const,
    function: { name: c.name, arguments: JSON.stringify(toolInputObject(c.input)) },
  }));
  if (calls.length === 0) return { role: "assistant", content: text.trim() === "" ? EMPTY_CONTENT_TEXT : text };
  return { role: "assistant", content: text.trim() === "" ? null : text, tool_calls: calls };
}

/** A user message: its tool results as tool messages, then one user message with the rest. */
function toUserMessages(message: Message): ChatCompletionMessageParam[] {
  const results = toolResultsOf(message);
  const out: ChatCompletionMessageParam[] = results.map(toToolMessage);
  const parts: ChatCompletionContentPart[] = results.flatMap(resultImageParts);
  for (const b of message.content) {
    if (b.type === "text" && b.text.trim() !== "") parts.push({ type: "text", text: b.text });
    else if (b.type === "image") parts.push({ type: "image_url", image_url: { url: imageDataUrl(b) } });
  }
  if (parts.length > 0 || results.length === 0) out.push({ role: "user", content: userContent(parts) });
  return out;
}

/** A single text part goes as a plain string: the form every compatible server accepts. */
function userContent(parts: ChatCompletionContentPart[]): string | ChatCompletionContentPart[] {
  if (parts.length === 0) return EMPTY_CONTENT_TEXT;
  const only = parts.length === 1 ? parts[0] : undefined;
  return only?.type === "text" ? only.text : parts;
}

function toToolMessage(result: ToolResultBlock): ChatCompletionToolMessageParam {
  const text = resultBlocks(result)
    .map((b) => (b.type === "text" ? b.text : `[${b.mediaType} image: attached in the next user message]`))
    .join("\n");
  const content = text === "" ? EMPTY_CONTENT_TEXT : text;
  return { role: "tool", tool_call_id: result.callId, content: result.isError ? `Error: ${content}` : content };
}

/** The images of one tool result, introduced by a line naming the call they came from. */
function resultImageParts(result: ToolResultBlock): ChatCompletionContentPart[] {
  const images = resultBlocks(result).flatMap((b) => (b.type === "image" ? [b] : []));
  if (images.length === 0) return [];
  const intro: ChatCompletionContentPartText = { type: "text", text: `Images from tool call ${result.callId}:` };
  return [intro, ...images.map((b): ChatCompletionContentPart => ({ type: "image_url", image_url: { url: imageDataUrl(b) } }))];
}

// ---------------------------------------------------------------------------------------------
// Stream mapping

/**
 * Our events from the chunks: text deltas as they come; tool calls (accumulated by index) when
 * the stream ends, then usage (if the server sent any) and stop. A stream that ends without a
 * `finish_reason` is a retryable `provider_stream` error; one cut by `signal` is an abort.
 */
export async function* translateStream(
  chunks: AsyncIterable<ChatCompletionChunk>,
  signal: AbortSignal,
  newId: () => string,
): AsyncGenerator<StreamEvent> {
  const calls = new ToolCallAccumulator(PROVIDER);
  let usage: Usage | undefined;
  let finish: string | undefined;
  let refused = false;
  for await (const chunk of chunks) {
    if (chunk.usage) usage = mapUsage(chunk.usage);
    const choice = chunk.choices?.[0]; // some servers send `choices: null` with the usage
    if (!choice) continue;
    if (choice.delta?.content) yield { type: "text", delta: choice.delta.content };
    if (choice.delta?.refusal) {
      refused = true;
      yield { type: "text", delta: choice.delta.refusal };
    }
    for (const [position, call] of (choice.delta?.tool_calls ?? []).entries()) {
      const key = call.index ?? position;
      calls.start(key, call.id || undefined, call.function?.name || undefined);
      if (call.function?.arguments) calls.append(key, call.function.arguments);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  if (signal.aborted) throw abortedError(PROVIDER, signal);
  if (finish === undefined) {
    throw new ProviderError(`${PROVIDER}: the stream ended without a finish_reason`, { retryable: true, code: "provider_stream" });
  }
  const toolCalls = calls.finishAll().map((c) => (c.id ? c : { ...c, id: newId() }));
  yield* toolCalls;
  if (usage) yield { type: "usage", usage };
  yield { type: "stop", reason: refused ? "refusal" : mapFinishReason(finish, toolCalls.length > 0) };
}

/**
 * `prompt_tokens` counts cached tokens too; ours excludes them. `completion_tokens` counts the
 * reasoning tokens too, and so does ours: `reasoningTokens` is their part (absent when 0 or unsent).
 */
export function mapUsage(wire: CompletionUsage): Usage {
  const cached = wire.prompt_tokens_details?.cached_tokens ?? 0;
  const output = wire.completion_tokens ?? 0;
  // A part never exceeds its whole, whatever a compatible server sends.
  const reasoning = Math.min(output, wire.completion_tokens_details?.reasoning_tokens ?? 0);
  return {
    inputTokens: Math.max(0, (wire.prompt_tokens ?? 0) - cached),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: output,
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

export function mapFinishReason(reason: string, hadToolCalls: boolean): StopReason {
  switch (reason) {
    case "stop":
      return hadToolCalls ? "tool_use" : "end_turn";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "other";
  }
}

/**
 * A `ProviderError` for what the SDK threw (this provider's, or the Responses API provider's:
 * `provider` names it in the message). An error inside an accepted stream
 * (`data: {"error": …}`) counts as the server's failure, so it is retryable — unless it refuses
 * the run (provider-refusal.ts), as `ProviderRefusedError`.
 */
export function openaiFailure(err: unknown, provider: string = PROVIDER): ProviderError {
  if (err instanceof APIConnectionError) return connectionFailureError(provider, err);
  if (err instanceof APIError) {
    const body = err.error as { message?: unknown } | undefined;
    const detail = typeof body?.message === "string" ? body.message : body ? JSON.stringify(body) : sdkMessageDetail(err.message);
    const kind = err.code ?? err.type ?? null;
    const verdict = classifyOpenAIFailure(openaiFailureFacts(err));
    if (err.status !== undefined) {
      return httpFailureError({ provider, status: err.status, headers: err.headers, kind, detail, verdict, cause: err });
    }
    if (verdict.kind === "refused") {
      return new ProviderRefusedError({ provider, reason: verdict.reason, status: null, kind, detail: detail ?? null }, { cause: err });
    }
    return new ProviderError(`${provider}: ${kind ?? "error"}: ${detail ?? err.message}`, { retryable: true, cause: err });
  }
  return streamFailureError(provider, err);
}

/**
 * What the SDK's error says, as provider-refusal.ts judges it: a compatible server's Google-style
 * error (`{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", …}}`) gives its `status`. (One
 * wrapped in a list reaches the SDK as "no body": a plain 429.)
 */
export function openaiFailureFacts(err: APIError): FailureFacts {
  const body = err.error as { message?: unknown; status?: unknown } | undefined;
  const said = typeof body?.message === "string" ? body.message : body ? JSON.stringify(body) : sdkMessageDetail(err.message);
  return {
    status: err.status ?? null, type: err.type ?? null, code: typeof err.code === "string" ? err.code : null, message: said ?? null,
    shouldRetry: shouldRetryHeader(err.headers), bodyStatus: typeof body?.status === "string" ? body.status : null,
  };
}
