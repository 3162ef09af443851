/**
 * The `gemini` provider: Google's Gemini API (generativelanguage.googleapis.com) through the
 * official `@google/genai` SDK, streamed (`models.generateContentStream`, the SSE route
 * `/v1beta/models/MODEL:streamGenerateContent?alt=sse`). It owns the mapping both ways and hands
 * failures to the shared bounded retry.
 *
 * The SDK reads the environment behind its caller's back; every value it would take from there
 * is passed instead: `vertexai: false` (else `GOOGLE_GENAI_USE_VERTEXAI` could switch backends),
 * the key (else `GOOGLE_API_KEY`/`GEMINI_API_KEY`), the base URL (else `GOOGLE_GEMINI_BASE_URL`),
 * the API version (`v1beta`). Its own retry is off (no `retryOptions`), as are its automatic
 * continuation and automatic function calling: one request is one attempt of ours. What is left
 * is a `console.warn` when both `GOOGLE_API_KEY` and `GEMINI_API_KEY` are set, which the edges
 * route like every SDK warning (sdk-warnings.ts).
 *
 * Mapping decisions:
 * - Tools go as `functionDeclarations` with `parametersJsonSchema` (the JSON Schema as is, not the
 *   API's OpenAPI subset). The system prompt is `systemInstruction`.
 * - Function calls may come without an id (the Gemini API often sends none): such a call gets one
 *   made here (`GENERATED_CALL_PREFIX` + `newId()`), and on the way back that id is left out of
 *   both the `functionCall` and its `functionResponse`: the API pairs them by name and order,
 *   which the step loop keeps (results answer calls in call order). An id the API sent is sent back.
 * - A tool result is a `functionResponse` with `response: { output }` (`{ error }` for an error
 *   result: the API's own convention). Images in a result cannot ride in it on every model, so
 *   they follow the round's function responses as `inlineData` parts of the same user turn, and
 *   the text says where they are.
 * - Thought signatures (Gemini 2.5/3 put `thoughtSignature` on a part and require it back on
 *   function-call parts): each becomes a `reasoning` block (provider `gemini`, `data` the
 *   signature) placed just before the content of the part that carried it; on the way back it
 *   rides on the next text or call part again, or, with nothing after it, on an empty text part.
 *   So a resumed session sends every signature again, in place, byte for byte. `thought: true`
 *   parts (thought summaries, never asked for) are not shown. Another provider's reasoning is left out.
 * - Usage: `promptTokenCount` holds the implicitly cached tokens (`cachedContentTokenCount`);
 *   ours excludes them (`cacheReadTokens`; no cache writes are reported or billed).
 *   `candidatesTokenCount` leaves out the thinking tokens (`thoughtsTokenCount`), billed as
 *   output: ours is their sum, `reasoningTokens` the thoughts.
 * - Stop: `STOP` is `tool_use` when the response called a function, else `end_turn`;
 *   `MAX_TOKENS` is `max_tokens`; safety, recitation, blocklist, prohibited-content and PII stops
 *   and a blocked prompt are `refusal`; a malformed or unexpected function call is a retryable
 *   stream error (the model's slip, which a fresh request usually avoids); any other reason is `other`.
 * - Failures: the SDK's `ApiError` has the status and Google's error body (`{error: {code,
 *   message, status, details}}`) but no headers: a 429's wait comes from the body's `RetryInfo`
 *   (`retryDelay: "37s"`), which is where the API puts it. Which failures refuse the run (a bad
 *   key, a quota that stays spent) is provider-refusal.ts's `classifyGeminiFailure`.
 */
import { ApiError, GoogleGenAI } from "@google/genai";
import type { Content, FinishReason, FunctionDeclaration, GenerateContentParameters, GenerateContentResponse, GenerateContentResponseUsageMetadata, Part } from "@google/genai";
import { randomUUID } from "node:crypto";
import { ProviderError } from "../core/errors.js";
import type { Message, ToolResultBlock } from "../core/messages.js";
import type { ModelProvider, ModelRequest, StopReason, StreamEvent, Usage } from "../core/provider.js";
import { DEFAULT_STREAM_IDLE_MS, StreamIdleWatch } from "./stream-idle.js";
import { abortedError, httpFailureError, streamWithRetry, type RetryOptions } from "./provider-retry.js";
import { classifyGeminiFailure, type FailureFacts } from "./provider-refusal.js";
import { EMPTY_CONTENT_TEXT, connectionFailureError, resultBlocks, streamFailureError, toolInputObject } from "./wire-mapping.js";

