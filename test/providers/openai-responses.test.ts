/**
 * What only the openai-responses provider does, against a fake Responses API over real HTTP
 * through the official SDK: request mapping (store: false, the cache key, reasoning items carried
 * back, an output schema as text.format), a reasoning item's event, failed and short-ended responses, an error event after text,
 * images. What every provider does (streams, usage, stop reasons, retries, refusals, abort, the
 * idle limit, a resume carrying its reasoning byte for byte, cassettes) is the provider
 * contract's (provider-contract.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import type { StreamEvent } from "../../src/core/provider.js";
import { OpenAIResponsesProvider, promptCacheKey, type OpenAIResponsesProviderOptions } from "../../src/providers/openai-responses.js";
import { FakeOpenAIResponsesServer } from "../support/fake-openai-responses-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";

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

test("a request with an output schema asks for it as text.format: strict when strict mode takes the schema, else a guide", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", text: '{"n":1}' }, { kind: "stream", text: '{"n":2}' }, { kind: "stream", text: "ok" });
  const { provider } = providerOn(server);
  const closed = { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false };
  const open = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  for (const outputSchema of [closed, open]) await collect(provider.stream({ ...request([user("Count.")]), outputSchema }, new AbortController().signal));
  await collect(provider.stream(request([user("Count.")]), new AbortController().signal));
  assert.deepEqual(server.bodies.map((b: { text?: unknown }) => b.text), [
    { format: { type: "json_schema", name: "final_answer", schema: closed, strict: true } },
    { format: { type: "json_schema", name: "final_answer", schema: open, strict: false } },
    undefined,
  ]);
  assert.deepEqual(server.violations, []);
});

test("the cache key is the model, instructions and tools: the same across a conversation, another for another prefix", () => {
  const base = request([user("one")], { tools: [readFile] });
  const later = request([user("one"), { role: "assistant", content: [{ type: "text", text: "two" }] }, user("three")], { tools: [readFile] });
  assert.equal(promptCacheKey("m", base), promptCacheKey("m", later));
  assert.notEqual(promptCacheKey("m", base), promptCacheKey("m", { ...base, tools: [] }));
  assert.notEqual(promptCacheKey("m", base), promptCacheKey("m", { ...base, system: "other" }));
  assert.notEqual(promptCacheKey("m", base), promptCacheKey("n", base));
});

test("streams a reasoning item as one reasoning event when it finishes (its summary parts joined), before the calls, from bytes cut mid-frame", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream", splitBytes: 7,
    reasoning: [{ id: "rs_a", encrypted: "gAAAAB-opaque", summary: ["First part.", "Second part — ünïcode."] }],
    text: "Let me look.",
    calls: [{ callId: "call_a", name: "read_file", arguments: { path: "x.ts" } }, { callId: "call_b", name: "read_file", arguments: {} }],
  });
  const { provider } = providerOn(server);
  const events = await collect(provider.stream(request([user("go")], { tools: [readFile] }), new AbortController().signal));
  assert.deepEqual(events.filter((e) => e.type !== "text" && e.type !== "usage"), [
    { type: "reasoning", provider: "openai-responses", id: "rs_a", data: "gAAAAB-opaque", summary: "First part.\n\nSecond part — ünïcode." },
    { type: "tool_call", id: "call_a", name: "read_file", input: { path: "x.ts" } },
    { type: "tool_call", id: "call_b", name: "read_file", input: {} },
    { type: "stop", reason: "tool_use" },
  ]);
  assert.equal(textOf(events), "Let me look.");
});

test("a failed response and a stream that ends before the response does are retried", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", failed: { code: "server_error", message: "The model failed" } },
    { kind: "stream", text: "never finished", endAfterFrames: 3 },
    { kind: "stream", text: "finally" },
  );
  const { provider, waits } = providerOn(server, { retry: { maxAttempts: 3 } });
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.equal(textOf(events), "finally");
  assert.equal(server.requests.length, 3);
  assert.deepEqual(waits, [500, 1000]);
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
