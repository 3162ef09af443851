/**
 * The anthropic provider against a fake Messages API over real HTTP, through the official SDK:
 * request mapping (system, tools, messages, cache marks), stream mapping, stop reasons, retry,
 * errors, abort, images, and a two-step turn through CodingAgent.
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
import { AnthropicProvider } from "../../src/providers/anthropic.js";
import type { RetryOptions } from "../../src/providers/provider-retry.js";
import { FakeAnthropicServer, checkAnthropicRequest } from "../support/fake-anthropic-server.js";
import { collect, request, user } from "../support/provider-streams.js";
import { tempDir } from "../support/temp-dir.js";
import { LINES_FILE, appendLineTool } from "../support/test-tools.js";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const tools = [
  { name: "read_file", description: "Reads a file.", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "grep", description: "Searches.", inputSchema: { type: "object", properties: { pattern: { type: "string" } } } },
];

async function fake(t: { after(fn: () => unknown): void }): Promise<FakeAnthropicServer> {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  return server;
}

/** A provider on `server` whose waits are recorded instead of slept. */
function providerOn(server: FakeAnthropicServer, retry: RetryOptions = {}) {
  const waits: number[] = [];
  const provider = new AnthropicProvider({
    model: "claude-test",
    apiKey: "sk-test",
    baseUrl: server.baseUrl,
    retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...retry },
  });
  return { provider, waits };
}

test("maps system, tools and messages to the Messages API, with cache marks at the prefix end (the system block) and the breakpoints", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "ok" }] });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    user("Read a.txt"),
    { role: "assistant", content: [{ type: "text", text: "Reading." }, { type: "tool_call", id: "toolu_1", name: "read_file", input: { path: "a.txt" } }] },
    { role: "user", content: [{ type: "tool_result", callId: "toolu_1", content: "no such file", isError: true }] },
    { role: "assistant", content: [] },
    user("Go on"),
  ];
  await collect(provider.stream(request(messages, { tools, cacheBreakpoints: [2, 4], maxOutputTokens: 1000 }), new AbortController().signal));

  const eph = { type: "ephemeral" };
  assert.deepEqual(server.bodies[0], {
    model: "claude-test",
    max_tokens: 1000,
    stream: true,
    system: [{ type: "text", text: "You are terse.", cache_control: eph }],
    tools: [
      { name: "read_file", description: "Reads a file.", input_schema: tools[0]!.inputSchema },
      { name: "grep", description: "Searches.", input_schema: tools[1]!.inputSchema },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "Read a.txt" }] },
      { role: "assistant", content: [{ type: "text", text: "Reading." }, { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.txt" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "no such file", is_error: true, cache_control: eph }] },
      { role: "assistant", content: [{ type: "text", text: "(no content)" }] },
      { role: "user", content: [{ type: "text", text: "Go on", cache_control: eph }] },
    ],
  });
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests[0]!.headers["anthropic-version"] !== undefined, true);
  assert.match(String(server.requests[0]!.headers["x-api-key"] ?? server.requests[0]!.headers.authorization), /sk-test/);
});

test("marks the system block when there are no tools, and keeps only the last four marks", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "a" }] }, { kind: "stream", blocks: [{ type: "text", text: "b" }] });
  const { provider } = providerOn(server);
  const five = ["m0", "m1", "m2", "m3", "m4"].map((text, i): Message => ({ role: i % 2 ? "assistant" : "user", content: [{ type: "text", text }] }));
  const signal = new AbortController().signal;
  await collect(provider.stream(request([user("hi")], { cacheBreakpoints: [] }), signal));
  await collect(provider.stream(request(five, { cacheBreakpoints: [4, 0, 1, 2, 3, 3, 9] }), signal));

  const [first, second] = server.bodies;
  assert.deepEqual(first.system, [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }]);
  assert.equal(first.max_tokens, 8192);
  assert.equal("tools" in first, false);
  assert.deepEqual(second.system, [{ type: "text", text: "You are terse." }]);
  assert.deepEqual(
    second.messages.map((m: any) => "cache_control" in m.content[0]),
    [false, true, true, true, true],
  );
  assert.deepEqual(server.violations, []);
});

test("marks the last tool when there is no system prompt", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "a" }] });
  const { provider } = providerOn(server);
  await collect(provider.stream(request([user("hi")], { system: null, tools }), new AbortController().signal));
  assert.equal("system" in server.bodies[0], false);
  assert.deepEqual(server.bodies[0].tools.map((t: any) => t.cache_control ?? null), [null, { type: "ephemeral" }]);
  assert.deepEqual(server.violations, []);
});

