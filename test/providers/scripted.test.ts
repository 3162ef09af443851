import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "../../src/core/errors.js";
import type { ModelRequest, StreamEvent } from "../../src/core/provider.js";
import { END_OF_SCRIPT_TEXT, ScriptedProvider } from "../../src/providers/scripted.js";

const request = (assistantMessages: number): ModelRequest => ({
  system: "sys",
  tools: [],
  cacheBreakpoints: [],
  messages: Array.from({ length: assistantMessages * 2 + 1 }, (_, i) => ({
    role: i % 2 ? ("assistant" as const) : ("user" as const),
    content: [{ type: "text" as const, text: `m${i}` }],
  })),
});

async function collect(provider: ScriptedProvider, req: ModelRequest, signal = new AbortController().signal): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of provider.stream(req, signal)) events.push(e);
  return events;
}

test("plays the step given by the number of assistant messages in the request", async () => {
  const provider = new ScriptedProvider([{ say: "first" }, { say: "second", calls: [{ call: "grep", input: { pattern: "x" } }, { call: "glob" }] }], { cache: false });
  const events = await collect(provider, request(1));
  assert.deepEqual(events.filter((e) => e.type !== "usage"), [
    { type: "text", delta: "second" },
    { type: "tool_call", id: "call_1_0", name: "grep", input: { pattern: "x" } },
    { type: "tool_call", id: "call_1_1", name: "glob", input: {} },
    { type: "stop", reason: "tool_use" },
  ]);
});

test("streams long text in several chunks and records each request exactly", async () => {
  const provider = new ScriptedProvider([{ say: "a fairly long sentence that arrives in pieces" }], { cache: false });
  const req = request(0);
  const events = await collect(provider, req);
  const texts = events.filter((e) => e.type === "text");
  assert.ok(texts.length > 1);
  assert.equal(texts.map((e) => (e as { delta: string }).delta).join(""), "a fairly long sentence that arrives in pieces");
  assert.deepEqual(provider.requests, [JSON.stringify(req)]);
});

test("ends the conversation politely when the script runs out", async () => {
  const events = await collect(new ScriptedProvider([], { cache: false }), request(3));
  assert.deepEqual(events[0], { type: "text", delta: END_OF_SCRIPT_TEXT });
  assert.deepEqual(events[events.length - 1], { type: "stop", reason: "end_turn" });
});

test("fails a step the given number of times, then plays it", async () => {
  const provider = new ScriptedProvider([{ say: "ok", fail: { status: 529, retryable: true, times: 1 } }], { cache: false, retry: { maxAttempts: 1 } });
  await assert.rejects(collect(provider, request(0)), (err: unknown) => err instanceof ProviderError && err.status === 529 && err.retryable);
  const events = await collect(provider, request(0));
  assert.deepEqual(events[0], { type: "text", delta: "ok" });
});

test("retries a retryable failure as the HTTP providers do: the same bounded retry, told to onRetry, each attempt a request", async () => {
  const notices: unknown[] = [];
  const waits: number[] = [];
  const provider = new ScriptedProvider([{ say: "ok", fail: { status: 503, retryable: true, times: 2 } }], {
    cache: false, retry: { sleep: async (ms) => void waits.push(ms), random: () => 0, onRetry: (n) => void notices.push(n) },
  });
  const events = await collect(provider, request(0));
  assert.deepEqual(events[0], { type: "text", delta: "ok" });
  assert.deepEqual(notices.map((n) => (n as { attempt: number }).attempt), [2, 3]);
  assert.deepEqual(waits, [500, 1000]);
  assert.equal(provider.requests.length, 3);
});

