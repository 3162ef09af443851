/**
 * The openai provider against a fake Chat Completions API over real HTTP, through the official
 * SDK: request mapping, stream mapping, finish reasons, retry, errors, abort, images, and a
 * two-step turn through CodingAgent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CodingAgent } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { ProviderError, ProviderRefusedError } from "../../src/core/errors.js";
import { nullSink, type EventSink } from "../../src/core/events.js";
import type { Message } from "../../src/core/messages.js";
import type { StreamEvent, Usage } from "../../src/core/provider.js";
import { OpenAIProvider, toOpenAIRequest, type OpenAIProviderOptions } from "../../src/providers/openai.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";
import { tempDir } from "../support/temp-dir.js";
import { LINES_FILE, appendLineTool } from "../support/test-tools.js";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const readFile = { name: "read_file", description: "Reads a file.", inputSchema: { type: "object", properties: { path: { type: "string" } } } };

async function fake(t: { after(fn: () => unknown): void }): Promise<FakeOpenAIServer> {
  const server = await FakeOpenAIServer.start();
  t.after(() => server.close());
  return server;
}

/** A provider on `server` whose waits are recorded instead of slept. */
function providerOn(server: FakeOpenAIServer, options: Partial<OpenAIProviderOptions> = {}) {
  const waits: number[] = [];
  let ids = 0;
  const provider = new OpenAIProvider({
    model: "gpt-test",
    apiKey: "sk-test",
    baseUrl: server.baseUrl,
    newId: () => `call_gen_${++ids}`,
    ...options,
    retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...options.retry },
  });
  return { provider, waits };
}

test("maps system, tools, assistant tool calls and tool results to Chat Completions", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "ok" });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    user("Read a.txt and b.txt"),
    {
      role: "assistant",
      content: [
        { type: "text", text: "Reading both." },
        { type: "tool_call", id: "call_1", name: "read_file", input: { path: "a.txt" } },
        { type: "tool_call", id: "call_2", name: "read_file", input: { path: "b.txt" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", callId: "call_1", content: "alpha" },
        { type: "tool_result", callId: "call_2", content: "no such file", isError: true },
        { type: "text", text: "Be brief." },
      ],
    },
    { role: "assistant", content: [] },
    user("Go on"),
  ];
  await collect(provider.stream(request(messages, { tools: [readFile], cacheBreakpoints: [2], maxOutputTokens: 500 }), new AbortController().signal));

  assert.deepEqual(server.bodies[0], {
    model: "gpt-test",
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 500, // a server by base URL gets the field every compatible server knows
    tools: [{ type: "function", function: { name: "read_file", description: "Reads a file.", parameters: readFile.inputSchema } }],
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Read a.txt and b.txt" },
      {
        role: "assistant",
        content: "Reading both.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
          { id: "call_2", type: "function", function: { name: "read_file", arguments: '{"path":"b.txt"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "alpha" },
      { role: "tool", tool_call_id: "call_2", content: "Error: no such file" },
      { role: "user", content: "Be brief." },
      { role: "assistant", content: "(no content)" },
      { role: "user", content: "Go on" },
    ],
  });
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests[0]!.headers.authorization, "Bearer sk-test");
});

test("uses max_completion_tokens when talking to OpenAI itself, and sends no cap unless asked", () => {
  const req = request([user("hi")], { maxOutputTokens: 64 });
  assert.equal(toOpenAIRequest(req, "m", { maxTokens: 64, maxTokensField: "max_completion_tokens" }).max_completion_tokens, 64);
  const uncapped = toOpenAIRequest(request([user("hi")]), "m", { maxTokens: undefined, maxTokensField: "max_tokens" });
  assert.equal("max_tokens" in uncapped || "max_completion_tokens" in uncapped, false);
  assert.equal(new OpenAIProvider({ model: "gpt-x", apiKey: "k" }).id, "openai:gpt-x");
});

test("streams text, then tool calls accumulated by index, then usage less cached tokens, from bytes cut mid-frame", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream",
    splitBytes: 9,
    text: "Çа va? ☕ looking",
    toolCalls: [
      { id: "call_a", name: "read_file", arguments: { path: "src/é.ts" } },
      { id: "call_b", name: "grep", rawArguments: "" },
    ],
    usage: { prompt_tokens: 1200, completion_tokens: 30, cached_tokens: 1000 },
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "Çа va? ☕ looking");
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "tool_call", id: "call_a", name: "read_file", input: { path: "src/é.ts" } },
    { type: "tool_call", id: "call_b", name: "grep", input: {} },
    { type: "usage", usage: { inputTokens: 200, cacheReadTokens: 1000, cacheWriteTokens: 0, outputTokens: 30 } },
    { type: "stop", reason: "tool_use" },
  ]);
});

