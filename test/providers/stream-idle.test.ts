/**
 * The stream idle limit (src/providers/stream-idle.ts) in both HTTP providers, over real HTTP
 * through the official SDKs: a server that opens the stream and then sends only keep-alives
 * (Anthropic `ping` events; OpenAI SSE comments and empty deltas) has the attempt ended as a
 * retryable `provider_stream` error naming the limit, retried, and then surfaced; a stream that
 * keeps sending content is never cut, however long it runs; `Infinity` is no limit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError } from "../../src/core/errors.js";
import type { Message } from "../../src/core/messages.js";
import type { ModelProvider, ModelRequest, StreamEvent } from "../../src/core/provider.js";
import { AnthropicProvider } from "../../src/providers/anthropic.js";
import { OpenAIProvider } from "../../src/providers/openai.js";
import { StreamIdleWatch } from "../../src/providers/stream-idle.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const request = (): ModelRequest => ({ system: "Be terse.", tools: [], messages: [user("hi")], cacheBreakpoints: [] });

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

/** Each provider on a fake server whose replies open the stream and then only keep it alive. */
const CASES: Array<{
  name: string;
  start(t: { after(fn: () => unknown): void }, idleMs: number): Promise<{ provider: ModelProvider; requests: () => number; dropped: () => number; waits: number[] }>;
}> = [
  {
    name: "anthropic (message_start, then only ping events)",
    async start(t, idleMs) {
      const server = await FakeAnthropicServer.start();
      t.after(() => server.close());
      const pings = { kind: "stream" as const, blocks: [{ type: "text" as const, text: "never sent" }], hangAfterFrames: 1, pingEveryMs: 40 };
      server.reply(pings, pings, pings);
      const waits: number[] = [];
      const provider = new AnthropicProvider({
        model: "claude-test", apiKey: "sk-test", baseUrl: server.baseUrl, streamIdleMs: idleMs,
        retry: { maxAttempts: 3, random: () => 0, sleep: async (ms) => void waits.push(ms) },
      });
      return { provider, requests: () => server.requests.length, dropped: () => server.dropped, waits };
    },
  },
  {
    name: "openai (the role chunk, then only keep-alive comments and empty deltas)",
    async start(t, idleMs) {
      const server = await FakeOpenAIServer.start();
      t.after(() => server.close());
      const keepAlive = { kind: "stream" as const, text: "never sent", hangAfterFrames: 1, keepAliveEveryMs: 40 };
      server.reply(keepAlive, keepAlive, keepAlive);
      const waits: number[] = [];
      const provider = new OpenAIProvider({
        model: "gpt-test", apiKey: "sk-test", baseUrl: server.baseUrl, streamIdleMs: idleMs,
        retry: { maxAttempts: 3, random: () => 0, sleep: async (ms) => void waits.push(ms) },
      });
      return { provider, requests: () => server.requests.length, dropped: () => server.dropped, waits };
    },
  },
];

for (const c of CASES) {
  test(`${c.name}: the idle limit ends each attempt as a retryable provider_stream error naming it; retried, then surfaced`, { timeout: 20_000 }, async (t) => {
    const { provider, requests, waits } = await c.start(t, 300);
    const started = Date.now();
    await assert.rejects(collect(provider.stream(request(), new AbortController().signal)), (err: unknown) => {
      assert.ok(err instanceof ProviderError, String(err));
      assert.equal(err.code, "provider_stream");
      assert.equal(err.retryable, true);
      assert.match(err.message, /^(anthropic|openai): the stream sent no content for 300ms \(the stream idle limit: --stream-idle, limits\.streamIdle\); the request was ended$/);
      return true;
    });
    assert.equal(requests(), 3, "every attempt was made");
    assert.equal(waits.length, 2, "with a backoff between attempts");
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 10_000, `three attempts of about 300 ms each, took ${elapsed} ms`);
  });
}

test("a stream that keeps sending content is never cut, however long it runs; a stream with none is cut once the limit passes", async () => {
  async function* steady(count: number, everyMs: number): AsyncGenerator<number> {
    for (let k = 0; k < count; k++) {
      await new Promise((r) => setTimeout(r, everyMs));
      yield k;
    }
  }
  const outer = new AbortController();
  const watch = new StreamIdleWatch("test", 200, outer.signal);
  const seen: number[] = [];
  for await (const k of watch.watch(steady(12, 50))) seen.push(k); // 600 ms in all, never 200 ms apart
  watch.stop();
  assert.equal(seen.length, 12);
  assert.equal(watch.signal.aborted, false);

  // Events that are not content (keep-alives) do not restart the count.
  const idle = new StreamIdleWatch("test", 200, outer.signal);
  const started = Date.now();
  await new Promise<void>((resolve) => idle.signal.addEventListener("abort", () => resolve()));
  idle.stop();
  assert.ok(Date.now() - started >= 190, "fired once the limit passed");
  assert.match(String((idle.failure(new Error("aborted")) as Error).message), /^test: the stream sent no content for 200ms/);

  const keepAlives = new StreamIdleWatch("test", 200, outer.signal);
  let fired = false;
  keepAlives.signal.addEventListener("abort", () => (fired = true));
  for await (const _ of keepAlives.watch(steady(8, 50), () => false)) void _;
  keepAlives.stop();
  assert.equal(fired, true, "400 ms of keep-alives is 400 ms idle");
});

test("no limit (Infinity) never fires; the caller's abort still reaches the request", async () => {
  const outer = new AbortController();
  const watch = new StreamIdleWatch("test", Infinity, outer.signal);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(watch.signal.aborted, false);
  outer.abort(new Error("stop"));
  assert.equal(watch.signal.aborted, true);
  const err = new Error("the SDK's abort");
  assert.equal(watch.failure(err), err, "a caller's abort is not an idle stream");
  watch.stop();
});
