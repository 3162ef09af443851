/**
 * startLongTimer (src/core/long-timer.ts): any delay, in chunks setTimeout takes — a delay above
 * 2^31−1 ms does not fire at once (setTimeout's overflow), and fires when its chunks add up.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_TIMER_MS, startLongTimer } from "../../src/core/long-timer.js";

test("a delay above 2^31-1 ms waits its whole length, chunk by chunk", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let fired = 0;
  const delayMs = 1000 * 3_600_000; // 1000h
  startLongTimer(() => fired++, delayMs);
  t.mock.timers.tick(1);
  assert.equal(fired, 0, "not at once");
  t.mock.timers.tick(MAX_TIMER_MS);
  assert.equal(fired, 0, "not after the first chunk");
  t.mock.timers.tick(delayMs - MAX_TIMER_MS - 1000);
  assert.equal(fired, 0, "not a second early");
  t.mock.timers.tick(2000);
  assert.equal(fired, 1);
  t.mock.timers.tick(delayMs);
  assert.equal(fired, 1, "once");
});

test("a cleared timer never fires, even between chunks; Infinity never fires; below 0 fires as soon as possible", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let fired = 0;
  const timer = startLongTimer(() => fired++, 3 * MAX_TIMER_MS);
  t.mock.timers.tick(MAX_TIMER_MS + 5);
  timer.clear();
  t.mock.timers.tick(3 * MAX_TIMER_MS);
  assert.equal(fired, 0);
  startLongTimer(() => fired++, Infinity);
  t.mock.timers.tick(10 * MAX_TIMER_MS);
  assert.equal(fired, 0);
  startLongTimer(() => fired++, -5);
  t.mock.timers.tick(0);
  assert.equal(fired, 1);
});

test("a real 1000h timer does not fire at once (setTimeout alone would, after its overflow warning)", async () => {
  let fired = false;
  const timer = startLongTimer(() => (fired = true), 1000 * 3_600_000);
  await new Promise((r) => setTimeout(r, 50));
  timer.clear();
  assert.equal(fired, false);
});