test("reports a reasoning model's reasoning_tokens as reasoningTokens, a part of outputTokens, summed over a turn", async (t) => {
  const server = await fake(t);
  const workspace = await tempDir(t);
  server.reply(
    { kind: "stream", toolCalls: [{ id: "call_r", name: "append_line", arguments: { tag: "one" } }], usage: { prompt_tokens: 100, completion_tokens: 700, reasoning_tokens: 640 } },
    { kind: "stream", text: "Done.", usage: { prompt_tokens: 150, completion_tokens: 90, reasoning_tokens: 80, cached_tokens: 100 } },
    { kind: "stream", text: "plain", usage: { prompt_tokens: 10, completion_tokens: 2 } },
  );
  const { provider } = providerOn(server);
  const usages: Usage[] = [];
  const sink: EventSink = { emit: (e) => void (e.type === "usage" && usages.push(e.usage)) };
  const agent = new CodingAgent(provider, { workspace, builtinTools: false, tools: [appendLineTool()] });
  const output = await agent.turn("Append the tag one.", sink, allowAll);

  assert.deepEqual(usages, [
    { inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 700, reasoningTokens: 640 },
    { inputTokens: 50, cacheReadTokens: 100, cacheWriteTokens: 0, outputTokens: 90, reasoningTokens: 80 },
  ]);
  assert.deepEqual(output.usage, { inputTokens: 150, cacheReadTokens: 100, cacheWriteTokens: 0, outputTokens: 790, reasoningTokens: 720 });
  // reasoning_tokens: 0 (what a model that does not reason sends) leaves the field out.
  const plain = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.deepEqual(plain.find((e) => e.type === "usage"), { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 2 } });
  assert.deepEqual(server.violations, []);
});

test("maps finish reasons; a stop that carried tool calls is tool_use; a call without an id gets one", async (t) => {
  const server = await fake(t);
  const plain = ["stop", "length", "content_filter", "tool_calls", "weird"];
  server.reply(
    ...plain.map((finishReason) => ({ kind: "stream" as const, text: "x", finishReason, nullChoicesInUsage: true })),
    { kind: "stream", toolCalls: [{ id: "", name: "grep", arguments: { pattern: "x" } }], finishReason: "stop", usage: null },
  );
  const { provider } = providerOn(server);
  const stops: string[] = [];
  for (const _ of plain) {
    const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
    stops.push((events.at(-1) as { reason: string }).reason);
  }
  assert.deepEqual(stops, ["end_turn", "max_tokens", "refusal", "tool_use", "other"]);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.deepEqual(events, [
    { type: "tool_call", id: "call_gen_1", name: "grep", input: { pattern: "x" } },
    { type: "stop", reason: "tool_use" },
  ]);
});

test("retries a 429 with retry-after-ms and a 503, then succeeds", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "http_error", status: 429, type: "requests", code: "rate_limit_exceeded", message: "Rate limit reached", headers: { "retry-after-ms": "250" } },
    { kind: "http_error", status: 503, type: "server_error", message: "The server is overloaded" },
    { kind: "stream", text: "finally" },
  );
  const { provider, waits } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "finally");
  assert.equal(server.requests.length, 3);
  assert.deepEqual(waits, [250, 1000]);
});

test("does not retry a 429 insufficient_quota: a refusal of the run for its quota", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "http_error", status: 429, type: "insufficient_quota", code: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details." });
  const { provider, waits } = providerOn(server);
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual(err.refusal, {
      provider: "openai", reason: "quota", status: 429, kind: "insufficient_quota", detail: "You exceeded your current quota, please check your plan and billing details.",
    });
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("does not retry a 401: a refusal of the key, naming the provider, the status and the error code", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "http_error", status: 401, type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided: sk-test." });
  const { provider, waits } = providerOn(server);
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual({ message: err.message, status: err.status, retryable: err.retryable, reason: err.refusal.reason }, {
      message: "openai: refused the key (401 invalid_api_key: Incorrect API key provided: sk-test.)",
      status: 401,
      retryable: false,
      reason: "auth",
    });
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("a refused connection is retried, then surfaced as a retryable provider error", async () => {
  const closed = await FakeOpenAIServer.start();
  const baseUrl = closed.baseUrl;
  await closed.close();
  const waits: number[] = [];
  const provider = new OpenAIProvider({ model: "m", apiKey: "k", baseUrl, retry: { maxAttempts: 2, random: () => 0, sleep: async (ms) => void waits.push(ms) } });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.retryable, true);
    assert.equal(err.status, undefined);
    assert.match(err.message, /^openai: connection error: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    return true;
  });
  assert.deepEqual(waits, [500]);
});