test("cacheOneHourThrough sends ttl 1h on the prefix and the breakpoints up to it, 5 minutes after", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "a" }] }, { kind: "stream", blocks: [{ type: "text", text: "b" }] });
  const { provider } = providerOn(server);
  const four = ["m0", "m1", "m2", "m3"].map((text, i): Message => ({ role: i % 2 ? "assistant" : "user", content: [{ type: "text", text }] }));
  const signal = new AbortController().signal;
  await collect(provider.stream(request(four, { tools, cacheBreakpoints: [1, 3], cacheOneHourThrough: 1 }), signal));
  await collect(provider.stream(request(four, { tools, cacheBreakpoints: [1, 3], cacheOneHourThrough: -1 }), signal));

  const hour = { type: "ephemeral", ttl: "1h" };
  const five = { type: "ephemeral" };
  const marks = (body: any) => [
    ...body.tools.map((b: any) => b.cache_control ?? null),
    ...body.system.map((b: any) => b.cache_control ?? null),
    ...body.messages.map((m: any) => m.content[0].cache_control ?? null),
  ];
  assert.deepEqual(marks(server.bodies[0]), [null, null, hour, null, hour, null, five]);
  assert.deepEqual(marks(server.bodies[1]), [null, null, hour, null, five, null, five]);
  assert.deepEqual(server.violations, []);
});

test("the fake, like the API, refuses a 1-hour mark after a 5-minute one", () => {
  const body = {
    model: "m", max_tokens: 1,
    system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }],
    messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
  };
  assert.match(String(checkAnthropicRequest(body)), /ttl='1h' must not come after a cache_control with ttl='5m'/);
  body.system[0]!.cache_control = { type: "ephemeral", ttl: "1h" } as any;
  assert.equal(checkAnthropicRequest(body), null);
});

test("maps the 1-hour share of cache writes to cacheWrite1hTokens", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream",
    blocks: [{ type: "text", text: "ok" }],
    usage: { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 5_000, cache_creation: { ephemeral_1h_input_tokens: 4_000, ephemeral_5m_input_tokens: 1_000 }, output_tokens: 3 },
  }, {
    kind: "stream",
    blocks: [{ type: "text", text: "ok" }],
    usage: { input_tokens: 10, cache_read_input_tokens: 5_000, cache_creation_input_tokens: 200, cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 200 }, output_tokens: 3 },
  });
  const { provider } = providerOn(server);
  const usageOf = async () => (await collect(provider.stream(request([user("hi")]), new AbortController().signal))).find((e) => e.type === "usage");
  assert.deepEqual(await usageOf(), { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 5_000, cacheWrite1hTokens: 4_000, outputTokens: 3 } });
  assert.deepEqual(await usageOf(), { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 5_000, cacheWriteTokens: 200, outputTokens: 3 } });
});

test("maps output_tokens_details.thinking_tokens to reasoningTokens, a part of outputTokens; thinking text is not streamed", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream",
    blocks: [{ type: "thinking", thinking: "Let me weigh the two fixes first." }, { type: "text", text: "Fixed." }],
    usage: { input_tokens: 10, output_tokens: 500, thinking_tokens: 420 },
  }, {
    kind: "stream",
    blocks: [{ type: "text", text: "ok" }],
    usage: { input_tokens: 10, output_tokens: 3 },
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join(""), "Fixed.");
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 500, reasoningTokens: 420 } },
    { type: "stop", reason: "end_turn" },
  ]);
  // No output_tokens_details (a model that did not think, an older API): the field is left out.
  const plain = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.deepEqual(plain.find((e) => e.type === "usage"), { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 3 } });
  assert.deepEqual(server.violations, []);
});

test("streams text deltas, tool calls and usage from SSE bytes cut mid-frame and mid-character", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream",
    splitBytes: 7,
    blocks: [
      { type: "text", text: "Café ☕ — checking the file now." },
      { type: "tool_use", id: "toolu_a", name: "read_file", input: { path: "src/é.ts" } },
      { type: "tool_use", id: "toolu_b", name: "grep", rawJson: "" },
    ],
    usage: { input_tokens: 40, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 33 },
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));

  const text = events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join("");
  assert.equal(text, "Café ☕ — checking the file now.");
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "tool_call", id: "toolu_a", name: "read_file", input: { path: "src/é.ts" } },
    { type: "tool_call", id: "toolu_b", name: "grep", input: {} },
    { type: "usage", usage: { inputTokens: 40, cacheReadTokens: 1000, cacheWriteTokens: 200, outputTokens: 33 } },
    { type: "stop", reason: "tool_use" },
  ]);
});

