import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../src/core/messages.js";
import { TranscriptMirror, hashMessages, sectionsTile } from "../../src/transcript/transcript-mirror.js";
import { totalCostUsd } from "../../src/core/transcript-types.js";

function round(k: number, chars: number): Message[] {
  return [
    { role: "assistant", content: [{ type: "tool_call", id: `c${k}`, name: "grep", input: { pattern: "x".repeat(chars) } }] },
    { role: "user", content: [{ type: "tool_result", callId: `c${k}`, content: "y".repeat(chars) }] },
  ];
}
const log = (rounds: number, chars = 400): Message[] => [{ role: "user", content: [{ type: "text", text: "go" }] }, ...Array.from({ length: rounds }, (_, k) => round(k, chars)).flat()];

test("tiles the log into sections that end before an assistant message", () => {
  const mirror = new TranscriptMirror({ blockTokens: 300 });
  const messages = log(10);
  mirror.refresh(messages);
  const sections = mirror.sections();
  assert.ok(sections.length >= 3);
  let start = 0;
  for (const s of sections) {
    assert.equal(s.start, start);
    assert.equal(messages[s.end]!.role, "assistant", "never between a call and its result");
    assert.equal(s.hash, hashMessages(messages.slice(s.start, s.end)));
    start = s.end;
  }
  assert.ok(sectionsTile(sections, messages));
});

test("tiling is incremental and stable as the log grows", () => {
  const mirror = new TranscriptMirror({ blockTokens: 300 });
  const messages = log(6);
  mirror.refresh(messages);
  const before = mirror.sections();
  messages.push(...round(99, 400));
  mirror.refresh(messages);
  assert.deepEqual(mirror.sections().slice(0, before.length), before);
});

test("puts cache breakpoints at the previous request's tail and the new tail", () => {
  const mirror = new TranscriptMirror({ blockTokens: 300 });
  const messages = [log(1)[0]!];
  assert.deepEqual(mirror.view(messages).cacheBreakpoints, [0]);
  messages.push(...log(6).slice(1));
  const sentLength = messages.length;
  messages.push(...round(7, 400));
  assert.deepEqual(mirror.view(messages).cacheBreakpoints, [sentLength - 1, messages.length - 1]);
});

test("adopts saved sections that tile the log and rebuilds ones that do not", () => {
  const messages = log(8);
  const original = new TranscriptMirror({ blockTokens: 300 });
  original.refresh(messages);
  const saved = original.sections();
  const adopted = new TranscriptMirror({ blockTokens: 300 });
  adopted.adopt(saved.map((s) => ({ ...s, summary: "kept" })));
  adopted.refresh(messages);
  assert.ok(adopted.sections().every((s) => s.summary === "kept"));
  const other = new TranscriptMirror({ blockTokens: 300 });
  other.adopt(saved.map((s) => ({ ...s, summary: "stale" })));
  other.refresh(log(8, 401));
  assert.ok(other.sections().every((s) => s.summary === null));
});

test("accumulates request usage and the hit rate", () => {
  const mirror = new TranscriptMirror();
  mirror.recordRequest({ inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 900, outputTokens: 10 });
  mirror.recordRequest({ inputTokens: 50, cacheReadTokens: 900, cacheWriteTokens: 50, outputTokens: 10 });
  const stats = mirror.currentStats();
  assert.equal(stats.requests, 2);
  assert.equal(stats.cacheHitRate, 900 / 2000);
  assert.equal(stats.outputTokens, 20);
});

test("prices each request as it is counted: the task model's and the worker's apart, unpriced ones counted, never $0", () => {
  const seen: string[] = [];
  const mirror = new TranscriptMirror({
    price: (usage, who) => {
      seen.push(who);
      return usage.outputTokens === 0 ? { priced: false } : { priced: true, usd: usage.outputTokens / 1000 };
    },
  });
  assert.deepEqual(mirror.recordRequest({ inputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 20 }), { priced: true, usd: 0.02 });
  mirror.recordRequest({ inputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 });
  mirror.recordWorker({ inputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 5 });
  const stats = mirror.currentStats();
  assert.deepEqual(seen, ["task", "task", "worker"]);
  assert.equal(stats.costUsd, 0.02);
  assert.equal(stats.workerCostUsd, 0.005);
  assert.equal(stats.unpricedRequests, 1);
  assert.equal(totalCostUsd(stats), 0.025);
});

test("a mirror whose every request is unpriced has no total cost (null), and without a pricer counts none", () => {
  const unpriced = new TranscriptMirror({ price: () => ({ priced: false }) });
  assert.deepEqual(unpriced.recordRequest({ inputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 5 }), { priced: false });
  assert.equal(totalCostUsd(unpriced.currentStats()), null);
  const none = new TranscriptMirror();
  assert.equal(none.recordRequest({ inputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 5 }), null);
  assert.equal(none.currentStats().unpricedRequests, 0);
});

test("an idle flush is free only past the TTL the last request's marks carried", () => {
  const messages = log(10);
  const flushAfter = (cacheTtl: "5m" | "1h" | "auto", gapMs: number) => {
    const mirror = new TranscriptMirror({ blockTokens: 300, budgetTokens: 2_600, cacheTtl });
    const view = mirror.view(messages, 0, 0);
    mirror.recordRequest({ inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 }, { tokens: mirror.viewTokens(view.messages, 0), uncompactedTokens: mirror.uncompactedTokens(messages, 0), atMs: 0 });
    return mirror.planFlush(messages, 0, gapMs);
  };
  assert.equal(flushAfter("5m", 4 * 60_000), null, "under the budget and the cache alive: no flush");
  assert.equal(flushAfter("5m", 6 * 60_000)?.free, true);
  assert.equal(flushAfter("1h", 6 * 60_000), null, "the hour's entries still live at 6 minutes");
  assert.equal(flushAfter("1h", 61 * 60_000)?.free, true);
  assert.equal(flushAfter("auto", 6 * 60_000)?.free, true, "auto's first request is marked 5 minutes");
});

test("a view sent at a time carries the hour on every mark under cacheTtl 1h, and none under 5m or without a time", () => {
  const messages = log(4);
  assert.equal(new TranscriptMirror({ cacheTtl: "1h" }).view(messages, 0, 0).cacheOneHourThrough, messages.length - 1);
  assert.equal(new TranscriptMirror({ cacheTtl: "1h" }).view(messages, 0).cacheOneHourThrough, undefined);
  assert.equal(new TranscriptMirror({ cacheTtl: "5m" }).view(messages, 0, 0).cacheOneHourThrough, undefined);
});
