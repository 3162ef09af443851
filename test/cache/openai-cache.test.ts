/**
 * OpenAI's cache rules, each from a worked example: automatic longest-prefix reuse from 1,024
 * tokens in 128-token steps, no write charge, idle expiry (5 minutes, configurable) and the
 * 24-hour retention.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RhemaError } from "../../src/core/errors.js";
import { openAiCachedTokens } from "../../src/cache/cache-rules.js";
import { PromptCacheSimulator, type PromptCacheSimulatorOptions } from "../../src/cache/prompt-cache-simulator.js";

const MIN = 60_000;
const HOUR = 60 * MIN;

/** A 1,300-token shared prefix, answered once with one tail and asked again with another. */
function sharedPrefix(options: PromptCacheSimulatorOptions, secondAt: number) {
  const sim = new PromptCacheSimulator({ rules: "openai", ...options });
  const first = sim.request({ blocks: [{ content: "shared", tokens: 1_300 }, { content: "tail one", tokens: 200 }], at: 0 });
  const second = sim.request({ blocks: [{ content: "shared", tokens: 1_300 }, { content: "tail two", tokens: 300 }], at: secondAt });
  return { first, second };
}

test("1,300 shared tokens are read as 1,280: whole 128-token steps; writes are plain input", () => {
  const { first, second } = sharedPrefix({}, 1_000);
  assert.deepEqual(first, { inputTokens: 1_500, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 });
  assert.deepEqual(second, { inputTokens: 320, cacheReadTokens: 1_280, cacheWriteTokens: 0, outputTokens: 0 });
});

test("the step rule: nothing under 1,024, then multiples of 128", () => {
  assert.deepEqual([1_023, 1_024, 1_151, 1_152, 1_300, 40_000].map((n) => openAiCachedTokens(n)), [0, 1_024, 1_024, 1_152, 1_280, 39_936]);
});

test("a shared prefix under 1,024 tokens is not reused", () => {
  const sim = new PromptCacheSimulator({ rules: "openai" });
  sim.request({ blocks: [{ content: "shared", tokens: 1_000 }, { content: "a", tokens: 500 }], at: 0 });
  const second = sim.request({ blocks: [{ content: "shared", tokens: 1_000 }, { content: "b", tokens: 500 }], at: 1 });
  assert.equal(second.cacheReadTokens, 0);
});

test("the whole previous prompt is reused when the next one extends it, breakpoints or not", () => {
  const sim = new PromptCacheSimulator({ rules: "openai" });
  const history = [{ content: "system", tokens: 2_000 }, { content: "turn 1", tokens: 300 }];
  sim.request({ blocks: history, at: 0 });
  const next = sim.request({ blocks: [...history, { content: "turn 2", tokens: 100 }], breakpoints: [{ block: 0 }], at: 1 });
  // 2,300 shared tokens → 17 steps of 128 = 2,176 read; the other 224 of 2,400 are input.
  assert.deepEqual(next, { inputTokens: 224, cacheReadTokens: 2_176, cacheWriteTokens: 0, outputTokens: 0 });
});

test("entries expire after 5 idle minutes by default, and after the configured idle time", () => {
  assert.equal(sharedPrefix({}, 5 * MIN).second.cacheReadTokens, 1_280);
  assert.equal(sharedPrefix({}, 5 * MIN + 1).second.cacheReadTokens, 0);
  assert.equal(sharedPrefix({ idleTtlMs: MIN }, MIN + 1).second.cacheReadTokens, 0);
  assert.equal(sharedPrefix({ idleTtlMs: 10 * MIN }, 9 * MIN).second.cacheReadTokens, 1_280);
});

test("24-hour retention keeps a prefix through a six-hour pause", () => {
  assert.equal(sharedPrefix({ retention: "24h" }, 6 * HOUR).second.cacheReadTokens, 1_280);
  assert.equal(sharedPrefix({ retention: "24h" }, 24 * HOUR + 1).second.cacheReadTokens, 0);
  assert.equal(sharedPrefix({}, 6 * HOUR).second.cacheReadTokens, 0);
});

test("bad options are refused by name", () => {
  const refused = (options: PromptCacheSimulatorOptions, message: RegExp) =>
    assert.throws(() => new PromptCacheSimulator(options), (err: unknown) => err instanceof RhemaError && err.code === "invalid_config" && message.test(err.message));
  refused({ rules: "gemini" as "openai" }, /expected `rules` "anthropic" or "openai", got "gemini"/);
  refused({ retention: "1w" as "24h" }, /expected `retention` "in_memory" or "24h", got "1w"/);
  refused({ idleTtlMs: 0 }, /expected `idleTtlMs` to be a whole number from 1 and up, got 0/);
  refused({ minCacheableTokens: 10.5 }, /expected `minCacheableTokens` to be a whole number from 1 and up, got 10.5/);
});
