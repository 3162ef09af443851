/**
 * The stream idle limit's watch (src/providers/stream-idle.ts): a stream that keeps sending
 * content is never cut, however long it runs; one that sends none, or only keep-alives, is cut
 * once the limit passes; `Infinity` is no limit, and the caller's abort still reaches the request.
 * Each provider ending an idle stream as a retryable `provider_stream` error (keep-alives, pings)
 * is the provider contract's (provider-contract.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { StreamIdleWatch } from "../../src/providers/stream-idle.js";

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
