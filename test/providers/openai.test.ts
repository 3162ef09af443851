/**
 * What only the openai provider (Chat Completions) does, against its fake over real HTTP through
 * the official SDK: request mapping, the output cap's field by host, a usage chunk with null
 * choices, a call without an id, an error frame after text, images. What every provider does
 * (streams, usage, stop reasons, retries, refusals, abort, the idle limit, resume, cassettes) is
 * the provider contract's (provider-contract.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import type { StreamEvent } from "../../src/core/provider.js";
import { OpenAIProvider, toOpenAIRequest, type OpenAIProviderOptions } from "../../src/providers/openai.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { collect, request, user } from "../support/provider-streams.js";

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

test("a usage chunk with null choices is read; a stop that carried tool calls is tool_use; a call without an id gets one", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", text: "x", nullChoicesInUsage: true, usage: { prompt_tokens: 30, completion_tokens: 2, cached_tokens: 10 } },
    { kind: "stream", toolCalls: [{ id: "", name: "grep", arguments: { pattern: "x" } }], finishReason: "stop", usage: null },
  );
  const { provider } = providerOn(server);
  const nullChoices = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.deepEqual(nullChoices.slice(-2), [{ type: "usage", usage: { inputTokens: 20, cacheReadTokens: 10, cacheWriteTokens: 0, outputTokens: 2 } }, { type: "stop", reason: "end_turn" }]);
  const events = await collect(provider.stream(request([user("hi")]), new AbortController().signal));
  assert.deepEqual(events, [
    { type: "tool_call", id: "call_gen_1", name: "grep", input: { pattern: "x" } },
    { type: "stop", reason: "tool_use" },
  ]);
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