test("a failure that is not retryable, or one past the bound, surfaces", async () => {
  const fatal = new ScriptedProvider([{ say: "ok", fail: { status: 400 } }], { cache: false, retry: { sleep: async () => {} } });
  await assert.rejects(collect(fatal, request(0)), (err: unknown) => err instanceof ProviderError && err.status === 400 && !err.retryable);
  assert.equal(fatal.requests.length, 1);
  const down = new ScriptedProvider([{ say: "ok", fail: { status: 529, retryable: true } }], { cache: false, retry: { sleep: async () => {} } });
  await assert.rejects(collect(down, request(0)), (err: unknown) => err instanceof ProviderError && err.status === 529);
  assert.equal(down.requests.length, 4);
});

test("stops streaming when aborted", async () => {
  const provider = new ScriptedProvider([{ say: "slow text that keeps on coming", chunkDelayMs: 1_000 }], { cache: false });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  const started = Date.now();
  await assert.rejects(collect(provider, request(0), controller.signal), /aborted/);
  assert.ok(Date.now() - started < 900);
});

test("reports usage from the cache simulator", async () => {
  const provider = new ScriptedProvider([{ say: "a" }, { say: "b" }]);
  const big: ModelRequest = { ...request(0), system: "s".repeat(20_000), cacheBreakpoints: [0] };
  const first = (await collect(provider, big)).find((e) => e.type === "usage");
  const second = (await collect(provider, big)).find((e) => e.type === "usage");
  assert.ok(first && first.type === "usage" && first.usage.cacheWriteTokens > 0);
  assert.ok(second && second.type === "usage" && second.usage.cacheReadTokens > 0);
});

/** The usage events of `reqs` sent through `provider` at the times `clock` is set to. */
async function usagesAt(provider: ScriptedProvider, clock: { ms: number }, sends: Array<[number, ModelRequest]>) {
  const out = [];
  for (const [ms, req] of sends) {
    clock.ms = ms;
    const usage = (await collect(provider, req)).find((e) => e.type === "usage");
    assert.ok(usage && usage.type === "usage");
    out.push(usage.usage);
  }
  return out;
}

test("the clock it is given stamps each request, so a pause longer than the TTL misses", async () => {
  const clock = { ms: 0 };
  const provider = new ScriptedProvider([{ say: "a" }], { now: () => clock.ms });
  const big: ModelRequest = { ...request(0), system: "s".repeat(20_000) };
  const [first, soon, late] = await usagesAt(provider, clock, [[0, big], [4 * 60_000, big], [9 * 60_000 + 1, big]]);
  assert.deepEqual([first!.cacheWriteTokens, soon!.cacheReadTokens, late!.cacheReadTokens], [5_000, 5_000, 0]);
  assert.equal(late!.cacheWriteTokens, 5_000);
});

test("a request's 1-hour prefix is reported as cacheWrite1hTokens and outlives a 30-minute pause", async () => {
  const clock = { ms: 0 };
  const provider = new ScriptedProvider([{ say: "a" }], { now: () => clock.ms });
  const big: ModelRequest = { ...request(0), system: "s".repeat(20_000), cacheOneHourThrough: -1 };
  const [first, later] = await usagesAt(provider, clock, [[0, big], [30 * 60_000, big]]);
  assert.equal(first!.cacheWrite1hTokens, 5_000);
  assert.equal(later!.cacheReadTokens, 5_000);
  assert.equal(later!.cacheWrite1hTokens, undefined);
});

test("a step's reasoningTokens are added to its output tokens and reported as their part", async () => {
  const provider = new ScriptedProvider([{ say: "the fix", reasoningTokens: 1_200 }, { say: "the fix" }], { cache: false });
  const usageOf = async (req: ModelRequest) => (await collect(provider, req)).flatMap((e) => (e.type === "usage" ? [e.usage] : []))[0]!;
  const [thought, plain] = [await usageOf(request(0)), await usageOf(request(1))];
  assert.equal(plain.reasoningTokens, undefined);
  assert.deepEqual({ outputTokens: thought.outputTokens, reasoningTokens: thought.reasoningTokens }, { outputTokens: plain.outputTokens + 1_200, reasoningTokens: 1_200 });
});
