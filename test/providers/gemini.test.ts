/**
 * The gemini provider against a fake Gemini API over real HTTP, through the official SDK:
 * request mapping (function calls without ids answered by name and order, thought signatures
 * sent back in place), stream mapping from bytes cut mid-frame, usage with cached and thinking
 * tokens, stop reasons, retry (a 429's RetryInfo), errors, abort, malformed frames, images, the
 * registry, and a turn through CodingAgent resumed from disk whose requests are byte-stable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CodingAgent } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { ProviderError } from "../../src/core/errors.js";
import { nullSink } from "../../src/core/events.js";
import type { Message } from "../../src/core/messages.js";
import { GeminiProvider, type GeminiProviderOptions } from "../../src/providers/gemini.js";
import { createProvider } from "../../src/providers/provider-factory.js";
import { FakeGeminiServer } from "../support/fake-gemini-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";
import { tempDir } from "../support/temp-dir.js";
import { LINES_FILE, appendLineTool } from "../support/test-tools.js";

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

test("streams text, signatures before their parts and whole calls, then usage less cached with thoughts as output, from bytes cut mid-frame", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream", splitBytes: 7, text: "Let me look — ünïcode.", signature: "c2lnbmF0dXJl",
    calls: [{ name: "read_file", args: { path: "x.ts" } }, { name: "read_file", id: "api-id", args: {} }],
    usage: { promptTokenCount: 1200, candidatesTokenCount: 26, cachedContentTokenCount: 1024, thoughtsTokenCount: 64 },
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("go")], { tools: [readFile] }), new AbortController().signal));
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "reasoning", provider: "gemini", id: "", data: "c2lnbmF0dXJl", summary: "" },
    { type: "tool_call", id: "rhema-call-1", name: "read_file", input: { path: "x.ts" } },
    { type: "tool_call", id: "api-id", name: "read_file", input: {} },
    { type: "usage", usage: { inputTokens: 176, cacheReadTokens: 1024, cacheWriteTokens: 0, outputTokens: 90, reasoningTokens: 64 } },
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

test("stop reasons: STOP is end_turn, MAX_TOKENS max_tokens, SAFETY and a blocked prompt refusal, OTHER other", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", text: "done" },
    { kind: "stream", text: "cut", finishReason: "MAX_TOKENS" },
    { kind: "stream", finishReason: "SAFETY" },
    { kind: "stream", blockPrompt: "PROHIBITED_CONTENT" },
    { kind: "stream", text: "hm", finishReason: "OTHER" },
  );
  const { provider } = providerOn(server);
  const stops: string[] = [];
  for (let i = 0; i < 5; i++) {
    const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
    stops.push((events.at(-1) as { reason: string }).reason);
  }
  assert.deepEqual(stops, ["end_turn", "max_tokens", "refusal", "refusal", "other"]);
});

test("a 429 waits its RetryInfo delay, a 503 and a stream that ends with no frame are retried", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "http_error", status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "You exceeded your current quota.", retryDelay: "2s" },
    { kind: "http_error", status: 503, googleStatus: "UNAVAILABLE", message: "The model is overloaded. Please try again later." },
    { kind: "stream", text: "never started", endAfterFrames: 0 },
    { kind: "stream", text: "finally" },
  );
  const { provider, waits } = providerOn(server, { retry: { maxAttempts: 4 } });
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "finally");
  assert.equal(server.requests.length, 4);
  assert.deepEqual(waits, [2000, 1000, 2000]);
});

test("does not retry a 400, a 401 or a bad key's 400; the key's refuse the run, named with Google's status", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "http_error", status: 400, googleStatus: "INVALID_ARGUMENT", message: "Invalid JSON payload received." },
    { kind: "http_error", status: 401, googleStatus: "UNAUTHENTICATED", message: "Request had invalid authentication credentials." },
    { kind: "http_error", status: 400, googleStatus: "INVALID_ARGUMENT", message: "API key not valid. Please pass a valid API key.", errorInfoReason: "API_KEY_INVALID" },
    { kind: "http_error", status: 403, googleStatus: "PERMISSION_DENIED", message: "Your API key was reported as leaked. Please use another API key." },
  );
  const { provider, waits } = providerOn(server);
  const failures: unknown[] = [];
  for (let i = 0; i < 4; i++) {
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
    { message: "gemini: refused the key (403 PERMISSION_DENIED: Your API key was reported as leaked. Please use another API key.)", code: "provider_refused", status: 403, retryable: false },
  ]);
  assert.deepEqual(waits, []);
  assert.equal(server.requests.length, 4);
});

test("a RESOURCE_EXHAUSTED that does not clear within the retries refuses the run for its quota", async (t) => {
  const server = await fake(t);
  const exhausted = { kind: "http_error" as const, status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "You exceeded your current quota, please check your plan and billing details.", retryDelay: "1s" };
  server.reply(exhausted, exhausted);
  const { provider, waits } = providerOn(server, { retry: { maxAttempts: 2 } });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.deepEqual({ code: err.code, message: err.message }, {
      code: "provider_refused", message: "gemini: refused the run: its quota or credit is spent (429 RESOURCE_EXHAUSTED: You exceeded your current quota, please check your plan and billing details.)",
    });
    return true;
  });
  assert.deepEqual(waits, [1000]);
});

test("a 400 from the fake, like the API's, for a call left without its response", async (t) => {
  const server = await fake(t);
  const { provider } = providerOn(server);
  const messages: Message[] = [user("hi"), { role: "assistant", content: [{ type: "tool_call", id: "rhema-call-x", name: "grep", input: {} }] }, user("and?")];
  await assert.rejects(collect(provider.stream(request(messages), new AbortController().signal)), (err: unknown) =>
    err instanceof ProviderError && !err.retryable && /^gemini: 400 INVALID_ARGUMENT: Please ensure that the number of function response parts/.test(err.message));
});

test("aborting mid-stream ends the request promptly", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "a long answer that never finishes", hangAfterFrames: 1 });
  const { provider } = providerOn(server);
  const controller = new AbortController();
  const started = Date.now();
  await assert.rejects(
    collect(provider.stream(request([user("hi")]), controller.signal), (e) => e.type === "text" && controller.abort()),
    (err: unknown) => err instanceof ProviderError && err.message === "gemini: request aborted" && !err.retryable,
  );
  assert.ok(Date.now() - started < 2000);
});

test("a malformed frame and a malformed function call are retryable provider_stream errors", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "abc", rawFrame: "{not json" }, { kind: "stream", finishReason: "MALFORMED_FUNCTION_CALL" });
  const { provider } = providerOn(server, { retry: { maxAttempts: 1 } });
  for (const pattern of [/^gemini: the stream sent malformed data|^gemini: the stream failed/, /^gemini: the model's function call was malformed/]) {
    await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) =>
      err instanceof ProviderError && err.retryable && err.code === "provider_stream" && pattern.test(err.message));
  }
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

test("the registry makes it from a task's spec with GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "from the registry" });
  const provider = createProvider({ provider: "gemini", name: "gemini-test" }, { GEMINI_API_KEY: "AIza-env", GOOGLE_GEMINI_BASE_URL: server.baseUrl }, { retry: { maxAttempts: 1 } });
  assert.equal(provider.id, "gemini:gemini-test");
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "from the registry");
  assert.equal(server.requests[0]!.headers["x-goog-api-key"], "AIza-env");
});

test("a turn through CodingAgent sends its signature back with the call; resumed from disk, its requests are byte-stable", async (t) => {
  const server = await fake(t);
  server.requireSignatures = true;
  const workspace = await tempDir(t);
  server.reply(
    { kind: "stream", signature: "sig-step-1", calls: [{ name: "append_line", args: { tag: "one" } }] },
    { kind: "stream", text: "Done.", trailingSignature: "sig-step-2", usage: { promptTokenCount: 300, candidatesTokenCount: 4, cachedContentTokenCount: 256 } },
    { kind: "stream", text: "Second turn." },
  );
  const { provider } = providerOn(server);
  const config = { workspace, builtinTools: false, tools: [appendLineTool()] };
  const agent = new CodingAgent(provider, config);
  const output = await agent.turn("Append the tag one.", nullSink, allowAll);
  assert.equal(output.steps, 2);
  assert.equal(readFileSync(join(workspace, LINES_FILE), "utf8"), "one\n");
  const step2 = server.bodies[1].contents;
  assert.deepEqual(step2.slice(-2), [
    { role: "model", parts: [{ functionCall: { name: "append_line", args: { tag: "one" } }, thoughtSignature: "sig-step-1" }] },
    { role: "user", parts: [{ functionResponse: { name: "append_line", response: { output: "appended one" } } }] },
  ]);

  const path = join(workspace, "..", "gemini-session.json");
  await agent.saveSessionTo(path);
  t.after(() => import("node:fs/promises").then((fs) => fs.rm(path, { force: true })));
  const resumed = CodingAgent.fromSession(providerOn(server).provider, config, await CodingAgent.loadSessionFrom(path));
  await resumed.turn("Once more.", nullSink, allowAll);
  const turn2 = server.bodies[2];
  // The resumed request starts with every content the last one sent, byte for byte, then the answer's.
  assert.equal(JSON.stringify(turn2.contents.slice(0, step2.length)), JSON.stringify(step2));
  assert.deepEqual(turn2.contents[step2.length], { role: "model", parts: [{ text: "Done." }, { text: "", thoughtSignature: "sig-step-2" }] });
  for (const key of ["systemInstruction", "tools"]) assert.equal(JSON.stringify(turn2[key]), JSON.stringify(server.bodies[0][key]), key);
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
