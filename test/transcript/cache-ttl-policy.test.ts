import { test } from "node:test";
import assert from "node:assert/strict";
import { autoCacheTtl, isLongGap, oracleCacheTtl, ttlChoiceRight } from "../../src/transcript/cache-ttl-policy.js";

const MIN = 60_000;
const sizes = { writtenTokens: 1_000, promptTokens: 20_000 };
/** Right after a pause that emptied the cache: the whole prompt is written again. */
const rewritten = { writtenTokens: 20_000, promptTokens: 20_000 };

test("a long gap is one the hour bridges and 5 minutes do not", () => {
  assert.deepEqual([4, 5, 5.01, 30, 60, 60.01, 70].map((m) => isLongGap(m * MIN)), [false, false, true, true, true, false, false]);
});

test("auto: 5 minutes with no gap seen; after a long gap the hour only where it is cheap enough (cache alive), never past the hour", () => {
  assert.equal(autoCacheTtl({ gapsMs: [], ...sizes }), "5m");
  assert.equal(autoCacheTtl({ gapsMs: [4 * MIN], ...sizes }), "5m");
  assert.equal(autoCacheTtl({ gapsMs: [4 * MIN, 6 * MIN], ...sizes }), "1h", "the entries outlived the gap: the hour costs 0.75 × the new tokens only");
  assert.equal(autoCacheTtl({ gapsMs: [4 * MIN, 6 * MIN], ...rewritten }), "5m", "an even chance does not pay 0.75 × the whole prompt");
  assert.equal(autoCacheTtl({ gapsMs: [4 * MIN, 70 * MIN], ...sizes }), "5m", "past the hour: 1 hour would not have helped");
  assert.equal(autoCacheTtl({ gapsMs: [6 * MIN, 10_000, 10_000], ...sizes }), "5m", "one pause is an event");
});

test("auto: two long gaps make a rate, taken against the break-even 0.75 × new ÷ (1.15 × prompt)", () => {
  const gaps = [6 * MIN, 30 * MIN, ...Array.from({ length: 7 }, () => 10_000)]; // 2 long of 9, rate 2/10
  // break-even 0.2 at new/prompt = 0.2 × 1.15 / 0.75
  const atBreakEven = { promptTokens: 75_000, writtenTokens: 0.2 * 1.15 * 75_000 / 0.75 };
  assert.equal(autoCacheTtl({ gapsMs: gaps, ...atBreakEven }), "5m");
  assert.equal(autoCacheTtl({ gapsMs: gaps, ...atBreakEven, writtenTokens: atBreakEven.writtenTokens - 100 }), "1h");
});

test("auto: a known pause ahead decides alone", () => {
  assert.equal(autoCacheTtl({ gapsMs: [], ...sizes, knownPauseMs: 10 * MIN }), "1h");
  assert.equal(autoCacheTtl({ gapsMs: [6 * MIN], ...sizes, knownPauseMs: 2 * MIN }), "5m");
  assert.equal(autoCacheTtl({ gapsMs: [], ...sizes, knownPauseMs: 2 * 60 * MIN }), "5m");
});

test("the oracle takes the hour exactly for a long next gap; a choice is right when it is the oracle's", () => {
  assert.deepEqual([4, 6, 30, 70].map((m) => oracleCacheTtl(m * MIN)), ["5m", "1h", "1h", "5m"]);
  assert.equal(oracleCacheTtl(null), "5m");
  assert.equal(ttlChoiceRight("1h", 6 * MIN), true);
  assert.equal(ttlChoiceRight("1h", 70 * MIN), false);
  assert.equal(ttlChoiceRight("5m", 4 * MIN), true);
});
