import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message, ModelRequest } from "../../src/index.js";
import { PromptCacheSimulator, prefixBoundaries } from "../../src/cache/prompt-cache-simulator.js";

const msg = (role: "user" | "assistant", chars: number, tag = ""): Message => ({ role, content: [{ type: "text", text: tag + "x".repeat(chars) }] });
const req = (messages: Message[], breakpoints = [messages.length - 1]): ModelRequest => ({ system: "You are a test.", tools: [], messages, cacheBreakpoints: breakpoints });

test("the first request writes its prefix and the next reads it", () => {
  let now = 0;
  const sim = new PromptCacheSimulator({ now: () => now });
  const history = [msg("user", 8_000), msg("assistant", 400)];
  const first = sim.observe(req(history));
  const total = prefixBoundaries(req(history)).at(-1)!.tokens;
  assert.deepEqual(first, { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: total, outputTokens: 0 });
  now = 1_000;
  const grown = [...history, msg("user", 400)];
  const second = sim.observe(req(grown));
  assert.equal(second.cacheReadTokens, total);
  assert.equal(second.cacheWriteTokens, prefixBoundaries(req(grown)).at(-1)!.tokens - total);
  assert.equal(second.inputTokens, 0);
});

test("entries expire after the time to live and are refreshed by hits", () => {
  let now = 0;
  const sim = new PromptCacheSimulator({ now: () => now, ttlMs: 1_000 });
  const r = req([msg("user", 8_000)]);
  sim.observe(r);
  now = 900;
  assert.ok(sim.observe(r).cacheReadTokens > 0);
  now = 1_800; // 900 after the refresh: still alive
  assert.ok(sim.observe(r).cacheReadTokens > 0);
  now = 5_000;
  assert.equal(sim.observe(r).cacheReadTokens, 0);
});

test("prefixes under the minimum are never cached", () => {
  const sim = new PromptCacheSimulator();
  const r = req([msg("user", 100)]);
  assert.equal(sim.observe(r).cacheWriteTokens, 0);
  assert.equal(sim.observe(r).cacheReadTokens, 0);
});

test("a changed early message misses the cache from there on", () => {
  const sim = new PromptCacheSimulator();
  sim.observe(req([msg("user", 8_000, "a"), msg("assistant", 8_000)]));
  const changed = sim.observe(req([msg("user", 8_000, "b"), msg("assistant", 8_000)]));
  assert.equal(changed.cacheReadTokens, 0);
});

test("openai rules cache automatically in 128-token steps and charge no writes", () => {
  const sim = new PromptCacheSimulator({ rules: "openai" });
  const r = req([msg("user", 9_000)], []);
  const first = sim.observe(r);
  assert.equal(first.cacheWriteTokens, 0);
  const second = sim.observe(r);
  assert.equal(second.cacheReadTokens % 128, 0);
  assert.ok(second.cacheReadTokens > 0);
  assert.equal(second.inputTokens + second.cacheReadTokens, first.inputTokens);
});
