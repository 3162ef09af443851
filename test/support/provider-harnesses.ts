/**
 * The provider contract's harnesses (test/providers/provider-contract.test.ts): for each named
 * provider in the registry, how its fake server is started and how the contract's wire-neutral
 * scenes — an answer, a cut stream, a rate limit, a refusal, a held-open or idle stream, a
 * malformed call, the stop reasons — are said on that provider's wire, and how a request body is
 * read back (its items, its key, the opaque state it carries). The contract makes each provider
 * through the registry (`loadNamedProvider`), never by its class.
 *
 * Each started fake also says how its provider is made on it (`made`): the credentials
 * `loadNamedProvider` takes, and the environment a task spec's `createProvider` reads — an API key
 * for the API-key providers; static AWS keys and the region for Bedrock (the adapter hands them to
 * the SDK explicitly, so no instance-metadata or profile lookup happens); an `external_account`
 * credentials file whose STS `token_url` is the fake itself for Vertex (the real auth library
 * exchanges the subject token there, as in CI). `keyOf` reads back the credential the fake saw:
 * the API key, the SigV4 access key, the bearer token.
 *
 * A new provider is one entry in `PROVIDER_HARNESSES` (the contract fails for a registry entry
 * without one). A provider on an existing wire reuses its scenes with another server: Bedrock and
 * Vertex are `{ ...anthropicScenes, … }` against their own fakes, with their own errors and `keyOf`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StopReason, Usage } from "../../src/core/provider.js";
import type { ProviderAuth } from "../../src/providers/provider-auth.js";
import { providerEntry, type NamedProviderName } from "../../src/providers/provider-registry.js";
import { FAKE_STS_PATH, FakeAnthropicServer, type FakeAnthropicReply } from "./fake-anthropic-server.js";
import { FakeBedrockServer, type FakeBedrockReply } from "./fake-bedrock-server.js";
import { FakeGeminiServer, type FakeGeminiReply } from "./fake-gemini-server.js";
import { FakeOpenAIResponsesServer, type FakeResponsesReply } from "./fake-openai-responses-server.js";
import { FakeOpenAIServer, type FakeOpenAIReply } from "./fake-openai-server.js";
import type { RecordedRequest } from "./fake-sse-server.js";
import { writeExternalAccountFile } from "./vertex-credentials.js";

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

/** How a provider is made on a started fake. */
export interface HarnessCredentials {
  /** What `loadNamedProvider` is handed. */
  readonly auth: ProviderAuth;
  /** The environment a task spec's `createProvider` reads: the credentials' variables and the base URL's. */
  readonly env: Readonly<Record<string, string>>;
  /** The credential `keyOf` reports for a provider made from `env`. */
  readonly envKey: string;
}