test("maps each stop reason, and an unknown one to other", async (t) => {
  const server = await fake(t);
  const wire = ["end_turn", "max_tokens", "stop_sequence", "refusal", "pause_turn", "model_context_window_exceeded"];
  server.reply(...wire.map((stopReason) => ({ kind: "stream" as const, blocks: [{ type: "text" as const, text: "x" }], stopReason })));
  const { provider } = providerOn(server);
  const reasons: string[] = [];
  for (const _ of wire) {
    const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
    const stop = events.at(-1);
    assert.equal(stop?.type, "stop");
    reasons.push((stop as { reason: string }).reason);
  }
  assert.deepEqual(reasons, ["end_turn", "max_tokens", "stop_sequence", "refusal", "other", "other"]);
});

test("retries a 529 and a 429 with retry-after, then succeeds", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "http_error", status: 529, type: "overloaded_error", message: "Overloaded" },
    { kind: "http_error", status: 429, type: "rate_limit_error", message: "slow down", headers: { "retry-after": "2" } },
    { kind: "stream", blocks: [{ type: "text", text: "finally" }] },
  );
  const { provider, waits } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(server.requests.length, 3);
  assert.deepEqual(waits, [500, 2000]); // backoff for the 529; the server's word for the 429
  assert.equal(events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join(""), "finally");
});

test("gives up after maxAttempts and surfaces the last failure", async (t) => {
  const server = await fake(t);
  server.reply(...[1, 2, 3].map(() => ({ kind: "http_error" as const, status: 500, type: "api_error", message: "Internal server error" })));
  const { provider, waits } = providerOn(server, { maxAttempts: 3 });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.deepEqual({ message: err.message, status: err.status, retryable: err.retryable }, {
      message: "anthropic: 500 api_error: Internal server error",
      status: 500,
      retryable: true,
    });
    return true;
  });
  assert.equal(server.requests.length, 3);
  assert.deepEqual(waits, [500, 1000]);
});

test("does not retry a too-low credit balance (a 400 the API sends for it): a refusal of the run for its quota", async (t) => {
  const server = await fake(t);
  const message = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.";
  server.reply({ kind: "http_error", status: 400, type: "invalid_request_error", message });
  const { provider, waits } = providerOn(server);
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual(err.refusal, { provider: "anthropic", reason: "quota", status: 400, kind: "invalid_request_error", detail: message });
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("does not retry a 401: a refusal of the key, naming the provider and the status", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "http_error", status: 401, type: "authentication_error", message: "invalid x-api-key" });
  const { provider, waits } = providerOn(server);
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual({ code: err.code, message: err.message, status: err.status, retryable: err.retryable, refusal: err.refusal }, {
      code: "provider_refused",
      message: "anthropic: refused the key (401 authentication_error: invalid x-api-key)",
      status: 401,
      retryable: false,
      refusal: { provider: "anthropic", reason: "auth", status: 401, kind: "authentication_error", detail: "invalid x-api-key" },
    });
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("a failure whose body is not JSON still says what the server sent", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "http_error", status: 502, type: "", message: "", rawBody: "Bad Gateway\n" });
  const { provider } = providerOn(server, { maxAttempts: 1 });
  await assert.rejects(collect(provider.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.deepEqual([err.message, err.status, err.retryable], ["anthropic: 502: Bad Gateway", 502, true]);
    return true;
  });
});

test("retries an error event that comes before any output, but surfaces one after text has streamed", async (t) => {
  const server = await fake(t);
  const overloaded = { type: "overloaded_error", message: "Overloaded" };
  server.reply(
    { kind: "stream", blocks: [{ type: "text", text: "never seen" }], errorAfterFrames: { frames: 1, ...overloaded } },
    { kind: "stream", blocks: [{ type: "text", text: "second try" }] },
    { kind: "stream", blocks: [{ type: "text", text: "partial answer" }], errorAfterFrames: { frames: 3, ...overloaded } },
  );
  const { provider } = providerOn(server);
  const signal = new AbortController().signal;
  const first = await collect(provider.stream(request([user("hi")]), signal));
  assert.equal(first.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join(""), "second try");
  assert.equal(server.requests.length, 2);

  const seen: StreamEvent[] = [];
  await assert.rejects(collect(provider.stream(request([user("hi")]), signal), (e) => seen.push(e)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.message, "anthropic: overloaded_error: Overloaded");
    return true;
  });
  assert.equal(server.requests.length, 3);
  assert.deepEqual(seen.map((e) => e.type), ["text"]);
});

