/**
 * What only the gemini provider does, against a fake Gemini API over real HTTP through the
 * official SDK: request mapping (function calls without ids answered by name and order, thought
 * signatures sent back in place), calls without ids given ours, a signature on an empty part, a
 * stream with no frame, Google's ways of refusing a key, malformed frames, images, and the SDK's
 * own environment variables ignored. What every provider does (streams, usage, stop reasons,
 * retries with RetryInfo, refusals, abort, the idle limit, a resume carrying its signatures byte
 * for byte, cassettes) is the provider contract's (provider-contract.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import { GeminiProvider, type GeminiProviderOptions } from "../../src/providers/gemini.js";
import { FakeGeminiServer } from "../support/fake-gemini-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const readFile = { name: "read_file", description: "Reads a file.", inputSchema: { type: "object", properties: { path: { type: "string" } } } };

async function fake(t: { after(fn: () => unknown): void }): Promise<FakeGeminiServer> {
  const server = await FakeGeminiServer.start();
  t.after(() => server.close());
  return server;
}

/** A provider on `server` whose waits are recorded instead of slept, and whose made-up call ids count up. */
function providerOn(server: FakeGeminiServer, options: Partial<GeminiProviderOptions> = {}) {
  const waits: number[] = [];
  let n = 0;
  const provider = new GeminiProvider({
    model: "gemini-test", apiKey: "AIza-test", baseUrl: server.baseUrl, newId: () => String(++n), ...options,
    retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...options.retry },
  });
  return { provider, waits };
}

test("maps the system prompt, tools, calls with and without ids, signatures and results to Gemini contents", async (t) => {
  const server = await fake(t);
  server.requireSignatures = true;
  server.reply({ kind: "stream", text: "ok" });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    user("Read a.txt"),
    { role: "assistant", content: [
      { type: "text", text: "Reading." },
      { type: "reasoning", provider: "gemini", id: "", data: "sig-1", summary: "" },
      { type: "reasoning", provider: "openai-responses", id: "rs_1", data: "enc", summary: "not this API's" },
      { type: "tool_call", id: "rhema-call-7", name: "read_file", input: { path: "a.txt" } },
      { type: "tool_call", id: "rhema-call-8", name: "read_file", input: { path: "b.txt" } },
    ] },
    { role: "user", content: [
      { type: "tool_result", callId: "rhema-call-7", content: "hello" },
      { type: "tool_result", callId: "rhema-call-8", content: "no such file", isError: true },
      { type: "text", text: "and now?" },
    ] },
    { role: "assistant", content: [{ type: "reasoning", provider: "gemini", id: "", data: "sig-2", summary: "" }, { type: "tool_call", id: "fc-api-id", name: "read_file", input: { path: "c.txt" } }] },
    { role: "user", content: [{ type: "tool_result", callId: "fc-api-id", content: "" }] },
  ];
  await collect(provider.stream(request(messages, { tools: [readFile], maxOutputTokens: 500 }), new AbortController().signal));
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests[0]!.path, "/v1beta/models/gemini-test:streamGenerateContent");
  assert.equal(server.requests[0]!.query.get("alt"), "sse");
  assert.equal(server.requests[0]!.headers["x-goog-api-key"], "AIza-test");
  assert.deepEqual(server.bodies[0], {
    contents: [
      { role: "user", parts: [{ text: "Read a.txt" }] },
      { role: "model", parts: [
        { text: "Reading." },
        { functionCall: { name: "read_file", args: { path: "a.txt" } }, thoughtSignature: "sig-1" },
        { functionCall: { name: "read_file", args: { path: "b.txt" } } },
      ] },
      { role: "user", parts: [
        { functionResponse: { name: "read_file", response: { output: "hello" } } },
        { functionResponse: { name: "read_file", response: { error: "no such file" } } },
        { text: "and now?" },
      ] },
      { role: "model", parts: [{ functionCall: { id: "fc-api-id", name: "read_file", args: { path: "c.txt" } }, thoughtSignature: "sig-2" }] },
      { role: "user", parts: [{ functionResponse: { id: "fc-api-id", name: "read_file", response: { output: "(no content)" } } }] },
    ],
    systemInstruction: { parts: [{ text: "You are terse." }], role: "user" },
    tools: [{ functionDeclarations: [{ name: "read_file", description: "Reads a file.", parametersJsonSchema: readFile.inputSchema }] }],
    generationConfig: { maxOutputTokens: 500 },
  });
});

test("streams text, signatures before their parts, and whole calls, one without an id given one of ours, from bytes cut mid-frame", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream", splitBytes: 7, text: "Let me look — ünïcode.", signature: "c2lnbmF0dXJl",
    calls: [{ name: "read_file", args: { path: "x.ts" } }, { name: "read_file", id: "api-id", args: {} }],
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("go")], { tools: [readFile] }), new AbortController().signal));
  assert.deepEqual(events.filter((e) => e.type !== "text" && e.type !== "usage"), [
    { type: "reasoning", provider: "gemini", id: "", data: "c2lnbmF0dXJl", summary: "" },
    { type: "tool_call", id: "rhema-call-1", name: "read_file", input: { path: "x.ts" } },
    { type: "tool_call", id: "api-id", name: "read_file", input: {} },
    { type: "stop", reason: "tool_use" },
  ]);
  assert.equal(textOf(events), "Let me look — ünïcode.");
});

