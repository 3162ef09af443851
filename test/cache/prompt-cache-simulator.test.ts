/**
 * The simulator fed `ModelRequest`s, as the scripted provider feeds it: the request laid out and
 * marked as the Anthropic provider sends it, time passed with each request.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../src/core/messages.js";
import type { ModelRequest } from "../../src/core/provider.js";
import { anthropicMinCacheableTokens } from "../../src/cache/cache-rules.js";
import { prefixChain, promptLayout } from "../../src/cache/prompt-blocks.js";
import { PromptCacheSimulator } from "../../src/cache/prompt-cache-simulator.js";

const MIN = 60_000;
const msg = (role: Message["role"], chars: number, tag = ""): Message => ({ role, content: [{ type: "text", text: tag + "x".repeat(chars) }] });
const tools = [{ name: "read_file", description: "Reads a file. ".repeat(40), inputSchema: { type: "object" } }];
const req = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  system: "You are a test. ".repeat(300), tools, messages, cacheBreakpoints: [messages.length - 1], ...extra,
});
/** Tokens of `r`'s blocks up to and including `block` (all of them by default). */
const tokensThrough = (r: ModelRequest, block?: number) => {
  const { ends } = prefixChain(promptLayout(r).blocks);
  return ends[block ?? ends.length - 1]!;
};

test("the first request writes through its last mark and the next, grown, reads it", () => {
  const sim = new PromptCacheSimulator();
  const history = [msg("user", 8_000), msg("assistant", 400)];
  const total = tokensThrough(req(history));
  assert.deepEqual(sim.observe(req(history), 0), { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: total, outputTokens: 0 });
  const grown = [...history, msg("user", 400)];
  assert.deepEqual(sim.observe(req(grown), 1_000), {
    inputTokens: 0, cacheReadTokens: total, cacheWriteTokens: tokensThrough(req(grown)) - total, outputTokens: 0,
  });
});

test("the tools+system mark keeps tools and system cached when the tail outruns the lookback", () => {
  const sim = new PromptCacheSimulator();
  const history = [msg("user", 400)];
  sim.observe(req(history), 0);
  // 25 more messages of one block each: the tail's entry is 25 blocks behind the new tail mark.
  const long = [...history, ...Array.from({ length: 25 }, (_, i) => msg(i % 2 ? "user" : "assistant", 40, String(i)))];
  const systemBlock = tools.length; // tools come first, then the system block
  const usage = sim.observe(req(long), 1_000);
  assert.equal(usage.cacheReadTokens, tokensThrough(req(long), systemBlock));
  assert.equal(usage.cacheWriteTokens, tokensThrough(req(long)) - usage.cacheReadTokens);
});

test("a changed early message misses the cache from there on: only tools+system are read", () => {
  const sim = new PromptCacheSimulator();
  sim.observe(req([msg("user", 8_000, "a"), msg("assistant", 8_000)]), 0);
  const changed = req([msg("user", 8_000, "b"), msg("assistant", 8_000)]);
  assert.equal(sim.observe(changed, 1).cacheReadTokens, tokensThrough(changed, tools.length));
});

test("a request's 1-hour stable prefix is written at the hour and still read after a 30-minute pause", () => {
  const sim = new PromptCacheSimulator();
  const history = [msg("user", 8_000), msg("assistant", 400), msg("user", 400)];
  const r = req(history, { cacheBreakpoints: [0, 2], cacheOneHourThrough: 0 });
  const stable = tokensThrough(r, promptLayout(r).messageEnds[0]);
  assert.deepEqual(sim.observe(r, 0), {
    inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: tokensThrough(r), cacheWrite1hTokens: stable, outputTokens: 0,
  });
  const later = sim.observe(r, 30 * MIN);
  assert.equal(later.cacheReadTokens, stable);
  assert.equal(later.cacheWriteTokens, tokensThrough(r) - stable);
  assert.equal(later.cacheWrite1hTokens, undefined);
});

test("the model sets the minimum: a 2,000-token prompt caches on Sonnet 4.5, not on Opus 4.5", () => {
  const r: ModelRequest = { system: null, tools: [], messages: [msg("user", 8_000 - 16)], cacheBreakpoints: [0] };
  assert.equal(tokensThrough(r), 2_000);
  assert.equal(anthropicMinCacheableTokens("claude-opus-4-5"), 4_096);
  assert.equal(new PromptCacheSimulator({ model: "claude-sonnet-4-5" }).observe(r, 0).cacheWriteTokens, 2_000);
  assert.equal(new PromptCacheSimulator({ model: "claude-opus-4-5" }).observe(r, 0).cacheWriteTokens, 0);
});

test("openai rules read the previous request's prompt without any marks", () => {
  const sim = new PromptCacheSimulator({ rules: "openai" });
  const history = [msg("user", 9_000), msg("assistant", 400)];
  sim.observe(req(history, { cacheBreakpoints: [] }), 0);
  const next = sim.observe(req([...history, msg("user", 40)], { cacheBreakpoints: [] }), 1_000);
  assert.equal(next.cacheReadTokens, Math.floor(tokensThrough(req(history)) / 128) * 128);
  assert.equal(next.cacheWriteTokens, 0);
});