test("a 400 is not retried: the fake, like the API, rejects a tool_use left without its result", async (t) => {
  const server = await fake(t);
  const { provider, waits } = providerOn(server);
  const messages: Message[] = [user("hi"), { role: "assistant", content: [{ type: "tool_call", id: "toolu_open", name: "grep", input: {} }] }, user("and?")];
  await assert.rejects(collect(provider.stream(request(messages), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.retryable, false);
    assert.match(err.message, /^anthropic: 400 invalid_request_error: messages\.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_open/);
    return true;
  });
  assert.equal(server.violations.length, 1);
  assert.deepEqual(waits, []);
});

test("aborting mid-stream ends the request promptly", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "a long answer that never finishes" }], hangAfterFrames: 3 });
  const { provider } = providerOn(server);
  const controller = new AbortController();
  const started = Date.now();
  await assert.rejects(
    collect(provider.stream(request([user("hi")]), controller.signal), (e) => e.type === "text" && controller.abort()),
    (err: unknown) => err instanceof ProviderError && err.message === "anthropic: request aborted" && !err.retryable,
  );
  assert.ok(Date.now() - started < 2000);
  assert.equal(server.requests.length, 1);
  await waitFor(() => server.dropped === 1);
});

test("a tool call with malformed input JSON is a retryable provider_stream error", async (t) => {
  const server = await fake(t);
  const bad = { kind: "stream" as const, blocks: [{ type: "tool_use" as const, id: "toolu_x", name: "read_file", rawJson: '{"path": "a.txt"' }] };
  server.reply(bad, bad, { kind: "stream", blocks: [{ type: "tool_use", id: "toolu_y", name: "read_file", input: { path: "a.txt" } }] });
  const once = providerOn(server, { maxAttempts: 1 }).provider;
  await assert.rejects(collect(once.stream(request([user("hi")]), new AbortController().signal)), (err: unknown) => {
    assert.ok(err instanceof ProviderError);
    assert.equal(err.code, "provider_stream");
    assert.equal(err.retryable, true);
    assert.match(err.message, /^anthropic: the model sent malformed JSON arguments for tool "read_file"/);
    return true;
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.deepEqual(events[0], { type: "tool_call", id: "toolu_y", name: "read_file", input: { path: "a.txt" } });
  assert.equal(server.requests.length, 3);
});

test("sends image blocks as base64 sources, in user content and in tool results", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "a red dot" }] });
  const { provider } = providerOn(server);
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", mediaType: "image/png", data: PNG }] },
    { role: "assistant", content: [{ type: "tool_call", id: "toolu_s", name: "screenshot", input: {} }] },
    { role: "user", content: [{ type: "tool_result", callId: "toolu_s", content: [{ type: "text", text: "shot:" }, { type: "image", mediaType: "image/png", data: PNG }] }] },
  ];
  const events = await collect(provider.stream(request(messages), new AbortController().signal));
  const image = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } };
  assert.deepEqual(server.bodies[0].messages[0].content, [{ type: "text", text: "What is this?" }, image]);
  assert.deepEqual(server.bodies[0].messages[2].content, [{ type: "tool_result", tool_use_id: "toolu_s", content: [{ type: "text", text: "shot:" }, image] }]);
  assert.equal(events[0]?.type, "text");
  assert.deepEqual(server.violations, []);
});

test("runs a two-step turn through CodingAgent: a tool call, its result, then the answer", async (t) => {
  const server = await fake(t);
  const workspace = await tempDir(t);
  server.reply(
    { kind: "stream", blocks: [{ type: "text", text: "Appending." }, { type: "tool_use", id: "toolu_e2e", name: "append_line", input: { tag: "one" } }] },
    { kind: "stream", blocks: [{ type: "text", text: "Done." }] },
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
  assert.equal(server.requests.length, 2);
  assert.deepEqual(server.violations, []);
  const last = server.bodies[1].messages.at(-1);
  assert.deepEqual(last.content.map((b: any) => [b.type, b.tool_use_id, b.content]), [["tool_result", "toolu_e2e", "appended one"]]);
  assert.equal(output.usage.inputTokens, 24);
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