/** The provider's name: on its id, its failures and the reasoning blocks (thought signatures) it keeps. */
export const GEMINI_PROVIDER = "gemini";
export const GEMINI_DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";
/** The API version every request goes to (the SDK's default, pinned so no environment changes it). */
export const GEMINI_API_VERSION = "v1beta";
/** Starts the id of a call the API sent without one; such ids are never sent back. */
export const GENERATED_CALL_PREFIX = "rhema-call-";

export interface GeminiProviderOptions {
  /** The model name, e.g. `"gemini-2.5-flash"`; the provider id is `gemini:<model>`. */
  model: string;
  apiKey: string;
  /** The API root, without the version (default https://generativelanguage.googleapis.com). */
  baseUrl?: string;
  /** The output cap when the request sets none; unset sends no cap (the server decides). */
  maxOutputTokens?: number;
  /** How long one HTTP request may take, its stream included (the SDK's timeout; default none). */
  timeoutMs?: number;
  /** The longest the stream may send no content before the attempt ends, retryable (default 5m; Infinity: none). */
  streamIdleMs?: number;
  retry?: RetryOptions;
  /** Ids for function calls the API sends without one (default: random). */
  newId?: () => string;
}

export class GeminiProvider implements ModelProvider {
  readonly id: string;
  private readonly client: GoogleGenAI;
  private readonly model: string;
  private readonly maxOutputTokens: number | undefined;
  private readonly retry: RetryOptions;
  private readonly streamIdleMs: number;
  private readonly newId: () => string;

  constructor(options: GeminiProviderOptions) {
    if (!options.model) throw new TypeError("GeminiProvider: expected a non-empty `model`, got an empty one");
    if (!options.apiKey) throw new TypeError("GeminiProvider: expected a non-empty `apiKey` (the SDK would look for one in the environment), got an empty one");
    this.model = options.model;
    this.id = `${GEMINI_PROVIDER}:${options.model}`;
    this.maxOutputTokens = options.maxOutputTokens;
    this.retry = options.retry ?? {};
    this.streamIdleMs = options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
    this.newId = options.newId ?? randomUUID;
    this.client = new GoogleGenAI({
      vertexai: false,
      apiKey: options.apiKey,
      apiVersion: GEMINI_API_VERSION,
      httpOptions: {
        baseUrl: options.baseUrl ?? GEMINI_DEFAULT_BASE_URL,
        ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      },
    });
  }

  async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    const params = toGeminiRequest(req, this.model, req.maxOutputTokens ?? this.maxOutputTokens);
    yield* streamWithRetry(GEMINI_PROVIDER, () => this.attempt(params, signal), geminiFailure, signal, this.retry);
  }

  private async *attempt(params: GenerateContentParameters, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const idle = new StreamIdleWatch(GEMINI_PROVIDER, this.streamIdleMs, signal);
    try {
      const chunks = await this.client.models.generateContentStream({ ...params, config: { ...params.config, abortSignal: idle.signal } });
      yield* translateGeminiStream(idle.watch(chunks, () => true), signal, this.newId);
    } catch (err) {
      throw idle.failure(err);
    } finally {
      idle.stop();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Request mapping

/** The SDK's parameters for `req` (what it sends: `contents`, `systemInstruction`, `tools`, `generationConfig`); `maxTokens` undefined sends no cap. */
export function toGeminiRequest(req: ModelRequest, model: string, maxTokens: number | undefined): GenerateContentParameters {
  const declarations: FunctionDeclaration[] = req.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.inputSchema }));
  const calls: CallNames = new Map();
  const contents: Content[] = req.messages.map((m) => (m.role === "assistant" ? modelContent(m, calls) : userContent(m, calls)));
  return {
    model,
    contents,
    config: {
      ...(req.system ? { systemInstruction: req.system } : {}),
      ...(declarations.length > 0 ? { tools: [{ functionDeclarations: declarations }] } : {}),
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
      // SDK-side only (nothing on the wire): one request, one attempt, no calls run by the SDK.
      automaticFunctionCalling: { disable: true },
      automaticContinuation: false,
    },
  };
}

/** The name of each call met so far in the conversation, by id: a response must name its function. */
type CallNames = Map<string, string>;