/** A started fake: what it was sent (the model requests; a token exchange is not one), and its queue of replies. */
export interface HarnessServer {
  readonly baseUrl: string;
  readonly made: HarnessCredentials;
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
  /** The credential the server was sent: the API key, the SigV4 access key, the bearer token. */
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

type AnyFake<R> = { baseUrl: string; requests: RecordedRequest[]; violations: string[]; dropped: number; reply(...r: R[]): unknown; close(): Promise<void> };

/** `fake` as the contract sees it; `isModelRequest` leaves out what is not a model request (a token exchange). */
function serverOf<R>(fake: AnyFake<R>, made: (baseUrl: string) => HarnessCredentials, isModelRequest: (req: RecordedRequest) => boolean = () => true): HarnessServer {
  const requests = () => fake.requests.filter(isModelRequest);
  return {
    get baseUrl() { return fake.baseUrl; },
    made: made(fake.baseUrl),
    get requests() { return requests(); },
    get bodies() { return requests().map((r) => r.body); },
    get violations() { return fake.violations; },
    get dropped() { return fake.dropped; },
    reply: (...replies) => void fake.reply(...replies.map((r) => r.wireReply as R)),
    close: () => fake.close(),
  };
}

/** An API-key provider's credentials: `sk-test` handed in, `sk-env` in its key variable. */
const apiKeyMade = (name: NamedProviderName) => (baseUrl: string): HarnessCredentials => {
  const keys = providerEntry(name).envKeys!;
  if (keys.auth.kind !== "api-key") throw new Error(`${name} does not take an API key`);
  return { auth: { kind: "api-key", apiKey: "sk-test" }, env: { [keys.auth.apiKey]: "sk-env", [keys.baseUrl]: baseUrl }, envKey: "sk-env" };
};

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

/** Bedrock's wire: the Anthropic events in AWS event-stream frames, Bedrock's own errors (`x-amzn-errortype`). */
const bedrockScenes: Omit<ProviderHarness, "start"> = {
  ...anthropicScenes,
  // The frames are binary: the cut falls in the first frame, or after the first text delta's.
  cut: (afterText) => wrap<FakeBedrockReply>({ kind: "cut_mid_frame", reply: { kind: "stream", blocks: [{ type: "text", text: "never finished" }] }, afterFrames: afterText ? 3 : 0 }),
  rateLimited: (s) => wrap<FakeBedrockReply>({ kind: "aws_error", status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again.", headers: { "retry-after": String(s) } }),
  overloaded: () => wrap<FakeBedrockReply>({ kind: "aws_error", status: 503, type: "ServiceUnavailableException", message: "Bedrock is unable to process your request." }),
  refusal: (reason) => {
    const quota: FakeBedrockReply = { kind: "aws_error", status: 400, type: "ServiceQuotaExceededException", message: "Your request exceeds the service quota for your account." };
    return reason === "auth"
      ? [wrap<FakeBedrockReply>({ kind: "aws_error", status: 403, type: "AccessDeniedException", message: "User: arn:aws:iam::123456789012:user/ci is not authorized to perform: bedrock:InvokeModelWithResponseStream" })]
      : [wrap(quota), wrap(quota)]; // transient until the retries are spent
  },
  // Bedrock's stream carries no keep-alives: the idle stream sends its first frame, then nothing.
  idle: () => wrap<FakeBedrockReply>({ kind: "stream", blocks: [{ type: "text", text: "never sent" }], hangAfterFrames: 1 }),
  keyOf: (req) => /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ""))?.[1],
};

/** Vertex AI's wire: the Anthropic SSE at `:streamRawPredict` behind Google's auth, Google's refusals. */
const vertexScenes: Omit<ProviderHarness, "start"> = {
  ...anthropicScenes,
  refusal: (reason) => {
    const exhausted: FakeAnthropicReply = { kind: "google_error", status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "Quota exceeded for aiplatform.googleapis.com/online_prediction_tokens_per_minute" };
    return reason === "auth"
      ? [wrap<FakeAnthropicReply>({ kind: "google_error", status: 403, googleStatus: "PERMISSION_DENIED", message: "Permission 'aiplatform.endpoints.predict' denied" })]
      : [wrap(exhausted), wrap(exhausted)]; // transient until the retries are spent
  },
  keyOf: bearer,
};

const BEDROCK = { accessKeyId: "AKIDFAKECONTRACT", secretAccessKey: "fake-contract-secret", region: "us-west-2" };

const bedrockMade = (baseUrl: string): HarnessCredentials => ({
  auth: { kind: "aws", region: BEDROCK.region, signing: { by: "keys", accessKeyId: BEDROCK.accessKeyId, secretAccessKey: BEDROCK.secretAccessKey, sessionToken: null } },
  env: { AWS_ACCESS_KEY_ID: BEDROCK.accessKeyId, AWS_SECRET_ACCESS_KEY: BEDROCK.secretAccessKey, AWS_REGION: BEDROCK.region, ANTHROPIC_BEDROCK_BASE_URL: baseUrl },
  envKey: BEDROCK.accessKeyId,
});

const VERTEX = { project: "rhema-contract", region: "us-east5", token: "ya29.fake-contract-token", subjectToken: "fake-contract-subject-token" };

let credentialsRoot: string | null = null;

/**
 * A Vertex fake with an `external_account` credentials file naming its STS endpoint, in a temp
 * folder removed when the process exits (a case may make its provider after closing its fake).
 */
async function startVertex(): Promise<HarnessServer> {
  const fake = await FakeAnthropicServer.startVertex(VERTEX);
  if (credentialsRoot === null) {
    const root = (credentialsRoot = mkdtempSync(join(tmpdir(), "rhema-vertex-contract-")));
    process.once("exit", () => rmSync(root, { recursive: true, force: true }));
  }
  const dir = mkdtempSync(join(credentialsRoot, "fake-"));
  const { file } = writeExternalAccountFile(dir, fake.tokenUrl, VERTEX.subjectToken);
  const made = (baseUrl: string): HarnessCredentials => ({
    auth: { kind: "google-adc", region: VERTEX.region, projectId: VERTEX.project, credentialsFile: file },
    env: { GOOGLE_APPLICATION_CREDENTIALS: file, CLOUD_ML_REGION: VERTEX.region, ANTHROPIC_VERTEX_PROJECT_ID: VERTEX.project, ANTHROPIC_VERTEX_BASE_URL: baseUrl },
    envKey: VERTEX.token,
  });
  return serverOf(fake, made, (req) => req.path !== FAKE_STS_PATH);
}

/** One harness per named provider; the contract fails for a registry entry missing here. */
export const PROVIDER_HARNESSES: Readonly<Record<string, ProviderHarness>> = {
  anthropic: {
    ...anthropicScenes,
    start: async () => serverOf(await FakeAnthropicServer.start(), apiKeyMade("anthropic")),
    keyOf: (req) => (req.headers["x-api-key"] as string | undefined) ?? bearer(req),
  },
  openai: { ...openaiScenes, start: async () => serverOf(await FakeOpenAIServer.start(), apiKeyMade("openai")) },
  "openai-responses": { ...responsesScenes, start: async () => serverOf(await FakeOpenAIResponsesServer.start(), apiKeyMade("openai-responses")) },
  gemini: {
    ...geminiScenes,
    async start() {
      const server = await FakeGeminiServer.start();
      server.requireSignatures = true; // as Gemini 3: each model turn's first call must carry its signature back
      return serverOf(server, apiKeyMade("gemini"));
    },
  },
  "anthropic-bedrock": { ...bedrockScenes, start: async () => serverOf(await FakeBedrockServer.start(BEDROCK), bedrockMade) },
  "anthropic-vertex": { ...vertexScenes, start: startVertex },
} satisfies Record<NamedProviderName, ProviderHarness>;
