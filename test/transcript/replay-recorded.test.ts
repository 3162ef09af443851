import { test } from "node:test";
import assert from "node:assert/strict";
import { PromptCacheSimulator } from "../../src/cache/prompt-cache-simulator.js";
import { HiddenPrefixCache } from "../../src/transcript/hidden-prefix-cache.js";
import { parseClaudeCodeSession } from "../../src/transcript/import/claude-code.js";
import { replayRecorded, sumSimulatorErrors } from "../../src/transcript/replay-recorded.js";
import { runSweep } from "../../src/transcript/replay-sweep.js";
import { HAND_COMPUTED, threeRequestSession } from "../support/recorded-session.js";

test("recorded: each request as sent, with the hidden prefix, through the simulator; its error against the bills equals the hand count", () => {
  const session = parseClaudeCodeSession("three.jsonl", threeRequestSession());
  // Hidden prefix: billed 3 + 0 + 2000 less "hello" (2 tokens + 4) = 1997.
  assert.equal(session.prefixTokens, 1997);
  // 1 (t=0):   [prefix 1997 | hello 6]: nothing cached, written through the tail: 2003.
  // 2 (t=10s): [.. | abcd 5 | next 5] = 2013: reads 2003 (the previous tail's entry), writes 10.
  // 3 (t=370s, 360 s after the last use): every entry expired: writes all 2023.
  const simulator = new PromptCacheSimulator({ rules: "anthropic", model: "claude-sonnet-4-5" });
  const { error, figures } = replayRecorded(session, () => new HiddenPrefixCache(simulator, session.prefixTokens!, session.name));
  assert.deepEqual(error, { name: "three.jsonl", format: "claude-code", ...HAND_COMPUTED });
  assert.equal(figures.requests, 3);
  assert.equal(figures.hitRate, 2003 / 6039);
});

test("the sweep's recorded row carries each session's error and their sum; a session without bills has none", () => {
  const session = parseClaudeCodeSession("three.jsonl", threeRequestSession());
  const unbilled = { ...session, name: "unbilled", requests: session.requests.map(({ billed: _b, ...r }) => r) };
  const result = runSweep([{ name: "in", sessions: [session, unbilled] }], { strategies: ["recorded", "sections"], budgets: [8_000, 16_000] });
  const recorded = result.rows.filter((r) => r.strategy === "recorded");
  assert.equal(recorded.length, 1, "recorded runs once per input, whatever the budgets");
  assert.equal(recorded[0]!.budget, null);
  assert.deepEqual(recorded[0]!.sessionErrors?.map((e) => e.name), ["three.jsonl"]);
  assert.deepEqual(recorded[0]!.error, { name: "in", format: "claude-code", ...HAND_COMPUTED });
  assert.equal(result.rows.filter((r) => r.strategy === "sections").length, 2);
  assert.deepEqual(result.total.find((r) => r.strategy === "recorded")!.error, { name: "total", format: "claude-code", ...HAND_COMPUTED });
  assert.equal(sumSimulatorErrors("none", []), null);
});

test("recorded marks the previous request's tail too: a turn that adds more blocks than the lookback window still reads the earlier prefix", () => {
  const calls = Array.from({ length: 12 }, (_, k) => ({ type: "tool_use", id: `t${k}`, name: "Read", input: { file_path: `f${k}` } }));
  const results = calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "x".repeat(40) }));
  const line = (type: string, uuid: string, parent: string | null, at: string, message: object) => JSON.stringify({ type, uuid, parentUuid: parent, timestamp: at, message });
  const usage = { input_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 3000, output_tokens: 1 };
  const session = parseClaudeCodeSession("wide.jsonl", [
    line("user", "u1", null, "2026-01-05T10:00:00Z", { role: "user", content: "read them all" }),
    line("assistant", "a1", "u1", "2026-01-05T10:00:01Z", { id: "m1", role: "assistant", content: calls, usage }),
    line("user", "u2", "a1", "2026-01-05T10:00:02Z", { role: "user", content: results }),
    line("assistant", "a2", "u2", "2026-01-05T10:00:03Z", { id: "m2", role: "assistant", content: [{ type: "text", text: "done" }], usage }),
  ].join("\n"));
  const seen: number[] = [];
  const simulator = new PromptCacheSimulator({ rules: "anthropic" });
  const cache = new HiddenPrefixCache(simulator, session.prefixTokens!, session.name);
  replayRecorded(session, () => ({ observe: (req, at) => { const u = cache.observe(req, at); seen.push(u.cacheReadTokens); return u; } }));
  // The second request adds 24 blocks after the first one's tail: only a mark there finds it.
  assert.equal(seen[1], 3001, "the first request's whole prompt is read back");
});