test("a signature on an empty trailing part is kept, and sent back on an empty part", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "Answer.", trailingSignature: "trail-sig" }, { kind: "stream", text: "ok" });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("q")]), new AbortController().signal));
  assert.deepEqual(events.filter((e) => e.type === "reasoning"), [{ type: "reasoning", provider: "gemini", id: "", data: "trail-sig", summary: "" }]);
  const answer: Message = { role: "assistant", content: [{ type: "text", text: "Answer." }, { type: "reasoning", provider: "gemini", id: "", data: "trail-sig", summary: "" }] };
  await collect(provider.stream(request([user("q"), answer, user("more")]), new AbortController().signal));
  assert.deepEqual(server.bodies[1].contents[1], { role: "model", parts: [{ text: "Answer." }, { text: "", thoughtSignature: "trail-sig" }] });
});

test("a stream that ends with no frame is retried", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "never started", endAfterFrames: 0 }, { kind: "stream", text: "finally" });
  const { provider, waits } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "finally");
  assert.equal(server.requests.length, 2);
  assert.deepEqual(waits, [500]);
});

test("a 401 and a bad key's 400 (its ErrorInfo reason) refuse the key, named with Google's status; another 400 does not", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "http_error", status: 400, googleStatus: "INVALID_ARGUMENT", message: "Invalid JSON payload received." },
    { kind: "http_error", status: 401, googleStatus: "UNAUTHENTICATED", message: "Request had invalid authentication credentials." },
    { kind: "http_error", status: 400, googleStatus: "INVALID_ARGUMENT", message: "API key not valid. Please pass a valid API key.", errorInfoReason: "API_KEY_INVALID" },
  );
  const { provider, waits } = providerOn(server);
  const failures: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
      assert.ok(err instanceof ProviderError);
      failures.push({ message: err.message, code: err.code, status: err.status, retryable: err.retryable });
      return true;
    });
  }
  assert.deepEqual(failures, [
    { message: "gemini: 400 INVALID_ARGUMENT: Invalid JSON payload received.", code: "provider", status: 400, retryable: false },
    { message: "gemini: refused the key (401 UNAUTHENTICATED: Request had invalid authentication credentials.)", code: "provider_refused", status: 401, retryable: false },
    { message: "gemini: refused the key (400 INVALID_ARGUMENT: API key not valid. Please pass a valid API key.)", code: "provider_refused", status: 400, retryable: false },
  ]);
  assert.deepEqual(waits, []);
  assert.equal(server.requests.length, 3);
});

test("a malformed frame is a retryable provider_stream error", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "abc", rawFrame: "{not json" });
  const { provider } = providerOn(server, { retry: { maxAttempts: 1 } });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) =>
    err instanceof ProviderError && err.retryable && err.code === "provider_stream" && /^gemini: the stream sent malformed data|^gemini: the stream failed/.test(err.message));
});

test("sends user images as inlineData, and a tool's image after the function responses", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "a red dot" });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", mediaType: "image/png", data: PNG }] },
    { role: "assistant", content: [{ type: "tool_call", id: "rhema-call-s", name: "screenshot", input: {} }] },
    { role: "user", content: [{ type: "tool_result", callId: "rhema-call-s", content: [{ type: "text", text: "shot:" }, { type: "image", mediaType: "image/png", data: PNG }] }] },
  ];
  await collect(provider.stream(request(messages), new AbortController().signal));
  const image = { inlineData: { mimeType: "image/png", data: PNG } };
  assert.deepEqual(server.bodies[0].contents, [
    { role: "user", parts: [{ text: "What is this?" }, image] },
    { role: "model", parts: [{ functionCall: { name: "screenshot", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "screenshot", response: { output: "shot:\n[image/png image: attached after the function responses]" } } }, image] },
  ]);
  assert.deepEqual(server.violations, []);
});

test("reads nothing from the environment: the SDK's own variables do not move the backend, the key or the base URL", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "ours" });
  const ambient = { GOOGLE_GENAI_USE_VERTEXAI: "true", GOOGLE_API_KEY: "AIza-ambient", GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9", GOOGLE_CLOUD_PROJECT: "p", GOOGLE_CLOUD_LOCATION: "us-central1" };
  const saved = Object.fromEntries(Object.keys(ambient).map((k) => [k, process.env[k]]));
  Object.assign(process.env, ambient);
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  });
  const { provider } = providerOn(server, { retry: { maxAttempts: 1 } });
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "ours");
  assert.deepEqual([server.requests[0]!.path, server.requests[0]!.headers["x-goog-api-key"]], ["/v1beta/models/gemini-test:streamGenerateContent", "AIza-test"]);
  // Without a base URL of ours, Google's own, not the SDK's variable: read off the SDK's client, since a request would leave the machine.
  const unset = new GeminiProvider({ model: "gemini-test", apiKey: "AIza-test" }) as unknown as { client: { apiClient: { getBaseUrl(): string } } };
  assert.equal(unset.client.apiClient.getBaseUrl(), "https://generativelanguage.googleapis.com");
});
