/**
 * The openai-responses provider against a fake Responses API over real HTTP, through the official
 * SDK: request mapping (store: false, the cache key, reasoning items carried back), stream mapping
 * from bytes cut mid-frame, stop reasons, usage, retry, errors, abort, images, the registry, and
 * turns through CodingAgent — one resumed from disk that carries its reasoning and sends its
 * earlier requests' items again byte for byte.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CodingAgent } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { ProviderError, ProviderRefusedError } from "../../src/core/errors.js";
import { nullSink } from "../../src/core/events.js";
import type { Message } from "../../src/core/messages.js";
import type { StreamEvent } from "../../src/core/provider.js";
import { OpenAIResponsesProvider, promptCacheKey, type OpenAIResponsesProviderOptions } from "../../src/providers/openai-responses.js";
import { createProvider } from "../../src/providers/provider-factory.js";
import { FakeOpenAIResponsesServer } from "../support/fake-openai-responses-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";
import { tempDir } from "../support/temp-dir.js";
import { LINES_FILE, appendLineTool } from "../support/test-tools.js";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const readFile = { name: "read_file", description: "Reads a file.", inputSchema: { type: "object", properties: { path: { type: "string" } } } };

async function fake(t: { after(fn: () => unknown): void }): Promise<FakeOpenAIResponsesServer> {
  const server = await FakeOpenAIResponsesServer.start();
  t.after(() => server.close());
  return server;
}

/** A provider on `server` whose waits are recorded instead of slept. */
function providerOn(server: FakeOpenAIResponsesServer, options: Partial<OpenAIResponsesProviderOptions> = {}) {
  const waits: number[] = [];
  const provider = new OpenAIResponsesProvider({
    model: "gpt-test", apiKey: "sk-test", baseUrl: server.baseUrl, ...options,
    retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...options.retry },
  });
  return { provider, waits };
}

test("maps instructions, tools, reasoning, calls and results to Responses input items, stored nowhere", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "ok" });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    user("Read a.txt"),
    { role: "assistant", content: [
      { type: "reasoning", provider: "openai-responses", id: "rs_1", data: "enc-1", summary: "Look at the file." },
      { type: "reasoning", provider: "anthropic", id: "th_1", data: "sig", summary: "not this API's" },
      { type: "text", text: "Reading." },
      { type: "tool_call", id: "call_1", name: "read_file", input: { path: "a.txt" } },
    ] },
    { role: "user", content: [{ type: "tool_result", callId: "call_1", content: "hello" }, { type: "text", text: "and now?" }] },
    { role: "assistant", content: [{ type: "tool_call", id: "call_2", name: "read_file", input: { path: "b.txt" } }] },
    { role: "user", content: [{ type: "tool_result", callId: "call_2", content: "no such file", isError: true }] },
  ];
  await collect(provider.stream(request(messages, { tools: [readFile], maxOutputTokens: 500 }), new AbortController().signal));
  const body = server.bodies[0];
  assert.deepEqual(server.violations, []);
  assert.deepEqual({ ...body, prompt_cache_key: undefined }, {
    model: "gpt-test",
    stream: true,
    store: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: undefined,
    instructions: "You are terse.",
    max_output_tokens: 500,
    tools: [{ type: "function", name: "read_file", description: "Reads a file.", parameters: readFile.inputSchema, strict: false }],
    input: [
      { role: "user", content: "Read a.txt" },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Look at the file." }], encrypted_content: "enc-1" },
      { role: "assistant", content: "Reading." },
      { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' },
      { type: "function_call_output", call_id: "call_1", output: "hello" },
      { role: "user", content: "and now?" },
      { type: "function_call", call_id: "call_2", name: "read_file", arguments: '{"path":"b.txt"}' },
      { type: "function_call_output", call_id: "call_2", output: "Error: no such file" },
    ],
  });
  assert.match(body.prompt_cache_key, /^rhema-[0-9a-f]{32}$/);
});

test("the cache key is the model, instructions and tools: the same across a conversation, another for another prefix", () => {
  const base = request([user("one")], { tools: [readFile] });
  const later = request([user("one"), { role: "assistant", content: [{ type: "text", text: "two" }] }, user("three")], { tools: [readFile] });
  assert.equal(promptCacheKey("m", base), promptCacheKey("m", later));
  assert.notEqual(promptCacheKey("m", base), promptCacheKey("m", { ...base, tools: [] }));
  assert.notEqual(promptCacheKey("m", base), promptCacheKey("m", { ...base, system: "other" }));
  assert.notEqual(promptCacheKey("m", base), promptCacheKey("n", base));
});

