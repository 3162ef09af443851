/**
 * Anthropic's cache rules, each from a worked example, through the simulator's block API with
 * exact token counts: the lookback window, the model minimum, TTL expiry and refresh, the
 * 1-hour TTL and how mixed TTLs are billed, and the requests the API refuses.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RhemaError } from "../../src/core/errors.js";
import { CacheRequestError } from "../../src/cache/cache-request-error.js";
import type { CacheBreakpoint, PromptBlock } from "../../src/cache/prompt-blocks.js";
import { PromptCacheSimulator } from "../../src/cache/prompt-cache-simulator.js";

const MIN = 60_000;

/** `count` blocks of `tokens` each, named `tag0`, `tag1`, … */
const run = (tag: string, count: number, tokens: number): PromptBlock[] =>
  Array.from({ length: count }, (_, i) => ({ content: `${tag}${i}`, tokens }));
const at = (block: number, ttl?: "5m" | "1h"): CacheBreakpoint => (ttl ? { block, ttl } : { block });

/** Ten 200-token blocks, marked at the last: 2,000 tokens, cacheable on a 1,024 model. */
const head = run("head", 10, 200);

function primed(model = "claude-sonnet-4-5"): PromptCacheSimulator {
  const sim = new PromptCacheSimulator({ model });
  assert.deepEqual(sim.request({ blocks: head, breakpoints: [at(9)], at: 0 }), {
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 2_000, outputTokens: 0,
  });
  return sim;
}

test("a mark finds a cached prefix 20 blocks back", () => {
  const sim = primed();
  const blocks = [...head, ...run("new", 20, 10)];
  assert.deepEqual(sim.request({ blocks, breakpoints: [at(29)], at: 1_000 }), {
    inputTokens: 0, cacheReadTokens: 2_000, cacheWriteTokens: 200, outputTokens: 0,
  });
});

test("a mark misses a cached prefix 21 blocks back, and writes it all again", () => {
  const sim = primed();
  const blocks = [...head, ...run("new", 21, 10)];
  assert.deepEqual(sim.request({ blocks, breakpoints: [at(30)], at: 1_000 }), {
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 2_210, outputTokens: 0,
  });
});

test("a second mark near an old prefix finds it where the tail's lookback cannot", () => {
  const sim = primed();
  const blocks = [...head, ...run("new", 21, 10)];
  assert.deepEqual(sim.request({ blocks, breakpoints: [at(9), at(30)], at: 1_000 }), {
    inputTokens: 0, cacheReadTokens: 2_000, cacheWriteTokens: 210, outputTokens: 0,
  });
});

test("tokens after the last mark are input, and the longest hit of any mark is read", () => {
  const sim = primed();
  const blocks = [...head, ...run("more", 3, 100), ...run("tail", 2, 50)];
  assert.deepEqual(sim.request({ blocks, breakpoints: [at(9), at(12)], at: 1_000 }), {
    inputTokens: 100, cacheReadTokens: 2_000, cacheWriteTokens: 300, outputTokens: 0,
  });
  assert.deepEqual(sim.request({ blocks, breakpoints: [at(9), at(12)], at: 2_000 }), {
    inputTokens: 100, cacheReadTokens: 2_300, cacheWriteTokens: 0, outputTokens: 0,
  });
});