/** An assistant message as a `model` turn; `calls` learns its calls. */
function modelContent(message: Message, calls: CallNames): Content {
  const parts: Part[] = [];
  let signature: string | null = null;
  const push = (part: Part) => {
    parts.push(signature === null ? part : { ...part, thoughtSignature: signature });
    signature = null;
  };
  for (const block of message.content) {
    switch (block.type) {
      case "reasoning":
        if (block.provider !== GEMINI_PROVIDER) break;
        if (signature !== null) push({ text: "" });
        signature = block.data;
        break;
      case "text":
        if (block.text !== "" || signature !== null) push({ text: block.text });
        break;
      case "tool_call": {
        const own = block.id.startsWith(GENERATED_CALL_PREFIX);
        calls.set(block.id, block.name);
        push({ functionCall: { ...(own ? {} : { id: block.id }), name: block.name, args: toolInputObject(block.input) } });
        break;
      }
      case "image":
      case "tool_result":
        break; // not an assistant's: a session never holds one there
    }
  }
  if (signature !== null) push({ text: "" });
  return { role: "model", parts: parts.length > 0 ? parts : [{ text: EMPTY_CONTENT_TEXT }] };
}

/** A user message: its tool results as function responses first, their images after them, then the rest. */
function userContent(message: Message, calls: CallNames): Content {
  const responses: Part[] = [];
  const images: Part[] = [];
  const rest: Part[] = [];
  for (const block of message.content) {
    if (block.type === "tool_result") responses.push(functionResponse(block, calls, images));
    else if (block.type === "text" && block.text.trim() !== "") rest.push({ text: block.text });
    else if (block.type === "image") rest.push({ inlineData: { mimeType: block.mediaType, data: block.data } });
  }
  const parts = [...responses, ...images, ...rest];
  return { role: "user", parts: parts.length > 0 ? parts : [{ text: EMPTY_CONTENT_TEXT }] };
}

