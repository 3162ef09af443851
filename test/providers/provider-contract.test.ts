/**
 * The provider contract: every named provider the registry lists, made through the registry
 * (`loadNamedProvider`, `createProvider`) against its fake server over real HTTP, through its
 * official SDK, does the same things — text and tool calls streamed from bytes cut mid-frame into
 * the core's events; usage mapped into `Usage`; stop reasons; a stream cut mid-event, an overload
 * and a rate limit retried within bounds, the server's wait honoured and capped; a refusal of the
 * key or the quota a terminal `provider_refused`; a request the API rejects (400) not retried;
 * malformed call arguments a retryable `provider_stream`; abort; the stream idle limit; a
 * CodingAgent turn resumed from a saved session sending the requests an unbroken one sends, byte
 * for byte, its opaque state (reasoning items, thought signatures) carried back; and a cassette
 * recorded from it replaying without it. How each provider's wire says each scene is its harness
 * (test/support/provider-harnesses.ts); what only one adapter does stays in its own test file.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CodingAgent, type CodingAgentConfig } from "../../src/agent.js";
import { allowAll } from "../../src/core/approval.js";
import { ProviderError, ProviderRefusedError } from "../../src/core/errors.js";
import { nullSink, type EventSink } from "../../src/core/events.js";
import type { Message } from "../../src/core/messages.js";
import type { ModelProvider, StreamEvent, Usage } from "../../src/core/provider.js";
import { recordingProvider, replayingProvider, type CassetteKeying } from "../../src/providers/cassette.js";
import { createProvider } from "../../src/providers/provider-factory.js";
import { NAMED_PROVIDERS, loadNamedProvider, type NamedProviderName, type ProviderOptions } from "../../src/providers/provider-registry.js";
import type { RetryOptions } from "../../src/providers/provider-retry.js";
import { CassetteWriter, readCassette } from "../../src/store/cassette-file.js";
import { PROVIDER_HARNESSES, expectedUsage, type HarnessServer, type ProviderHarness } from "../support/provider-harnesses.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";
import { tempDir } from "../support/temp-dir.js";
import { LINES_FILE, appendLineTool } from "../support/test-tools.js";
import { waitFor } from "../support/wait.js";

const MODEL = "model-test";
const readFile = { name: "read_file", description: "Reads a file.", inputSchema: { type: "object", properties: { path: { type: "string" } } } };
const signal = () => new AbortController().signal;

test("every named provider in the registry has a contract harness, and every harness a registry entry", () => {
  assert.deepEqual(Object.keys(PROVIDER_HARNESSES).sort(), [...NAMED_PROVIDERS].sort(),
    "a provider is added with its entry in test/support/provider-harnesses.ts, so the contract runs against it");
});

// Each case waits on its own server (timeouts, backoffs, sockets): the cases and the providers run concurrently.
describe("the provider contract", { concurrency: true }, () => {
  for (const name of NAMED_PROVIDERS) {
    const harness: ProviderHarness | undefined = PROVIDER_HARNESSES[name];
    if (harness === undefined) continue; // the test above fails for it
    describe(name, { concurrency: true }, () => contract(name, harness));
  }
});

function contract(name: NamedProviderName, h: ProviderHarness): void {
  async function fake(t: { after(fn: () => unknown): void }): Promise<HarnessServer> {
    const server = await h.start();
    t.after(() => server.close());
    return server;
  }

  /** The registry's provider on `server`, its waits recorded instead of slept. */
  async function providerOn(server: HarnessServer, retry: RetryOptions = {}, extra: ProviderOptions = {}) {
    const waits: number[] = [];
    const provider = await loadNamedProvider(name, {
      model: MODEL, auth: server.made.auth, baseUrl: server.baseUrl, ...extra,
      retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...retry },
    });
    return { provider, waits };
  }

  test("made from a task's spec by the registry with its credential and base URL variables; streams text and tool calls from bytes cut mid-frame", async (t) => {
    const server = await fake(t);
    server.reply(h.answer({
      splitBytes: 7, text: "Café ☕ — checking the file now.",
      calls: [{ id: "call_a", name: "read_file", input: { path: "src/é.ts" } }, { id: "call_b", name: "grep", input: {}, rawArguments: "" }],
    }));
    const provider = createProvider({ provider: name, name: MODEL }, server.made.env, { retry: { maxAttempts: 1 } });
    assert.equal(provider.id, `${name}:${MODEL}`);
    const events = await collect(provider.stream(request([user("hi")], { tools: [readFile] }), signal()));
    assert.equal(textOf(events), "Café ☕ — checking the file now.");
    assert.deepEqual(events.filter((e) => e.type !== "text" && e.type !== "usage"), [
      { type: "tool_call", id: "call_a", name: "read_file", input: { path: "src/é.ts" } },
      { type: "tool_call", id: "call_b", name: "grep", input: {} },
      { type: "stop", reason: "tool_use" },
    ]);
    assert.equal(h.keyOf(server.requests[0]!), server.made.envKey);
    assert.deepEqual(server.violations, []);
  });

  test("maps usage into Usage: uncached input, cache reads (and writes where the wire has them), output with its reasoning share", async (t) => {
    const server = await fake(t);
    const thinking = { input: 40, cacheRead: 1000, cacheWrite: 200, output: 33, reasoning: 20 };
    const plain = { input: 10, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 };
    server.reply(h.answer({ text: "ok", usage: thinking }), h.answer({ text: "ok", usage: plain }));
    const { provider } = await providerOn(server);
    for (const u of [thinking, plain]) {
      const events = await collect(provider.stream(request([user("hi")]), signal()));
      assert.deepEqual(events.filter((e) => e.type === "usage"), [{ type: "usage", usage: expectedUsage(u, h.wire.cacheWrites) }]);
    }
  });

  test("maps each stop reason the wire can say", async (t) => {
    const server = await fake(t);
    const stops = h.stops();
    server.reply(...stops.map((s) => s.reply));
    const { provider } = await providerOn(server);
    const got: string[] = [];
    for (const _ of stops) got.push(((await collect(provider.stream(request([user("hi")]), signal()))).at(-1) as { reason: string }).reason);
    assert.deepEqual(got, stops.map((s) => s.reason));
  });

  test("a stream cut mid-event before any output, an overload and a rate limit are retried, the server's wait honoured", async (t) => {
    const server = await fake(t);
    server.reply(h.cut(false), h.overloaded(), h.rateLimited(2), h.answer({ text: "finally" }));
    const { provider, waits } = await providerOn(server, { maxAttempts: 4 });
    assert.equal(textOf(await collect(provider.stream(request([user("hi")]), signal()))), "finally");
    assert.equal(server.requests.length, 4);
    assert.deepEqual(waits, [500, 1000, 2000]); // backoff, backoff, the server's word
  });

  test("retries stay within bounds: a wait the server asks for is capped, and after maxAttempts the last failure surfaces, retryable", async (t) => {
    const server = await fake(t);
    server.reply(h.rateLimited(600), h.overloaded(), h.cut(false));
    const { provider, waits } = await providerOn(server, { maxAttempts: 3, maxRetryAfterMs: 3000 });
    await assert.rejects(collect(provider.stream(request([user("hi")]), signal())), (err: unknown) => {
      assert.ok(err instanceof ProviderError, String(err));
      assert.equal(err.retryable, true);
      assert.ok(err.message.startsWith(`${name}: `), err.message);
      return true;
    });
    assert.equal(server.requests.length, 3);
    assert.deepEqual(waits, [3000, 1000]);
  });

  test("a stream cut after text has streamed surfaces, not retried (the text cannot be taken back)", async (t) => {
    const server = await fake(t);
    server.reply(h.cut(true), h.answer({ text: "never asked for" }));
    const { provider } = await providerOn(server);
    const seen: StreamEvent[] = [];
    await assert.rejects(collect(provider.stream(request([user("hi")]), signal()), (e) => seen.push(e)), (err: unknown) =>
      err instanceof ProviderError && err.message.startsWith(`${name}: `));
    assert.equal(server.requests.length, 1);
    assert.ok(seen.length > 0 && seen.every((e) => e.type === "text"), JSON.stringify(seen));
  });

  test("a refused connection is retried, then surfaced as a retryable connection error", async (t) => {
    const closed = await fake(t);
    await closed.close();
    const { provider, waits } = await providerOn(closed, { maxAttempts: 2 });
    await assert.rejects(collect(provider.stream(request([user("hi")]), signal())), (err: unknown) => {
      assert.ok(err instanceof ProviderError, String(err));
      assert.deepEqual([err.retryable, err.status], [true, undefined]);
      assert.match(err.message, new RegExp(`^${name}: .*ECONNREFUSED 127\\.0\\.0\\.1:\\d+$`));
      return true;
    });
    assert.deepEqual(waits, [500]);
  });

  for (const reason of ["auth", "quota"] as const) {
    test(`a refusal for ${reason} is a terminal provider_refused naming the provider, never retried past what the API allows`, async (t) => {
      const server = await fake(t);
      const replies = h.refusal(reason);
      server.reply(...replies, h.answer({ text: "never asked for" }));
      const { provider, waits } = await providerOn(server, { maxAttempts: replies.length });
      await assert.rejects(collect(provider.stream(request([user("hi")]), signal())), (err: unknown) => {
        assert.ok(err instanceof ProviderRefusedError, String(err));
        assert.deepEqual([err.code, err.retryable, err.refusal.provider, err.refusal.reason], ["provider_refused", false, name, reason]);
        assert.match(err.message, new RegExp(`^${name}: refused the ${reason === "auth" ? "key" : "run"}\\b.* \\(${err.status} \\S+: ${escape(err.refusal.detail ?? "")}\\)$`));
        assert.deepEqual([err.refusal.status, (err.refusal.detail ?? "").length > 0], [err.status, true]);
        return true;
      });
      assert.equal(server.requests.length, replies.length);
      assert.equal(waits.length, replies.length - 1);
    });
  }

  test("a request the API rejects (a tool call left without its result) is a 400, not retried", async (t) => {
    const server = await fake(t);
    const { provider, waits } = await providerOn(server);
    const messages: Message[] = [user("hi"), { role: "assistant", content: [{ type: "tool_call", id: "call_open", name: "grep", input: {} }] }, user("and?")];
    await assert.rejects(collect(provider.stream(request(messages), signal())), (err: unknown) => {
      assert.ok(err instanceof ProviderError, String(err));
      assert.deepEqual([err.retryable, err.status], [false, 400]);
      assert.equal(server.violations.length, 1);
      assert.equal(err.message.replace(/^(\S+: 400) \S+: /, "$1 TYPE: "), `${name}: 400 TYPE: ${server.violations[0]}`, "the status, the API's error type and its message");
      return true;
    });
    assert.deepEqual(waits, []);
  });

  test("a tool call it cannot parse is a retryable provider_stream error", async (t) => {
    const server = await fake(t);
    server.reply(h.malformedCall("read_file"));
    const { provider } = await providerOn(server, { maxAttempts: 1 });
    await assert.rejects(collect(provider.stream(request([user("hi")], { tools: [readFile] }), signal())), (err: unknown) =>
      err instanceof ProviderError && err.code === "provider_stream" && err.retryable && err.message.startsWith(`${name}: the model`));
  });

  test("aborting mid-stream ends the request promptly, not retryable", async (t) => {
    const server = await fake(t);
    server.reply(h.hang());
    const { provider } = await providerOn(server);
    const controller = new AbortController();
    const started = Date.now();
    await assert.rejects(
      collect(provider.stream(request([user("hi")]), controller.signal), (e) => e.type === "text" && controller.abort()),
      (err: unknown) => err instanceof ProviderError && err.message === `${name}: request aborted` && !err.retryable,
    );
    assert.ok(Date.now() - started < 2000);
    assert.equal(server.requests.length, 1);
    await waitFor(async () => server.dropped === 1, 2000, 5);
  });

  test("a stream that sends no content for the idle limit ends each attempt as a retryable provider_stream error naming it", { timeout: 10_000 }, async (t) => {
    const server = await fake(t);
    server.reply(h.idle(), h.idle());
    const { provider, waits } = await providerOn(server, { maxAttempts: 2 }, { streamIdleMs: 400 });
    const started = Date.now();
    await assert.rejects(collect(provider.stream(request([user("hi")]), signal())), (err: unknown) => {
      assert.ok(err instanceof ProviderError, String(err));
      assert.deepEqual([err.code, err.retryable], ["provider_stream", true]);
      assert.equal(err.message, `${name}: the stream sent no content for 400ms (the stream idle limit: --stream-idle, limits.streamIdle); the request was ended`);
      return true;
    });
    assert.ok(Date.now() - started >= 780, "each attempt waited out the limit");
    assert.equal(waits.length, 1, "both attempts were made, with a backoff between");
  });

  test("a CodingAgent turn resumed from its saved session sends what an unbroken one sends, byte for byte, its opaque state carried back", async (t) => {
    const server = await fake(t);
    const workspace = await tempDir(t);
    const conversation = () => [
      h.answer({ opaque: "op-1", calls: [{ id: "call_one", name: "append_line", input: { tag: "one" } }], usage: { input: 100, cacheRead: 0, cacheWrite: 0, output: 40, reasoning: 30 } }),
      h.answer({ opaque: "op-2", text: "Done.", usage: { input: 50, cacheRead: 100, cacheWrite: 0, output: 9, reasoning: 0 } }),
      h.answer({ text: "Second turn." }),
    ];
    server.reply(...conversation(), ...conversation());
    const config: CodingAgentConfig = { workspace, builtinTools: false, tools: [appendLineTool()] };
    const usages: Usage[] = [];
    const sink: EventSink = { emit: (e) => void (e.type === "usage" && usages.push(e.usage)) };

    const unbroken = new CodingAgent((await providerOn(server)).provider, config);
    const first = await unbroken.turn("Append the tag one.", sink, allowAll);
    assert.deepEqual({ stopReason: first.stopReason, steps: first.steps }, { stopReason: "end_turn", steps: 2 });
    assert.deepEqual(first.message.content.filter((b) => b.type !== "reasoning"), [{ type: "text", text: "Done." }]);
    assert.deepEqual(first.message.content.filter((b) => b.type === "reasoning").map((b) => [b.provider, b.data]), h.wire.opaqueState ? [[name, "op-2"]] : []);
    assert.equal(readFileSync(join(workspace, LINES_FILE), "utf8"), "one\n");
    assert.deepEqual(first.usage, usages.reduce(sum), "the turn's usage is its steps' summed");
    await unbroken.turn("Once more.", nullSink, allowAll);

    const broken = new CodingAgent((await providerOn(server)).provider, config);
    await broken.turn("Append the tag one.", nullSink, allowAll);
    const path = join(workspace, "..", `${name}-session.json`);
    await broken.saveSessionTo(path);
    const resumed = CodingAgent.fromSession((await providerOn(server)).provider, config, await CodingAgent.loadSessionFrom(path));
    await resumed.turn("Once more.", nullSink, allowAll);

    assert.deepEqual(server.violations, []);
    const wire = server.bodies.map((b) => JSON.stringify(b));
    assert.deepEqual(wire.slice(3), wire.slice(0, 3), "the resumed session's requests are the unbroken one's, byte for byte");
    // Each request starts with the items of the one before it (the prefix a cache keeps), resumed or not.
    const [, step2, turn2] = server.bodies.slice(3).map((b) => h.itemsOf(b));
    assert.equal(JSON.stringify(turn2!.slice(0, step2!.length)), JSON.stringify(step2));
    if (h.wire.opaqueState) assert.deepEqual(h.opaqueOf(server.bodies[5]), ["op-1", "op-2"], "both answers' opaque state, carried back after the resume");
  });

  test("a cassette records its exchanges and replays them without the provider", async (t) => {
    const server = await fake(t);
    server.reply(
      h.answer({ opaque: "op-c", calls: [{ id: "call_c", name: "read_file", input: { path: "a.txt" } }], usage: { input: 30, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 0 } }),
      h.answer({ text: "It says hi.", usage: { input: 40, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 } }),
    );
    const keying: CassetteKeying = { provider: name, model: MODEL, volatile: { literals: [] }, redact: (s) => s };
    const path = join(await tempDir(t), "1.jsonl");
    const writer = await CassetteWriter.open(path, { cassette: 1, provider: name, model: MODEL, recordedAt: "2026-12-05T00:00:00.000Z" });
    const live = (await providerOn(server)).provider;
    const recorder = recordingProvider(live, writer, keying);
    const first = request([user("Read a.txt")], { tools: [readFile] });
    const recorded = [await collect(recorder.stream(first, signal()))];
    const calls = recorded[0]!.filter((e) => e.type === "tool_call" || e.type === "reasoning") as Message["content"];
    const second = { ...first, messages: [...first.messages, { role: "assistant" as const, content: calls },
      { role: "user" as const, content: [{ type: "tool_result" as const, callId: "call_c", content: "hi" }] }] };
    recorded.push(await collect(recorder.stream(second, signal())));
    await writer.close();
    await server.close();

    const replay: ModelProvider = replayingProvider({ id: `${name}:${MODEL}`, exchanges: (await readCassette(path))!.exchanges, keying, mode: "strict" });
    const replayed = [await collect(replay.stream(first, signal())), await collect(replay.stream(second, signal()))];
    assert.deepEqual(replayed.map(said), recorded.map(said));
    assert.equal(server.requests.length, 2, "the replay asked the server nothing");
    assert.equal(said(replayed[1]!).text, "It says hi.");
  });
}

const sum = (a: Usage, b: Usage): Usage => {
  const out: Usage = { inputTokens: a.inputTokens + b.inputTokens, cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens, cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens, outputTokens: a.outputTokens + b.outputTokens };
  const reasoning = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  return reasoning > 0 ? { ...out, reasoningTokens: reasoning } : out;
};

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A stream's text (a cassette keeps adjacent deltas as one) and its other events. */
function said(events: readonly StreamEvent[]): { text: string; rest: StreamEvent[] } {
  return { text: textOf([...events]), rest: events.filter((e) => e.type !== "text") };
}
