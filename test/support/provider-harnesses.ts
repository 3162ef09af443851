/**
 * The provider contract's harnesses (test/providers/provider-contract.test.ts): for each named
 * provider in the registry, how its fake server is started and how the contract's wire-neutral
 * scenes — an answer, a cut stream, a rate limit, a refusal, a held-open or idle stream, a
 * malformed call, the stop reasons — are said on that provider's wire, and how a request body is
 * read back (its items, its key, the opaque state it carries). The contract makes each provider
 * through the registry (`loadNamedProvider`), never by its class.
 *
 * A new provider is one entry in `PROVIDER_HARNESSES` (the contract fails for a registry entry
 * without one). A provider on an existing wire reuses its scenes with another server: Bedrock or
 * Vertex would be `{ ...anthropicScenes, start: … }` against their own fakes, with `keyOf` theirs.
 */
import type { StopReason, Usage } from "../../src/core/provider.js";
import type { NamedProviderName } from "../../src/providers/provider-registry.js";
import { FakeAnthropicServer, type FakeAnthropicReply } from "./fake-anthropic-server.js";
import { FakeGeminiServer, type FakeGeminiReply } from "./fake-gemini-server.js";
import { FakeOpenAIResponsesServer, type FakeResponsesReply } from "./fake-openai-responses-server.js";
import { FakeOpenAIServer, type FakeOpenAIReply } from "./fake-openai-server.js";
import type { RecordedRequest } from "./fake-sse-server.js";

/** A tool call the model makes; `rawArguments` is sent as the arguments' text where the wire streams it as text. */
export interface ContractCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  rawArguments?: string;
}

/** Usage as the contract states it: `input` uncached, `output` with `reasoning` inside it. */
export interface ContractUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

export interface ContractAnswer {
  text?: string;
  calls?: ContractCall[];
  usage?: ContractUsage;
  /** State the model hands back opaque, to be sent again (ignored by a wire that has none). */
  opaque?: string;
  splitBytes?: number;
}

/** A reply in one fake's own shape; only its harness reads it. */
export type WireReply = { readonly wireReply: unknown };

/** A started fake: what it was sent, and its queue of replies. */
export interface HarnessServer {
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  readonly bodies: any[];
  readonly violations: string[];
  readonly dropped: number;
  reply(...replies: WireReply[]): void;
  close(): Promise<void>;
}

export interface ProviderHarness {
  /** Starts the provider's fake server. */
  start(): Promise<HarnessServer>;
  /** What the wire can say: cache writes in its usage; opaque state to carry back. */
  readonly wire: { readonly cacheWrites: boolean; readonly opaqueState: boolean };
  answer(a: ContractAnswer): WireReply;
  /** An answer whose connection drops mid-event: before any content, or after its first text. */
  cut(afterText: boolean): WireReply;
  /** A rate limit asking for a wait of `seconds`. */
  rateLimited(seconds: number): WireReply;
  /** A transient failure (overloaded, a 5xx). */
  overloaded(): WireReply;
  /** The replies, in order, after which the provider refuses the run for `reason` (a quota retried first is more than one). */
  refusal(reason: "auth" | "quota"): WireReply[];
  /** An answer that streams some text, then holds the stream open. */
  hang(): WireReply;
  /** An answer that opens the stream, then sends nothing that is content (keep-alives where the wire has them). */
  idle(): WireReply;
  /** A tool call the provider cannot parse. */
  malformedCall(name: string): WireReply;
  /** Replies and the stop reason each maps to, covering every reason the wire can say. */
  stops(): Array<{ reply: WireReply; reason: StopReason }>;
  /** The API key the server was sent. */
  keyOf(req: RecordedRequest): string | undefined;
  /** A body's conversation items (messages, input items, contents), marks that move each request (cache marks) removed. */
  itemsOf(body: any): unknown[];
  /** The opaque state a body carries back, in order. */
  opaqueOf(body: any): string[];
}

/** The usage the contract expects a provider to report for `u` on a wire with or without cache writes. */
export function expectedUsage(u: ContractUsage, cacheWrites: boolean): Usage {
  return {
    inputTokens: u.input, cacheReadTokens: u.cacheRead, cacheWriteTokens: cacheWrites ? u.cacheWrite : 0, outputTokens: u.output,
    ...(u.reasoning > 0 ? { reasoningTokens: u.reasoning } : {}),
  };
}

