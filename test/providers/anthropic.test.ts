/**
 * What only the anthropic provider does, against a fake Messages API over real HTTP through the
 * official SDK: request mapping with its cache marks (and their 1-hour TTLs), the 1-hour share
 * of cache writes, thinking blocks, a failure body that is not JSON, error events in the stream,
 * images. What every provider does (streams, usage, stop reasons, retries, refusals, abort, the
 * idle limit, resume, cassettes) is the provider contract's (provider-contract.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import type { StreamEvent } from "../../src/core/provider.js";
import { AnthropicProvider } from "../../src/providers/anthropic.js";
import type { RetryOptions } from "../../src/providers/provider-retry.js";
import { FakeAnthropicServer, checkAnthropicRequest } from "../support/fake-anthropic-server.js";
import { collect, request, user } from "../support/provider-streams.js";

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

test("a thinking block's text is not streamed; its thinking_tokens are reasoningTokens, a part of outputTokens", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream",
    blocks: [{ type: "thinking", thinking: "Let me weigh the two fixes first." }, { type: "text", text: "Fixed." }],
    usage: { input_tokens: 10, output_tokens: 500, thinking_tokens: 420 },
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join(""), "Fixed.");
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "usage", usage: { inputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 500, reasoningTokens: 420 } },
    { type: "stop", reason: "end_turn" },
  ]);
  assert.deepEqual(server.violations, []);
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
