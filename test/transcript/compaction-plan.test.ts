import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_COMPACTION, planFlush, predictCut, viewTokens, type CompactionSettings, type ViewShape } from "../../src/transcript/compaction-plan.js";
import { DEFAULT_SUMMARY_SIZE } from "../../src/transcript/elider.js";

const settings = (over: Partial<CompactionSettings> = {}): CompactionSettings => ({
  ...DEFAULT_COMPACTION, summarySize: DEFAULT_SUMMARY_SIZE, budgetTokens: 10_000, ...over,
});

/** A log of a 100-token task and `rounds` rounds of two 500-token messages; sections of two rounds. */
function shape(rounds: number, over: Partial<ViewShape> = {}): ViewShape {
  const messageTokens = [100, ...Array.from({ length: rounds * 2 }, () => 500)];
  const roundStarts = Array.from({ length: rounds }, (_, k) => 1 + 2 * k).filter((i) => i > (over.rawStart ?? 0));
  const sectionEnds = roundStarts.filter((i, k) => k % 2 === 0 && i > 1);
  return { fixedTokens: 200, summaryTokens: 0, rawStart: 0, messageTokens, sectionEnds, roundStarts, idle: false, ...over };
}

test("sections: nothing is flushed while the view fits the budget", () => {
  assert.equal(viewTokens(shape(9)), 200 + 100 + 9_000);
  assert.equal(planFlush(shape(9), settings()), null);
});

test("sections: past the budget the oldest sections go, as deep as the raw tail floor allows", () => {
  const s = settings();
  const plan = planFlush(shape(11), s);
  assert.ok(plan && plan.mode === "append");
  const tail = (11 * 2 + 1 - plan.cut) * 500;
  const floor = s.minTailShare * s.budgetTokens;
  assert.ok(tail >= floor, `tail ${tail} keeps the floor ${floor}`);
  assert.ok(tail - 2_000 < floor, `one section deeper would cut into the floor (tail ${tail})`);
  assert.equal(plan.free, false);
});

test("sections: requests mark the cut the coming flush will make, before the budget is reached", () => {
  const s = settings();
  const before = shape(9);
  assert.ok(viewTokens(before) <= s.budgetTokens);
  const marked = predictCut(before, s);
  const plan = planFlush(shape(10), s);
  assert.ok(marked !== null && plan);
  // At or just before the cut (a flush lands one step past the budget): within the cache's lookback.
  assert.ok(marked <= plan.cut && plan.cut - marked <= 4, `marked ${marked}, cut ${plan.cut}`);
  assert.equal(predictCut(shape(11), settings({ strategy: "keep-recent" })), null);
});

test("sections: the raw tail floor gives way only when the budget demands it", () => {
  const s = settings({ minTailShare: 0.95 });
  const plan = planFlush(shape(11), s);
  assert.ok(plan, "still flushes: the view must fit the budget");
  const tail = (23 - plan.cut) * 500;
  assert.ok(tail < 0.95 * 10_000);
});

test("sections: an idle gap past the cache TTL makes an early flush free", () => {
  const under = shape(7);
  assert.ok(viewTokens(under) > DEFAULT_COMPACTION.lowWaterShare * 10_000 && viewTokens(under) <= 10_000);
  assert.equal(planFlush(under, settings()), null);
  const plan = planFlush({ ...under, idle: true }, settings());
  assert.ok(plan);
  assert.equal(plan.free, true);
});

test("sections: summaries past their share of the budget are merged into one", () => {
  const plan = planFlush(shape(11, { summaryTokens: 1_900 }), settings({ mergeShare: 0.2 }));
  assert.ok(plan && plan.mode === "replace" && plan.merge);
});

test("summarize-all summarizes the whole log at 80 % of the budget", () => {
  assert.equal(planFlush(shape(7), settings({ strategy: "summarize-all" })), null);
  const plan = planFlush(shape(8), settings({ strategy: "summarize-all" }));
  assert.deepEqual(plan, { mode: "replace", cut: 17, free: false, merge: false });
});

test("keep-recent keeps the newest 30 % of the budget verbatim and replaces the summary", () => {
  const plan = planFlush(shape(11), settings({ strategy: "keep-recent" }));
  assert.ok(plan && plan.mode === "replace");
  assert.equal((23 - plan.cut) * 500, 3_000);
});

test("none never flushes", () => {
  assert.equal(planFlush(shape(50), settings({ strategy: "none" })), null);
});