test("streams text, then reasoning and calls as their items finish, then usage less cached tokens, from bytes cut mid-frame", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream", splitBytes: 7,
    reasoning: [{ id: "rs_a", encrypted: "gAAAAB-opaque", summary: ["First part.", "Second part — ünïcode."] }],
    text: "Let me look.",
    calls: [{ callId: "call_a", name: "read_file", arguments: { path: "x.ts" } }, { callId: "call_b", name: "read_file", arguments: {} }],
    usage: { input_tokens: 1200, output_tokens: 90, cached_tokens: 1024, reasoning_tokens: 64 },
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("go")], { tools: [readFile] }), new AbortController().signal));
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "reasoning", provider: "openai-responses", id: "rs_a", data: "gAAAAB-opaque", summary: "First part.\n\nSecond part — ünïcode." },
    { type: "tool_call", id: "call_a", name: "read_file", input: { path: "x.ts" } },
    { type: "tool_call", id: "call_b", name: "read_file", input: {} },
    { type: "usage", usage: { inputTokens: 176, cacheReadTokens: 1024, cacheWriteTokens: 0, outputTokens: 90, reasoningTokens: 64 } },
    { type: "stop", reason: "tool_use" },
  ]);
  assert.equal(textOf(events), "Let me look.");
});

test("stop reasons: completed is end_turn, incomplete for length is max_tokens, a content filter or a refusal is refusal", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", text: "done" },
    { kind: "stream", text: "cut", incomplete: "max_output_tokens" },
    { kind: "stream", incomplete: "content_filter" },
    { kind: "stream", refusal: "I can't help with that." },
  );
  const { provider } = providerOn(server);
  const stops: string[] = [];
  for (let i = 0; i < 4; i++) {
    const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
    stops.push((events.at(-1) as { reason: string }).reason);
    if (i === 3) assert.equal(textOf(events), "I can't help with that.");
  }
  assert.deepEqual(stops, ["end_turn", "max_tokens", "refusal", "refusal"]);
});

test("a failed response and a stream cut before the response ends are retried; a 429 waits its retry-after-ms", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", failed: { code: "server_error", message: "The model failed" } },
    { kind: "stream", text: "never finished", endAfterFrames: 3 },
    { kind: "http_error", status: 429, type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached", headers: { "retry-after-ms": "250" } },
    { kind: "stream", text: "finally" },
  );
  const { provider, waits } = providerOn(server, { retry: { maxAttempts: 4 } });
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "finally");
  assert.equal(server.requests.length, 4);
  assert.deepEqual(waits.length, 3);
  assert.equal(waits[2], 250);
});

test("does not retry a 401: a refusal of the key, naming the provider, the status and the error code; an insufficient_quota 429 refuses for quota", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "http_error", status: 401, type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided: sk-test." },
    { kind: "http_error", status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota." },
  );
  const { provider, waits } = providerOn(server);
  for (const expected of [
    { message: "openai-responses: refused the key (401 invalid_api_key: Incorrect API key provided: sk-test.)", status: 401, reason: "auth" },
    { reason: "quota", status: 429 },
  ]) {
    await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
      assert.ok(err instanceof ProviderRefusedError);
      const got = { message: err.message, status: err.status, reason: err.refusal.reason, provider: err.refusal.provider };
      assert.deepEqual(expected.message ? got : { ...got, message: undefined }, { message: undefined, ...expected, provider: "openai-responses" });
      return true;
    });
  }
  assert.equal(server.requests.length, 2);
  assert.deepEqual(waits, []);
});

test("an error event after text has streamed is surfaced, not retried", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "partial answer", errorAfterFrames: { frames: 6, code: "server_error", message: "The model crashed" } });
  const { provider } = providerOn(server);
  const seen: StreamEvent[] = [];
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal), (e) => seen.push(e)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.match(err.message, /^openai-responses: .*The model crashed/);
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.ok(seen.length > 0 && seen.every((e) => e.type === "text"));
});

test("a 400 is not retried: the fake, like the API, rejects a call left without its output", async (t) => {
  const server = await fake(t);
  const { provider, waits } = providerOn(server);
  const messages: Message[] = [user("hi"), { role: "assistant", content: [{ type: "tool_call", id: "call_open", name: "grep", input: {} }] }, user("and?")];
  await assert.rejects(collect(provider.stream(request(messages), new AbortController().signal)), (err: unknown) =>
    err instanceof ProviderError && !err.retryable && /^openai-responses: 400 .*No tool output found for function call call_open/.test(err.message));
  assert.deepEqual(waits, []);
});

