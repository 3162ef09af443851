/**
 * The shared bounded retry's notices: each retry is told to `onRetry` (awaited, before its wait)
 * with the attempt to come, the bound, the wait and a short reason, so the runner can say it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProviderError, ProviderRefusedError } from "../../src/core/errors.js";
import { retryReason, streamWithRetry, type RetryNotice } from "../../src/providers/provider-retry.js";
import { StreamIdleError } from "../../src/providers/stream-idle.js";

async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

test("each retry is told before its wait: attempt to come, the bound, the wait, the reason", async () => {
  const notices: RetryNotice[] = [];
  const waits: number[] = [];
  const order: string[] = [];
  let calls = 0;
  const events = await drain(streamWithRetry("p", async function* () {
    calls += 1;
    if (calls < 3) throw new ProviderError(`p: 503 overloaded (${calls})`, { retryable: true, status: 503 });
    yield "ok";
  }, (e) => e as ProviderError, new AbortController().signal, {
    random: () => 0,
    sleep: async (ms) => void (waits.push(ms), order.push("sleep")),
    onRetry: async (n) => void (notices.push(n), order.push("notice")),
  }));
  assert.deepEqual(events, ["ok"]);
  assert.deepEqual(notices, [
    { attempt: 2, of: 4, delayMs: 500, reason: "503", status: 503, message: "p: 503 overloaded (1)" },
    { attempt: 3, of: 4, delayMs: 1000, reason: "503", status: 503, message: "p: 503 overloaded (2)" },
  ]);
  assert.deepEqual(waits, [500, 1000]);
  assert.deepEqual(order, ["notice", "sleep", "notice", "sleep"]);
});

test("no notice for a failure that is not retried: not retryable, or the last attempt", async () => {
  const notices: RetryNotice[] = [];
  const opts = { sleep: async () => {}, onRetry: (n: RetryNotice) => void notices.push(n), maxAttempts: 2 };
  const fail = (retryable: boolean) => async function* (): AsyncGenerator<string> {
    throw new ProviderError("p: failed", { retryable, status: 500 });
  };
  await assert.rejects(drain(streamWithRetry("p", fail(false), (e) => e as ProviderError, new AbortController().signal, opts)));
  assert.equal(notices.length, 0);
  await assert.rejects(drain(streamWithRetry("p", fail(true), (e) => e as ProviderError, new AbortController().signal, opts)));
  assert.deepEqual(notices.map((n) => `${n.attempt}/${n.of}`), ["2/2"]);
});

test("a notice hook that throws ends the request with its error", async () => {
  const boom = new Error("disk full");
  await assert.rejects(drain(streamWithRetry("p", async function* (): AsyncGenerator<string> {
    throw new ProviderError("p: 503", { retryable: true, status: 503 });
  }, (e) => e as ProviderError, new AbortController().signal, { sleep: async () => {}, onRetry: () => { throw boom; } })), (err) => err === boom);
});

test("the reason says what failed in a few words", () => {
  const errno = (code: string) => Object.assign(new Error(`read ${code}`), { code });
  const connection = (code: string) => new ProviderError("p: connection error", { retryable: true, cause: new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: errno(code) }) }) });
  assert.equal(retryReason(new ProviderError("p: 503", { retryable: true, status: 503 })), "503");
  assert.equal(retryReason(new ProviderError("p: 429", { retryable: true, status: 429 })), "429");
  assert.equal(retryReason(connection("ECONNRESET")), "connection reset");
  assert.equal(retryReason(connection("ECONNREFUSED")), "connection refused");
  assert.equal(retryReason(connection("UND_ERR_SOCKET")), "connection closed");
  assert.equal(retryReason(connection("ENOTFOUND")), "host not found");
  assert.equal(retryReason(new ProviderError("p: timed out", { retryable: true, cause: new Error("Request timed out.") })), "request timed out");
  assert.equal(retryReason(new StreamIdleError("p", 300_000, undefined)), "stream idle");
  assert.equal(retryReason(new ProviderError("p: the stream ended early", { retryable: true, code: "provider_stream" })), "stream failed");
  assert.equal(retryReason(new ProviderError("p: something", { retryable: true })), "connection failed");
});

test("a RESOURCE_EXHAUSTED that clears within the retries is only retried; one that stays refuses the run once the retries are spent", async () => {
  const refusal = { provider: "openai", reason: "quota" as const, status: 429, kind: null, detail: "Resource has been exhausted (e.g. check quota)." };
  const exhausted = () => new ProviderError("openai: 429: Resource has been exhausted", { retryable: true, status: 429, retryAfterMs: 1_000, refusalIfPersistent: refusal });
  const waits: number[] = [];
  const opts = { sleep: async (ms: number) => void waits.push(ms), maxAttempts: 3 };
  let calls = 0;
  const cleared = await drain(streamWithRetry("openai", async function* () {
    calls += 1;
    if (calls < 3) throw exhausted();
    yield "ok";
  }, (e) => e as ProviderError, new AbortController().signal, opts));
  assert.deepEqual(cleared, ["ok"]);
  assert.deepEqual(waits, [1_000, 1_000]);
  calls = 0;
  await assert.rejects(drain(streamWithRetry("openai", async function* (): AsyncGenerator<string> {
    calls += 1;
    throw exhausted();
  }, (e) => e as ProviderError, new AbortController().signal, opts)), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual(err.refusal, refusal);
    return true;
  });
  assert.equal(calls, 3);
});
