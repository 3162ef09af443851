/**
 * The replay under each cache TTL, against hand-computed cases: five requests with gaps of 4, 6,
 * 30 and 70 minutes, no compaction. P_k is request k's prompt (the system prompt, then the log it
 * saw); each request marks its own tail, so nothing is left as plain input:
 * - 4 minutes: read either way; 6 and 30: read only under a 1-hour mark; 70: missed either way.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PromptCacheSimulator } from "../../src/cache/prompt-cache-simulator.js";
import { promptLayout } from "../../src/cache/prompt-blocks.js";
import type { Message } from "../../src/core/messages.js";
import type { Usage } from "../../src/core/provider.js";
import { priceByPricing } from "../../src/runner/pricing/prices.js";
import { replaySession, type ReplayTtl } from "../../src/transcript/replay.js";
import type { ReplaySession } from "../../src/transcript/replay-session.js";

const MIN = 60_000;
const GAPS_MIN = [4, 6, 30, 70];

function session(): ReplaySession {
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "Fix the failing test." }] }];
  const requests: ReplaySession["requests"] = [];
  let atMs = 0;
  for (let k = 0; k <= GAPS_MIN.length; k++) {
    requests.push({ logLength: messages.length, atMs });
    messages.push({ role: "assistant", content: [{ type: "tool_call", id: `c${k}`, name: "bash", input: { command: `cat file${k}.txt` } }] });
    messages.push({ role: "user", content: [{ type: "tool_result", callId: `c${k}`, content: `line of file ${k}\n`.repeat(40 + 10 * k) }] });
    atMs += (GAPS_MIN[k] ?? 0) * MIN;
  }
  return { name: "gaps", system: "You are a careful engineer. ".repeat(300), tools: [], messages, requests };
}

/** P_k: the tokens of request k's prompt, as the simulator lays it out. */
function promptSizes(s: ReplaySession): number[] {
  return s.requests.map(({ logLength }) =>
    promptLayout({ system: s.system, tools: s.tools, messages: s.messages.slice(0, logLength), cacheBreakpoints: [] }).blocks.reduce((n, b) => n + b.tokens!, 0));
}

const PRICES = { provider: "anthropic", model: "m", inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, cacheWrite1hPerMTok: 6 };

function replay(ttl: ReplayTtl) {
  return replaySession(session(), new PromptCacheSimulator({ model: "claude-sonnet-4-6" }), {
    strategy: "none", budgetTokens: 1_000_000, cacheTtl: ttl, price: (usage: Usage) => priceByPricing(PRICES, usage),
  });
}

/** Expected totals from per-request [read, 5-minute write, 1-hour write]. */
function expected(perRequest: Array<[number, number, number]>) {
  const read = perRequest.reduce((n, r) => n + r[0], 0);
  const five = perRequest.reduce((n, r) => n + r[1], 0);
  const hour = perRequest.reduce((n, r) => n + r[2], 0);
  return { inputTokens: 0, cacheReadTokens: read, cacheWriteTokens: five + hour, cacheWrite1hTokens: hour, billedEquivalent: 1.25 * five + 2 * hour + 0.1 * read };
}

function check(ttl: ReplayTtl, perRequest: Array<[number, number, number]>, ttlCounts: { oneHour: number; right: number; wrong: number }) {
  const f = replay(ttl);
  const want = expected(perRequest);
  const s = f.stats;
  assert.deepEqual(
    { inputTokens: s.inputTokens, cacheReadTokens: s.cacheReadTokens, cacheWriteTokens: s.cacheWriteTokens, cacheWrite1hTokens: s.cacheWrite1hTokens, billedEquivalent: f.billedEquivalent },
    want, ttl);
  assert.deepEqual({ oneHour: f.oneHourRequests, right: f.ttlChoicesRight, wrong: f.ttlChoicesWrong }, ttlCounts, ttl);
  const dollars = (want.cacheReadTokens * 0.3 + (want.cacheWriteTokens - want.cacheWrite1hTokens) * 3.75 + want.cacheWrite1hTokens * 6 + s.outputTokens * 15) / 1e6;
  assert.ok(Math.abs(f.costUsd! - dollars) < 1e-12, `${ttl}: $${f.costUsd} against $${dollars}`);
}

test("the case's prompts are above the cache minimum and grow", () => {
  const p = promptSizes(session());
  assert.ok(p[0]! > 1_024 && p.every((x, k) => k === 0 || x > p[k - 1]!), String(p));
});

test("--ttl 5m: only the 4-minute gap reads; 6, 30 and 70 minutes rewrite the whole prompt", () => {
  const [p0, p1, p2, p3, p4] = promptSizes(session()) as [number, number, number, number, number];
  check("5m", [[0, p0, 0], [p0, p1 - p0, 0], [0, p2, 0], [0, p3, 0], [0, p4, 0]], { oneHour: 0, right: 2, wrong: 2 });
});

