/** Sums of usage and of transcript stats carry the 1-hour share of cache writes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ZERO_USAGE, addUsage } from "../../src/core/provider.js";
import { emptyTranscriptStats, sumTranscriptStats } from "../../src/core/transcript-types.js";

test("addUsage sums cacheWrite1hTokens, and leaves it out while there are none", () => {
  const plain = { inputTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, outputTokens: 4 };
  const hour = { inputTokens: 10, cacheReadTokens: 20, cacheWriteTokens: 30, cacheWrite1hTokens: 25, outputTokens: 40 };
  assert.deepEqual(addUsage(ZERO_USAGE, plain), plain);
  assert.deepEqual(addUsage(plain, hour), { inputTokens: 11, cacheReadTokens: 22, cacheWriteTokens: 33, cacheWrite1hTokens: 25, outputTokens: 44 });
  assert.deepEqual(addUsage(hour, hour).cacheWrite1hTokens, 50);
});

test("sumTranscriptStats sums cacheWrite1hTokens where any task has some (0 where none has)", () => {
  const a = { ...emptyTranscriptStats(8_000), requests: 1, cacheWriteTokens: 100, cacheWrite1hTokens: 60 };
  const b = { ...emptyTranscriptStats(8_000), requests: 2, cacheWriteTokens: 50 };
  assert.equal(sumTranscriptStats([a, b, a]).cacheWrite1hTokens, 120);
  assert.equal(sumTranscriptStats([a, b, a]).cacheWriteTokens, 250);
  assert.equal(sumTranscriptStats([b, b]).cacheWrite1hTokens, 0);
});