test("a model switch finds nothing cached: each model has its own cache", () => {
  const text = threeRequestSession().replace('"id":"m2","role":"assistant","model":"claude-sonnet-4-5"', '"id":"m2","role":"assistant","model":"claude-opus-4-1"');
  const session = parseClaudeCodeSession("switch.jsonl", text);
  assert.deepEqual(session.requests.map((r) => r.model), ["claude-sonnet-4-5", "claude-opus-4-1", "claude-sonnet-4-5"]);
  const models: Array<string | undefined> = [];
  const { error } = replayRecorded(session, (model) => {
    models.push(model);
    return new HiddenPrefixCache(new PromptCacheSimulator({ rules: "anthropic" }), session.prefixTokens!, session.name);
  });
  assert.deepEqual(models, ["claude-sonnet-4-5", "claude-opus-4-1"], "one cache a model, made when first needed");
  // The second request, on the other model, writes its whole prompt (2013) instead of reading 2003.
  assert.equal(error!.simulated.cacheReadTokens, 0);
  assert.equal(error!.simulated.cacheWriteTokens, 2003 + 2013 + 2023);
});

test("a session billed with 1-hour writes replays with 1-hour marks, so its 6-minute gap reads; --ttl 5m replays it as 5-minute", () => {
  // The first bill's writes were 1-hour ones: the harness marked with ttl 1h.
  const text = threeRequestSession().replace('"cache_creation_input_tokens":2000,', '"cache_creation_input_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2000},');
  const session = parseClaudeCodeSession("hour.jsonl", text);
  assert.equal(session.requests[0]!.billed!.cacheWrite1hTokens, 2000);
  const replay = (ttl?: "5m" | "1h") => replayRecorded(session, () => new HiddenPrefixCache(new PromptCacheSimulator({ rules: "anthropic" }), session.prefixTokens!, session.name), ttl ? { ttl } : {}).error!;
  // As billed: 1 writes 2003, 2 reads 2003 and writes 10, 3 (360 s later, within the hour) reads
  // the 2013 through the previous tail and writes wxyz + more (10): every write a 1-hour one.
  const asBilled = replay();
  assert.deepEqual(
    { read: asBilled.simulated.cacheReadTokens, write: asBilled.simulated.cacheWriteTokens, hour: asBilled.simulated.cacheWrite1hTokens },
    { read: 2003 + 2013, write: 2003 + 10 + 10, hour: 2003 + 10 + 10 },
  );
  assert.equal(asBilled.simulated.billedEquivalent, 2 * 2023 + 0.1 * 4016);
  assert.equal(replay("1h").simulated.cacheReadTokens, 4016);
  const fiveMinute = replay("5m");
  assert.deepEqual({ read: fiveMinute.simulated.cacheReadTokens, hour: fiveMinute.simulated.cacheWrite1hTokens }, { read: 2003, hour: 0 });
});

test("recorded with a warm prefix: the hidden prefix is cached before the first request, which reads it", () => {
  const session = parseClaudeCodeSession("three.jsonl", threeRequestSession());
  const cold = replayRecorded(session, () => new HiddenPrefixCache(new PromptCacheSimulator({ rules: "anthropic" }), session.prefixTokens!, session.name)).error!;
  const warm = replayRecorded(session, () => new HiddenPrefixCache(new PromptCacheSimulator({ rules: "anthropic" }), session.prefixTokens!, session.name), { warmPrefix: true }).error!;
  // The first request reads the 1997 hidden tokens and writes hello (6); the seeding itself is not counted.
  assert.equal(warm.simulated.cacheReadTokens, cold.simulated.cacheReadTokens + 1997);
  assert.equal(warm.simulated.cacheWriteTokens, cold.simulated.cacheWriteTokens - 1997);
});

test("the sweep's recorded replay takes the warm part of the hidden prefix from the first bill: what it read, other sessions had written", () => {
  // The first request read 1500 of its 2003 tokens: the hidden prefix is still 1997, its first 1500 warm.
  const text = threeRequestSession().replace('"cache_read_input_tokens":0,"cache_creation_input_tokens":2000', '"cache_read_input_tokens":1500,"cache_creation_input_tokens":500');
  const session = parseClaudeCodeSession("warm.jsonl", text);
  assert.equal(session.prefixTokens, 1997);
  const error = runSweep([{ name: "in", sessions: [session] }], { strategies: ["recorded"], budgets: [] }).total[0]!.error!;
  // 1 reads the warm 1500 and writes the rest through its tail (497 + 6); 2 as before (reads 2003,
  // writes 10); 3, past the TTL, writes all 2023.
  assert.deepEqual({ read: error.simulated.cacheReadTokens, write: error.simulated.cacheWriteTokens }, { read: 1500 + 2003, write: 503 + 10 + 2023 });
  // --warm-prefix instead: the whole hidden prefix was warm.
  const allWarm = runSweep([{ name: "in", sessions: [session] }], { strategies: ["recorded"], budgets: [], warmPrefix: true }).total[0]!.error!;
  assert.equal(allWarm.simulated.cacheReadTokens, 1997 + 2003);
});
