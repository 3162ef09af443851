/**
 * The replay assumes what the Anthropic adapter sends: every request the mirror builds in a
 * replay (summaries, predicted cuts, previous and own tails, 1-hour and 5-minute TTLs), sent
 * through `toAnthropicRequest`, carries its `cache_control` marks exactly where the simulator
 * writes its entries — the same `planCacheMarks`, at most four marks, no 1-hour mark after a
 * 5-minute one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PromptCacheSimulator } from "../../src/cache/prompt-cache-simulator.js";
import { breakpointsOf, planCacheMarks, promptLayout } from "../../src/cache/prompt-blocks.js";
import type { ModelRequest } from "../../src/core/provider.js";
import { toAnthropicRequest } from "../../src/providers/anthropic.js";
import { replaySession, type ReplayTtl } from "../../src/transcript/replay.js";
import { parseCorpusSession } from "../../src/transcript/replay-session.js";
import { corpusDir } from "../support/paths.js";

/** Each request a replay sends (main and worker), in order. */
async function replayedRequests(ttl: ReplayTtl): Promise<ModelRequest[]> {
  const file = join(corpusDir, "inventory-parse.jsonl"); // a 7-minute pause, long enough to compact at 8k
  const times = JSON.parse(await readFile(file.replace(/\.jsonl$/, ".times.json"), "utf8")) as Record<string, number>;
  const session = parseCorpusSession(file, await readFile(file, "utf8"), times);
  const simulator = new PromptCacheSimulator({ model: "claude-sonnet-4-6" });
  const sent: ModelRequest[] = [];
  replaySession(session, { observe: (req, at) => (sent.push(req), simulator.observe(req, at)) }, { strategy: "sections", budgetTokens: 8_000, cacheTtl: ttl });
  return sent;
}

/** The wire's marks as (where, ttl): "prefix" for the system or last tool block, else the message index, which must be on its last block. */
function wireMarks(req: ModelRequest): Array<{ at: "prefix" | number; ttl: string }> {
  const wire = toAnthropicRequest(req, "claude-sonnet-4-6", 1_000);
  const marks: Array<{ at: "prefix" | number; ttl: string }> = [];
  const prefixBlocks = [...(wire.tools ?? []), ...((wire.system as Array<{ cache_control?: { ttl?: string } }> | undefined) ?? [])];
  for (const b of prefixBlocks as Array<{ cache_control?: { ttl?: string } }>) if (b.cache_control) marks.push({ at: "prefix", ttl: b.cache_control.ttl ?? "5m" });
  wire.messages.forEach((m, i) => {
    const content = m.content as Array<{ cache_control?: { ttl?: string } }>;
    content.forEach((b, k) => {
      if (!b.cache_control) return;
      assert.equal(k, content.length - 1, `message ${i}: a mark on its last block`);
      marks.push({ at: i, ttl: b.cache_control.ttl ?? "5m" });
    });
  });
  return marks;
}

for (const ttl of ["5m", "1h", "auto", "oracle"] as const) {
  test(`--ttl ${ttl}: the adapter marks what the simulator caches, at most four marks, the hour never after 5 minutes`, async () => {
    const requests = await replayedRequests(ttl);
    assert.ok(requests.some((r) => r.messages[0]?.content.some((b) => b.type === "text" && b.text.startsWith("[This conversation was compacted"))), "the case compacts");
    assert.ok(requests.some((r) => r.cacheBreakpoints.length >= 3), "the case has three message marks and more");
    for (const req of requests) {
      const planned = planCacheMarks(req);
      const wire = wireMarks(req);
      assert.deepEqual(wire, planned.map((m) => ({ at: m.target === "prefix" ? "prefix" : m.target.message, ttl: m.ttl })));
      assert.ok(wire.length <= 4);
      assert.ok(wire.every((m, k) => k === 0 || !(m.ttl === "1h" && wire[k - 1]!.ttl === "5m")), JSON.stringify(wire));
      const layout = promptLayout(req);
      const blocks = breakpointsOf(planned, layout).map((b) => b.block);
      assert.deepEqual(blocks, wire.map((m) => (m.at === "prefix" ? layout.prefixEnd : layout.messageEnds[m.at]!)), "the simulator's entries end where the wire's marks are");
    }
    if (ttl === "1h") assert.ok(requests.some((r) => r.cacheOneHourThrough !== undefined));
  });
}