test("aborting mid-stream ends the request promptly", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "a long answer that never finishes", hangAfterFrames: 6 });
  const { provider } = providerOn(server);
  const controller = new AbortController();
  const started = Date.now();
  await assert.rejects(
    collect(provider.stream(request([user("hi")]), controller.signal), (e) => e.type === "text" && controller.abort()),
    (err: unknown) => err instanceof ProviderError && err.message === "openai-responses: request aborted" && !err.retryable,
  );
  assert.ok(Date.now() - started < 2000);
});

test("malformed call arguments are a provider_stream error", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", calls: [{ callId: "call_x", name: "read_file", rawArguments: '{"path": ' }] });
  const { provider } = providerOn(server, { retry: { maxAttempts: 1 } });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) =>
    err instanceof ProviderError && err.code === "provider_stream" && /^openai-responses: the model sent malformed JSON arguments for tool "read_file"/.test(err.message));
});

test("sends user images as input_image, and a tool's image inside its function_call_output", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "a red dot" });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", mediaType: "image/png", data: PNG }] },
    { role: "assistant", content: [{ type: "tool_call", id: "call_s", name: "screenshot", input: {} }] },
    { role: "user", content: [{ type: "tool_result", callId: "call_s", content: [{ type: "text", text: "shot:" }, { type: "image", mediaType: "image/png", data: PNG }] }] },
  ];
  await collect(provider.stream(request(messages), new AbortController().signal));
  const image = { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" };
  assert.deepEqual(server.bodies[0].input, [
    { role: "user", content: [{ type: "input_text", text: "What is this?" }, image] },
    { type: "function_call", call_id: "call_s", name: "screenshot", arguments: "{}" },
    { type: "function_call_output", call_id: "call_s", output: [{ type: "input_text", text: "shot:" }, image] },
  ]);
  assert.deepEqual(server.violations, []);
});

test("the registry makes it from a task's spec with OPENAI_BASE_URL and OPENAI_API_KEY", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "from the registry" });
  const provider = createProvider({ provider: "openai-responses", name: "gpt-test" }, { OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: server.baseUrl }, { retry: { maxAttempts: 1 } });
  assert.equal(provider.id, "openai-responses:gpt-test");
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "from the registry");
  assert.equal(server.requests[0]!.headers.authorization, "Bearer sk-env");
});

test("a turn through CodingAgent carries its reasoning to the next step; resumed from disk, its requests' items are byte-stable", async (t) => {
  const server = await fake(t);
  const workspace = await tempDir(t);
  server.reply(
    { kind: "stream", reasoning: [{ id: "rs_s1", encrypted: "enc-step-1", summary: ["Append first."] }], calls: [{ callId: "call_one", name: "append_line", arguments: { tag: "one" } }] },
    { kind: "stream", reasoning: [{ id: "rs_s2", encrypted: "enc-step-2" }], text: "Done.", usage: { input_tokens: 300, output_tokens: 4, cached_tokens: 256 } },
    { kind: "stream", text: "Second turn." },
  );
  const { provider } = providerOn(server);
  const config = { workspace, builtinTools: false, tools: [appendLineTool()] };
  const agent = new CodingAgent(provider, config);
  const output = await agent.turn("Append the tag one.", nullSink, allowAll);
  assert.equal(output.steps, 2);
  assert.equal(readFileSync(join(workspace, LINES_FILE), "utf8"), "one\n");
  const step2 = server.bodies[1].input;
  assert.deepEqual(step2.slice(-3), [
    { type: "reasoning", id: "rs_s1", summary: [{ type: "summary_text", text: "Append first." }], encrypted_content: "enc-step-1" },
    { type: "function_call", call_id: "call_one", name: "append_line", arguments: '{"tag":"one"}' },
    { type: "function_call_output", call_id: "call_one", output: "appended one" },
  ]);

  const path = join(workspace, "..", "responses-session.json");
  await agent.saveSessionTo(path);
  t.after(() => import("node:fs/promises").then((fs) => fs.rm(path, { force: true })));
  const resumed = CodingAgent.fromSession(providerOn(server).provider, config, await CodingAgent.loadSessionFrom(path));
  await resumed.turn("Once more.", nullSink, allowAll);
  const turn2 = server.bodies[2];
  // The resumed request starts with every item the last one sent, byte for byte, then the answer's.
  assert.equal(JSON.stringify(turn2.input.slice(0, step2.length)), JSON.stringify(step2));
  assert.deepEqual(turn2.input.slice(step2.length, step2.length + 2), [
    { type: "reasoning", id: "rs_s2", summary: [], encrypted_content: "enc-step-2" },
    { role: "assistant", content: "Done." },
  ]);
  for (const key of ["instructions", "tools", "prompt_cache_key"]) assert.equal(JSON.stringify(turn2[key]), JSON.stringify(server.bodies[0][key]), key);
  assert.deepEqual(server.violations, []);
});
