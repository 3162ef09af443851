/** Sums of usage and of transcript stats carry the 1-hour share of cache writes and the reasoning share of output. */
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

test("addUsage sums reasoningTokens as a part of outputTokens, and leaves it out while there are none", () => {
  const plain = { inputTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, outputTokens: 100 };
  const thought = { inputTokens: 10, cacheReadTokens: 20, cacheWriteTokens: 30, outputTokens: 400, reasoningTokens: 300 };
  assert.deepEqual(addUsage(plain, plain), { inputTokens: 2, cacheReadTokens: 4, cacheWriteTokens: 6, outputTokens: 200 });
  assert.deepEqual(addUsage(plain, thought), { inputTokens: 11, cacheReadTokens: 22, cacheWriteTokens: 33, outputTokens: 500, reasoningTokens: 300 });
  assert.deepEqual(addUsage(thought, thought), { inputTokens: 20, cacheReadTokens: 40, cacheWriteTokens: 60, outputTokens: 800, reasoningTokens: 600 });
  assert.equal("reasoningTokens" in addUsage(ZERO_USAGE, { ...plain, reasoningTokens: 0 }), false);
});

test("sumTranscriptStats sums reasoningTokens, within outputTokens (0 where no task reasoned)", () => {
  const a = { ...emptyTranscriptStats(8_000), requests: 1, outputTokens: 900, reasoningTokens: 700 };
  const b = { ...emptyTranscriptStats(8_000), requests: 2, outputTokens: 50 };
  assert.deepEqual(pick(sumTranscriptStats([a, b, a])), { outputTokens: 1_850, reasoningTokens: 1_400 });
  assert.deepEqual(pick(sumTranscriptStats([b, b])), { outputTokens: 100, reasoningTokens: 0 });
});

const pick = (s: { outputTokens: number; reasoningTokens: number }) => ({ outputTokens: s.outputTokens, reasoningTokens: s.reasoningTokens });