function serverOf<R>(fake: { baseUrl: string; requests: RecordedRequest[]; bodies: any[]; violations: string[]; dropped: number; reply(...r: R[]): unknown; close(): Promise<void> }): HarnessServer {
  return {
    get baseUrl() { return fake.baseUrl; },
    get requests() { return fake.requests; },
    get bodies() { return fake.bodies; },
    get violations() { return fake.violations; },
    get dropped() { return fake.dropped; },
    reply: (...replies) => void fake.reply(...replies.map((r) => r.wireReply as R)),
    close: () => fake.close(),
  };
}

const wrap = <R>(reply: R): WireReply => ({ wireReply: reply });
const argsText = (c: ContractCall): string => c.rawArguments ?? JSON.stringify(c.input);
const bearer = (req: RecordedRequest): string | undefined => String(req.headers.authorization ?? "").replace(/^Bearer /, "") || undefined;

/** Anthropic's Messages wire (also what Bedrock and Vertex speak). */
export const anthropicScenes: Omit<ProviderHarness, "start" | "keyOf"> = {
  wire: { cacheWrites: true, opaqueState: false },
  answer: (a) => wrap<FakeAnthropicReply>({
    kind: "stream", splitBytes: a.splitBytes,
    blocks: [
      ...(a.text !== undefined ? [{ type: "text" as const, text: a.text }] : []),
      ...(a.calls ?? []).map((c) => ({ type: "tool_use" as const, id: c.id, name: c.name, ...(c.rawArguments !== undefined ? { rawJson: c.rawArguments } : { input: c.input }) })),
    ],
    ...(a.usage ? { usage: {
      input_tokens: a.usage.input, cache_read_input_tokens: a.usage.cacheRead, cache_creation_input_tokens: a.usage.cacheWrite,
      output_tokens: a.usage.output, ...(a.usage.reasoning > 0 ? { thinking_tokens: a.usage.reasoning } : {}),
    } } : {}),
  }),
  // message_start, content_block_start, the first text delta, then the cut.
  cut: (afterText) => wrap<FakeAnthropicReply>({ kind: "stream", blocks: [{ type: "text", text: "never finished" }], cutInFrame: afterText ? 3 : 0 }),
  rateLimited: (s) => wrap<FakeAnthropicReply>({ kind: "http_error", status: 429, type: "rate_limit_error", message: "slow down", headers: { "retry-after": String(s) } }),
  overloaded: () => wrap<FakeAnthropicReply>({ kind: "http_error", status: 529, type: "overloaded_error", message: "Overloaded" }),
  refusal: (reason) => [wrap<FakeAnthropicReply>(reason === "auth"
    ? { kind: "http_error", status: 401, type: "authentication_error", message: "invalid x-api-key" }
    : { kind: "http_error", status: 400, type: "invalid_request_error", message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits." })],
  hang: () => wrap<FakeAnthropicReply>({ kind: "stream", blocks: [{ type: "text", text: "a long answer that never finishes" }], hangAfterFrames: 3 }),
  idle: () => wrap<FakeAnthropicReply>({ kind: "stream", blocks: [{ type: "text", text: "never sent" }], hangAfterFrames: 1, pingEveryMs: 40 }),
  malformedCall: (name) => wrap<FakeAnthropicReply>({ kind: "stream", blocks: [{ type: "tool_use", id: "toolu_x", name, rawJson: '{"path": "a.txt"' }] }),
  stops: () => ([
    ["end_turn", "end_turn"], ["max_tokens", "max_tokens"], ["stop_sequence", "stop_sequence"], ["refusal", "refusal"],
    ["pause_turn", "other"], ["model_context_window_exceeded", "other"],
  ] as const).map(([stopReason, reason]) => ({ reply: wrap<FakeAnthropicReply>({ kind: "stream", blocks: [{ type: "text", text: "x" }], stopReason }), reason })),
  itemsOf: (body) => JSON.parse(JSON.stringify(body.messages, (k, v) => (k === "cache_control" ? undefined : v))),
  opaqueOf: () => [],
};

/** OpenAI's Chat Completions wire (and every compatible server's). */
const openaiScenes: Omit<ProviderHarness, "start"> = {
  wire: { cacheWrites: false, opaqueState: false },
  answer: (a) => wrap<FakeOpenAIReply>({
    kind: "stream", splitBytes: a.splitBytes, text: a.text,
    toolCalls: (a.calls ?? []).map((c) => ({ id: c.id, name: c.name, rawArguments: argsText(c) })),
    ...(a.usage ? { usage: { prompt_tokens: a.usage.input + a.usage.cacheRead, cached_tokens: a.usage.cacheRead, completion_tokens: a.usage.output, reasoning_tokens: a.usage.reasoning } } : {}),
  }),
  // The role chunk, the first text piece, then the cut.
  cut: (afterText) => wrap<FakeOpenAIReply>({ kind: "stream", text: "never finished", cutInFrame: afterText ? 2 : 0 }),
  rateLimited: (s) => wrap<FakeOpenAIReply>({ kind: "http_error", status: 429, type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached", headers: { "retry-after-ms": String(s * 1000) } }),
  overloaded: () => wrap<FakeOpenAIReply>({ kind: "http_error", status: 503, type: "server_error", message: "The server is overloaded" }),
  refusal: (reason) => [wrap<FakeOpenAIReply>(reason === "auth"
    ? { kind: "http_error", status: 401, type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided: sk-test." }
    : { kind: "http_error", status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details." })],
  hang: () => wrap<FakeOpenAIReply>({ kind: "stream", text: "a long answer that never finishes", hangAfterFrames: 2 }),
  idle: () => wrap<FakeOpenAIReply>({ kind: "stream", text: "never sent", hangAfterFrames: 1, keepAliveEveryMs: 40 }),
  malformedCall: (name) => wrap<FakeOpenAIReply>({ kind: "stream", toolCalls: [{ id: "call_x", name, rawArguments: '{"path": ' }] }),
  stops: () => ([["stop", "end_turn"], ["length", "max_tokens"], ["content_filter", "refusal"], ["tool_calls", "tool_use"], ["weird", "other"]] as const)
    .map(([finishReason, reason]) => ({ reply: wrap<FakeOpenAIReply>({ kind: "stream", text: "x", finishReason }), reason })),
  keyOf: bearer,
  itemsOf: (body) => body.messages,
  opaqueOf: () => [],
};

/** OpenAI's Responses wire: reasoning items carried back as opaque state. */
const responsesScenes: Omit<ProviderHarness, "start"> = {
  wire: { cacheWrites: false, opaqueState: true },
  answer: (a) => wrap<FakeResponsesReply>({
    kind: "stream", splitBytes: a.splitBytes, text: a.text,
    ...(a.opaque !== undefined ? { reasoning: [{ id: `rs_${a.opaque}`, encrypted: a.opaque, summary: ["Thinking."] }] } : {}),
    calls: (a.calls ?? []).map((c) => ({ callId: c.id, name: c.name, rawArguments: argsText(c) })),
    ...(a.usage ? { usage: { input_tokens: a.usage.input + a.usage.cacheRead, cached_tokens: a.usage.cacheRead, output_tokens: a.usage.output, reasoning_tokens: a.usage.reasoning } } : {}),
  }),
  // created, in_progress, item added, part added, the first text delta, then the cut.
  cut: (afterText) => wrap<FakeResponsesReply>({ kind: "stream", text: "never finished", cutInFrame: afterText ? 5 : 0 }),
  rateLimited: (s) => wrap<FakeResponsesReply>({ kind: "http_error", status: 429, type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached", headers: { "retry-after-ms": String(s * 1000) } }),
  overloaded: () => wrap<FakeResponsesReply>({ kind: "http_error", status: 503, type: "server_error", message: "The server is overloaded" }),
  refusal: (reason) => [wrap<FakeResponsesReply>(reason === "auth"
    ? { kind: "http_error", status: 401, type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided: sk-test." }
    : { kind: "http_error", status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota." })],
  hang: () => wrap<FakeResponsesReply>({ kind: "stream", text: "a long answer that never finishes", hangAfterFrames: 6 }),
  idle: () => wrap<FakeResponsesReply>({ kind: "stream", text: "never sent", hangAfterFrames: 0 }),
  malformedCall: (name) => wrap<FakeResponsesReply>({ kind: "stream", calls: [{ callId: "call_x", name, rawArguments: '{"path": ' }] }),
  stops: () => [
    { reply: wrap<FakeResponsesReply>({ kind: "stream", text: "done" }), reason: "end_turn" },
    { reply: wrap<FakeResponsesReply>({ kind: "stream", calls: [{ callId: "call_s", name: "grep", arguments: {} }] }), reason: "tool_use" },
    { reply: wrap<FakeResponsesReply>({ kind: "stream", text: "cut", incomplete: "max_output_tokens" }), reason: "max_tokens" },
    { reply: wrap<FakeResponsesReply>({ kind: "stream", incomplete: "content_filter" }), reason: "refusal" },
    { reply: wrap<FakeResponsesReply>({ kind: "stream", refusal: "I can't help with that." }), reason: "refusal" },
  ],
  keyOf: bearer,
  itemsOf: (body) => body.input,
  opaqueOf: (body) => body.input.filter((i: any) => i.type === "reasoning").map((i: any) => i.encrypted_content),
};

/** Google's Gemini wire: thought signatures carried back as opaque state; calls sent whole. */
const geminiScenes: Omit<ProviderHarness, "start"> = {
  wire: { cacheWrites: false, opaqueState: true },
  answer: (a) => wrap<FakeGeminiReply>({
    kind: "stream", splitBytes: a.splitBytes, text: a.text,
    calls: (a.calls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.rawArguments === "" ? {} : c.input })),
    ...((a.calls ?? []).length > 0 ? { signature: a.opaque } : { trailingSignature: a.opaque }),
    ...(a.usage ? { usage: {
      promptTokenCount: a.usage.input + a.usage.cacheRead, cachedContentTokenCount: a.usage.cacheRead,
      candidatesTokenCount: a.usage.output - a.usage.reasoning, thoughtsTokenCount: a.usage.reasoning,
    } } : {}),
  }),
  // Each frame is a whole response: the cut falls in the first (before content) or the second.
  cut: (afterText) => wrap<FakeGeminiReply>({ kind: "stream", text: "never finished", cutInFrame: afterText ? 1 : 0 }),
  rateLimited: (s) => wrap<FakeGeminiReply>({ kind: "http_error", status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "Resource has been exhausted (e.g. check quota).", retryDelay: `${s}s` }),
  overloaded: () => wrap<FakeGeminiReply>({ kind: "http_error", status: 503, googleStatus: "UNAVAILABLE", message: "The model is overloaded. Please try again later." }),
  refusal: (reason) => {
    const exhausted: FakeGeminiReply = { kind: "http_error", status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "You exceeded your current quota, please check your plan and billing details.", retryDelay: "1s" };
    return reason === "auth"
      ? [wrap<FakeGeminiReply>({ kind: "http_error", status: 403, googleStatus: "PERMISSION_DENIED", message: "Your API key was reported as leaked. Please use another API key." })]
      : [wrap(exhausted), wrap(exhausted), wrap(exhausted)]; // transient until the retries are spent
  },
  hang: () => wrap<FakeGeminiReply>({ kind: "stream", text: "a long answer that never finishes", hangAfterFrames: 1 }),
  idle: () => wrap<FakeGeminiReply>({ kind: "stream", text: "never sent", hangAfterFrames: 0 }),
  malformedCall: () => wrap<FakeGeminiReply>({ kind: "stream", finishReason: "MALFORMED_FUNCTION_CALL" }),
  stops: () => [
    { reply: wrap<FakeGeminiReply>({ kind: "stream", text: "done" }), reason: "end_turn" },
    { reply: wrap<FakeGeminiReply>({ kind: "stream", calls: [{ id: "c", name: "grep", args: {} }] }), reason: "tool_use" },
    { reply: wrap<FakeGeminiReply>({ kind: "stream", text: "cut", finishReason: "MAX_TOKENS" }), reason: "max_tokens" },
    { reply: wrap<FakeGeminiReply>({ kind: "stream", finishReason: "SAFETY" }), reason: "refusal" },
    { reply: wrap<FakeGeminiReply>({ kind: "stream", blockPrompt: "PROHIBITED_CONTENT" }), reason: "refusal" },
    { reply: wrap<FakeGeminiReply>({ kind: "stream", text: "hm", finishReason: "OTHER" }), reason: "other" },
  ],
  keyOf: (req) => req.headers["x-goog-api-key"] as string | undefined,
  itemsOf: (body) => body.contents,
  opaqueOf: (body) => body.contents.flatMap((c: any) => c.parts.flatMap((p: any) => (p.thoughtSignature ? [p.thoughtSignature] : []))),
};

/** One harness per named provider; the contract fails for a registry entry missing here. */
export const PROVIDER_HARNESSES: Readonly<Record<string, ProviderHarness>> = {
  anthropic: { ...anthropicScenes, start: async () => serverOf(await FakeAnthropicServer.start()), keyOf: (req) => (req.headers["x-api-key"] as string | undefined) ?? bearer(req) },
  openai: { ...openaiScenes, start: async () => serverOf(await FakeOpenAIServer.start()) },
  "openai-responses": { ...responsesScenes, start: async () => serverOf(await FakeOpenAIResponsesServer.start()) },
  gemini: {
    ...geminiScenes,
    async start() {
      const server = await FakeGeminiServer.start();
      server.requireSignatures = true; // as Gemini 3: each model turn's first call must carry its signature back
      return serverOf(server);
    },
  },
} satisfies Record<NamedProviderName, ProviderHarness>;