test("--ttl 1h: 4, 6 and 30 minutes read, 70 misses; every write is a 1-hour write", () => {
  const [p0, p1, p2, p3, p4] = promptSizes(session()) as [number, number, number, number, number];
  check("1h", [[0, 0, p0], [p0, 0, p1 - p0], [p1, 0, p2 - p1], [p2, 0, p3 - p2], [0, 0, p4]], { oneHour: 5, right: 2, wrong: 2 });
});

test("--ttl auto never reads the next gap: after each pause the cache is gone and an even chance of another does not pay the hour on the whole prompt, so it marks 5 minutes throughout", () => {
  const [p0, p1, p2, p3, p4] = promptSizes(session()) as [number, number, number, number, number];
  check("auto", [[0, p0, 0], [p0, p1 - p0, 0], [0, p2, 0], [0, p3, 0], [0, p4, 0]], { oneHour: 0, right: 2, wrong: 2 });
});

test("--ttl auto takes the hour once pauses make a rate and the cache is alive: 6- and 30-minute pauses, then short steps, then 20 minutes", () => {
  const s = session();
  // requests at 0, 6, 36 minutes, then 36:10, 36:20, 36:30 … and one at 20 minutes after the last of them
  const times = [0, 6 * MIN, 36 * MIN, 36 * MIN + 10_000, 36 * MIN + 20_000];
  const five = { ...s, requests: s.requests.map((r, k) => ({ ...r, atMs: times[k]! })) };
  const more: ReplaySession = {
    ...five,
    messages: [...five.messages, { role: "assistant", content: [{ type: "text", text: "Done." }] }, { role: "user", content: [{ type: "text", text: "And the docs?" }] }],
    requests: [...five.requests, { logLength: five.messages.length + 2, atMs: times[4]! + 20 * MIN }],
  };
  const f = replaySession(more, new PromptCacheSimulator({ model: "claude-sonnet-4-6" }), { strategy: "none", budgetTokens: 1_000_000, cacheTtl: "auto" });
  // 0: no gap → 5m (wrong: 6 follows). 6 min: one pause, an even chance < 0.75/1.15 on a rewrite → 5m (wrong: 30 follows).
  // 36 min: two pauses of two gaps, 2/3 > 0.652 even on a rewrite → 1h (wrong: 10 s follows). 36:10 and 36:20: the cache
  // alive, 2/4 and 2/5 far above the break-even of a small write → 1h (wrong, then right: 20 minutes follow). The last: 1h, unjudged.
  assert.deepEqual({ oneHour: f.oneHourRequests, right: f.ttlChoicesRight, wrong: f.ttlChoicesWrong }, { oneHour: 4, right: 1, wrong: 4 });
  const last = promptSizes(five)[4]!;
  assert.ok(f.stats.cacheReadTokens >= last, "the request 20 minutes on read the hour-marked prompt");
});

test("--ttl oracle knows each next gap: 1 hour before the 6- and 30-minute gaps only, every choice right", () => {
  const [p0, p1, p2, p3, p4] = promptSizes(session()) as [number, number, number, number, number];
  check("oracle", [[0, p0, 0], [p0, 0, p1 - p0], [p1, 0, p2 - p1], [p2, p3 - p2, 0], [0, p4, 0]], { oneHour: 2, right: 4, wrong: 0 });
});

test("--warm-prefix: the first request reads the tools and system prompt other sessions cached, and writes only the rest", () => {
  const s = session();
  const [p0, p1, p2, p3, p4] = promptSizes(s) as [number, number, number, number, number];
  const fixed = promptLayout({ system: s.system, tools: s.tools, messages: [], cacheBreakpoints: [] }).blocks.reduce((n, b) => n + b.tokens!, 0);
  const f = replaySession(s, new PromptCacheSimulator({ model: "claude-sonnet-4-6" }), { strategy: "none", budgetTokens: 1_000_000, warmPrefix: true });
  const want = expected([[fixed, p0 - fixed, 0], [p0, p1 - p0, 0], [0, p2, 0], [0, p3, 0], [0, p4, 0]]);
  assert.deepEqual({ cacheReadTokens: f.stats.cacheReadTokens, cacheWriteTokens: f.stats.cacheWriteTokens, billedEquivalent: f.billedEquivalent, requests: f.requests },
    { cacheReadTokens: want.cacheReadTokens, cacheWriteTokens: want.cacheWriteTokens, billedEquivalent: want.billedEquivalent, requests: 5 });
});