test("an error inside the stream after text has streamed is surfaced, not retried", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "partial answer", errorAfterFrames: { frames: 2, type: "server_error", message: "The model crashed" } });
  const { provider } = providerOn(server);
  const seen: StreamEvent[] = [];
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal), (e) => seen.push(e)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.message, "openai: server_error: The model crashed");
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(seen.map((e) => e.type), ["text"]);
});

test("a 400 is not retried: the fake, like the API, rejects a tool call left without its tool message", async (t) => {
  const server = await fake(t);
  const { provider, waits } = providerOn(server);
  const messages: Message[] = [user("hi"), { role: "assistant", content: [{ type: "tool_call", id: "call_open", name: "grep", input: {} }] }, user("and?")];
  await assert.rejects(collect(provider.stream(request(messages), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.retryable, false);
    assert.match(err.message, /^openai: 400 invalid_request_error: An assistant message with 'tool_calls' must be followed by tool messages .*call_open$/);
    return true;
  });
  assert.equal(server.violations.length, 1);
  assert.deepEqual(waits, []);
});

test("aborting mid-stream ends the request promptly", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "a long answer that never finishes", hangAfterFrames: 2 });
  const { provider } = providerOn(server);
  const controller = new AbortController();
  const started = Date.now();
  await assert.rejects(
    collect(provider.stream(request([user("hi")]), controller.signal), (e) => e.type === "text" && controller.abort()),
    (err: unknown) => err instanceof ProviderError && err.message === "openai: request aborted" && !err.retryable,
  );
  assert.ok(Date.now() - started < 2000);
  await waitFor(() => server.dropped === 1);
});

test("malformed tool-call arguments are a provider_stream error", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", toolCalls: [{ id: "call_x", name: "read_file", rawArguments: '{"path": ' }] });
  const { provider } = providerOn(server, { retry: { maxAttempts: 1 } });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.deepEqual([err.code, err.retryable], ["provider_stream", true]);
    assert.match(err.message, /^openai: the model sent malformed JSON arguments for tool "read_file"/);
    return true;
  });
});

test("sends user images as data URLs, and a tool's image as a note plus a following user message", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: "a red dot" });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", mediaType: "image/png", data: PNG }] },
    { role: "assistant", content: [{ type: "tool_call", id: "call_s", name: "screenshot", input: {} }] },
    { role: "user", content: [{ type: "tool_result", callId: "call_s", content: [{ type: "text", text: "shot:" }, { type: "image", mediaType: "image/png", data: PNG }] }] },
  ];
  await collect(provider.stream(request(messages), new AbortController().signal));
  const image = { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } };
  assert.deepEqual(server.bodies[0].messages.slice(1), [
    { role: "user", content: [{ type: "text", text: "What is this?" }, image] },
    { role: "assistant", content: null, tool_calls: [{ id: "call_s", type: "function", function: { name: "screenshot", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "call_s", content: "shot:\n[image/png image: attached in the next user message]" },
    { role: "user", content: [{ type: "text", text: "Images from tool call call_s:" }, image] },
  ]);
  assert.deepEqual(server.violations, []);
});

test("runs a two-step turn through CodingAgent: a tool call, its result, then the answer", async (t) => {
  const server = await fake(t);
  const workspace = await tempDir(t);
  server.reply(
    { kind: "stream", text: "Appending.", toolCalls: [{ id: "call_e2e", name: "append_line", arguments: { tag: "one" } }] },
    { kind: "stream", text: "Done.", usage: { prompt_tokens: 300, completion_tokens: 4, cached_tokens: 256 } },
  );
  const { provider } = providerOn(server);
  const agent = new CodingAgent(provider, { workspace, builtinTools: false, tools: [appendLineTool()] });
  const output = await agent.turn("Append the tag one.", nullSink, allowAll);

  assert.deepEqual({ message: output.message, stopReason: output.stopReason, steps: output.steps }, {
    message: { role: "assistant", content: [{ type: "text", text: "Done." }] },
    stopReason: "end_turn",
    steps: 2,
  });
  assert.equal(readFileSync(join(workspace, LINES_FILE), "utf8"), "one\n");
  assert.deepEqual(server.violations, []);
  assert.deepEqual(server.bodies[1].messages.at(-1), { role: "tool", tool_call_id: "call_e2e", content: "appended one" });
  assert.deepEqual(output.usage, { inputTokens: 20 + 44, cacheReadTokens: 256, cacheWriteTokens: 0, outputTokens: 10 });
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