/** A result as a `functionResponse` naming its call's function (its id only when the API gave the call one); its images go to `images`. */
function functionResponse(result: ToolResultBlock, calls: CallNames, images: Part[]): Part {
  const blocks = resultBlocks(result);
  const texts: string[] = [];
  for (const b of blocks) {
    if (b.type === "text") texts.push(b.text);
    else {
      images.push({ inlineData: { mimeType: b.mediaType, data: b.data } });
      texts.push(`[${b.mediaType} image: attached after the function responses]`);
    }
  }
  const text = texts.length === 0 ? EMPTY_CONTENT_TEXT : texts.join("\n");
  const own = result.callId.startsWith(GENERATED_CALL_PREFIX);
  return {
    functionResponse: {
      ...(own ? {} : { id: result.callId }),
      name: calls.get(result.callId) ?? "",
      response: result.isError ? { error: text } : { output: text },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Stream mapping

const REFUSALS = new Set<string>([
  "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "LANGUAGE",
]);
const BAD_CALLS = new Set<string>(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"]);

/**
 * Our events from Gemini's stream of responses: for each part of the first candidate in order,
 * its thought signature (a `reasoning` event), then its text or its whole function call; then
 * the last usage and the stop from the finish reason. A stream that ends without a finish reason
 * is a retryable `provider_stream` error; one cut by `signal` an abort.
 */
export async function* translateGeminiStream(
  chunks: AsyncIterable<GenerateContentResponse>, signal: AbortSignal, newId: () => string = randomUUID,
): AsyncGenerator<StreamEvent> {
  let calls = 0;
  let usage: GenerateContentResponseUsageMetadata | undefined;
  let finish: FinishReason | string | undefined;
  for await (const chunk of chunks) {
    if (chunk.usageMetadata) usage = chunk.usageMetadata;
    if (chunk.promptFeedback?.blockReason && !chunk.candidates?.length) finish = "PROMPT_BLOCKED";
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.thoughtSignature) yield { type: "reasoning", provider: GEMINI_PROVIDER, id: "", data: part.thoughtSignature, summary: "" };
      if (part.functionCall) {
        calls++;
        yield callEvent(part.functionCall, newId);
      } else if (part.text && !part.thought) yield { type: "text", delta: part.text };
    }
    if (candidate?.finishReason) finish = candidate.finishReason;
  }
  if (finish === undefined) {
    if (signal.aborted) throw abortedError(GEMINI_PROVIDER, signal);
    throw new ProviderError(`${GEMINI_PROVIDER}: the stream ended before the response did (no finish reason)`, { retryable: true, code: "provider_stream" });
  }
  if (BAD_CALLS.has(finish)) {
    throw new ProviderError(`${GEMINI_PROVIDER}: the model's function call was ${finish === "MALFORMED_FUNCTION_CALL" ? "malformed" : "unexpected"} (${finish})`, { retryable: true, code: "provider_stream" });
  }
  if (usage) yield { type: "usage", usage: mapGeminiUsage(usage) };
  yield { type: "stop", reason: stopReasonOf(finish, calls) };
}

function callEvent(call: NonNullable<Part["functionCall"]>, newId: () => string): Extract<StreamEvent, { type: "tool_call" }> {
  const name = call.name ?? "";
  const args: unknown = call.args ?? {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new ProviderError(`${GEMINI_PROVIDER}: the model sent arguments for tool "${name}" that are not a JSON object: ${JSON.stringify(args).slice(0, 200)}`, {
      retryable: true, code: "provider_stream",
    });
  }
  return { type: "tool_call", id: call.id || `${GENERATED_CALL_PREFIX}${newId()}`, name, input: args };
}

function stopReasonOf(finish: string, calls: number): StopReason {
  if (finish === "STOP") return calls > 0 ? "tool_use" : "end_turn";
  if (finish === "MAX_TOKENS") return "max_tokens";
  if (finish === "PROMPT_BLOCKED" || REFUSALS.has(finish)) return "refusal";
  return "other";
}

/** `promptTokenCount` holds the cached tokens, ours does not; `candidatesTokenCount` leaves the thoughts out, ours does not. */
export function mapGeminiUsage(wire: GenerateContentResponseUsageMetadata): Usage {
  const prompt = (wire.promptTokenCount ?? 0) + (wire.toolUsePromptTokenCount ?? 0);
  const cached = Math.min(prompt, wire.cachedContentTokenCount ?? 0);
  const thoughts = wire.thoughtsTokenCount ?? 0;
  return {
    inputTokens: prompt - cached,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    outputTokens: (wire.candidatesTokenCount ?? 0) + thoughts,
    ...(thoughts > 0 ? { reasoningTokens: thoughts } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Failures

/** Google's error body, as the SDK puts it in an `ApiError`'s message (whole, or after `got status: X. `). */
interface GoogleErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: Array<{ "@type"?: string; retryDelay?: string; reason?: string }> };
}

/** A failure of one attempt as a `ProviderError`: an HTTP status through the shared classification, a broken connection, a torn stream. */
export function geminiFailure(err: unknown): ProviderError {
  if (err instanceof ApiError) {
    const body = errorBodyOf(err.message);
    const detail = body?.error?.message ?? err.message.slice(0, 300);
    const retryAfter = retryDelayMs(body);
    return httpFailureError({
      provider: GEMINI_PROVIDER,
      status: err.status,
      headers: retryAfter === undefined ? undefined : new Headers({ "retry-after-ms": String(retryAfter) }),
      kind: body?.error?.status ?? null,
      detail,
      verdict: classifyGeminiFailure(geminiFailureFacts(err.status, body, detail)),
      cause: err,
    });
  }
  if (err instanceof TypeError && /fetch failed/i.test(err.message)) return connectionFailureError(GEMINI_PROVIDER, err);
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) return connectionFailureError(GEMINI_PROVIDER, err);
  return streamFailureError(GEMINI_PROVIDER, err);
}

/** What Google's error body says, as provider-refusal.ts judges it (the `ErrorInfo` detail's reason as the code). */
export function geminiFailureFacts(status: number, body: GoogleErrorBody | null, message: string): FailureFacts {
  const googleStatus = body?.error?.status ?? null;
  const info = body?.error?.details?.find((d) => d["@type"]?.endsWith("google.rpc.ErrorInfo"));
  return { status, type: googleStatus, code: info?.reason ?? null, message, shouldRetry: null, bodyStatus: googleStatus };
}

function errorBodyOf(message: string): GoogleErrorBody | null {
  const start = message.indexOf("{");
  if (start < 0) return null;
  try {
    const parsed: unknown = JSON.parse(message.slice(start));
    return typeof parsed === "object" && parsed !== null ? (parsed as GoogleErrorBody) : null;
  } catch {
    return null;
  }
}

/** The wait a `google.rpc.RetryInfo` detail asks for (`"37s"`, `"1.5s"`), in ms. */
function retryDelayMs(body: GoogleErrorBody | null): number | undefined {
  const info = body?.error?.details?.find((d) => d["@type"]?.endsWith("google.rpc.RetryInfo"));
  const match = /^(\d+(?:\.\d+)?)s$/.exec(info?.retryDelay ?? "");
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