for (const [model, minimum] of [["claude-sonnet-4-5", 1_024], ["claude-opus-4-5", 4_096], ["claude-3-5-haiku-20241022", 2_048]] as const) {
  test(`${model}: a prefix one token under ${minimum} is neither written nor read; at ${minimum} it is both`, () => {
    const sim = new PromptCacheSimulator({ model });
    const short = [{ content: "short", tokens: minimum - 1 }];
    const miss = { inputTokens: minimum - 1, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
    assert.deepEqual(sim.request({ blocks: short, breakpoints: [at(0)], at: 0 }), miss);
    assert.deepEqual(sim.request({ blocks: short, breakpoints: [at(0)], at: 1 }), miss);
    const enough = [{ content: "enough", tokens: minimum }];
    assert.deepEqual(sim.request({ blocks: enough, breakpoints: [at(0)], at: 2 }), {
      inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: minimum, outputTokens: 0,
    });
    assert.deepEqual(sim.request({ blocks: enough, breakpoints: [at(0)], at: 3 }), {
      inputTokens: 0, cacheReadTokens: minimum, cacheWriteTokens: 0, outputTokens: 0,
    });
  });
}

test("a 5-minute entry is read at 5 minutes and gone at 5 minutes and 1 ms", () => {
  const read = { inputTokens: 0, cacheReadTokens: 2_000, cacheWriteTokens: 0, outputTokens: 0 };
  assert.deepEqual(primed().request({ blocks: head, breakpoints: [at(9)], at: 5 * MIN }), read);
  assert.deepEqual(primed().request({ blocks: head, breakpoints: [at(9)], at: 5 * MIN + 1 }), {
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 2_000, outputTokens: 0,
  });
});

test("a read at 4 minutes refreshes the entry for another 5 minutes", () => {
  const sim = primed();
  const again = (ms: number) => sim.request({ blocks: head, breakpoints: [at(9)], at: ms }).cacheReadTokens;
  assert.equal(again(4 * MIN), 2_000);
  assert.equal(again(9 * MIN), 2_000); // 9 minutes after the write, 5 after the read
  assert.equal(again(14 * MIN + 1), 0); // 5 minutes and 1 ms after the last read
});

test("a read found through the lookback refreshes the entry it found, not only marked ones", () => {
  const sim = primed();
  const readAt = (tag: string, ms: number) => sim.request({ blocks: [...head, ...run(tag, 3, 100)], breakpoints: [at(12)], at: ms }).cacheReadTokens;
  assert.equal(readAt("first", 4 * MIN), 2_000);
  assert.equal(readAt("second", 8 * MIN), 2_000); // block 9 was read at 4 minutes, so it lives until 9
  assert.equal(readAt("third", 13 * MIN + 1), 0);
});

test("a 1-hour entry is billed as 1-hour writes and survives 30 minutes; a 5-minute one does not", () => {
  const hour = new PromptCacheSimulator({ model: "claude-sonnet-4-5" });
  assert.deepEqual(hour.request({ blocks: head, breakpoints: [at(9, "1h")], at: 0 }), {
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 2_000, cacheWrite1hTokens: 2_000, outputTokens: 0,
  });
  assert.equal(hour.request({ blocks: head, breakpoints: [at(9, "1h")], at: 30 * MIN }).cacheReadTokens, 2_000);
  assert.equal(hour.request({ blocks: head, breakpoints: [at(9, "1h")], at: 90 * MIN }).cacheReadTokens, 2_000); // refreshed at 30
  assert.equal(hour.request({ blocks: head, breakpoints: [at(9, "1h")], at: 150 * MIN + 1 }).cacheReadTokens, 0);
  assert.equal(primed().request({ blocks: head, breakpoints: [at(9)], at: 30 * MIN }).cacheReadTokens, 0);
});

test("mixed TTLs: 1-hour writes up to the last 1-hour mark, 5-minute writes after it", () => {
  const sim = new PromptCacheSimulator({ model: "claude-sonnet-4-5" });
  const blocks = [{ content: "stable", tokens: 1_500 }, { content: "recent", tokens: 500 }, { content: "question", tokens: 300 }];
  const marks = [at(0, "1h"), at(1, "5m")];
  assert.deepEqual(sim.request({ blocks, breakpoints: marks, at: 0 }), {
    inputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 2_000, cacheWrite1hTokens: 1_500, outputTokens: 0,
  });
  assert.deepEqual(sim.request({ blocks, breakpoints: marks, at: MIN }), {
    inputTokens: 300, cacheReadTokens: 2_000, cacheWriteTokens: 0, outputTokens: 0,
  });
  // Ten minutes on, the 5-minute entry is gone and the 1-hour one (refreshed at 1 min) is not.
  assert.deepEqual(sim.request({ blocks, breakpoints: marks, at: 11 * MIN }), {
    inputTokens: 300, cacheReadTokens: 1_500, cacheWriteTokens: 500, outputTokens: 0,
  });
});

test("five breakpoints are refused, as the API refuses them", () => {
  const sim = new PromptCacheSimulator();
  const blocks = run("b", 5, 500);
  assert.throws(
    () => sim.request({ blocks, breakpoints: [0, 1, 2, 3, 4].map((b) => at(b)), at: 0 }),
    (err: unknown) => err instanceof CacheRequestError && err.code === "invalid_input" && /5 cache breakpoints in one request; Anthropic accepts at most 4/.test(err.message),
  );
  assert.equal(sim.request({ blocks, breakpoints: [0, 1, 2, 3].map((b) => at(b)), at: 0 }).cacheWriteTokens, 2_000);
});

test("a 1-hour mark after a 5-minute one, a mark off the prompt and a bad TTL are refused by name", () => {
  const sim = new PromptCacheSimulator();
  const blocks = run("b", 3, 500);
  const refused = (breakpoints: CacheBreakpoint[], message: RegExp) =>
    assert.throws(() => sim.request({ blocks, breakpoints, at: 0 }), (err: unknown) => err instanceof RhemaError && message.test(err.message));
  refused([at(0, "5m"), at(1, "1h")], /a 1h breakpoint \(block 1\) follows a 5m one \(block 0\); Anthropic requires longer TTLs first/);
  refused([at(3)], /breakpoints\[0\]\.block: expected a block index from 0 to 2, got 3/);
  refused([{ block: 1, ttl: "1d" as "1h" }], /breakpoints\[0\]\.ttl: expected "5m" or "1h", got "1d"/);
  refused([at(1), at(1)], /two breakpoints on block 1/);
  assert.throws(() => sim.request({ blocks, at: Number.NaN }), /expected `at` as a time in ms, got NaN/);
});

test("a request without marks caches nothing", () => {
  const sim = new PromptCacheSimulator();
  const usage = { inputTokens: 2_000, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 };
  assert.deepEqual(sim.request({ blocks: head, at: 0 }), usage);
  assert.deepEqual(sim.request({ blocks: head, at: 1 }), usage);
});
