/** `bench replay`'s table (src/cli/bench-command.ts renderTable): figures that round to zero print unsigned. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fixedNoNegativeZero, renderTable } from "../../src/cli/bench-command.js";
import type { ReplayFigures } from "../../src/transcript/replay.js";
import type { SweepRow } from "../../src/transcript/replay-sweep.js";

test("fixedNoNegativeZero drops the sign of a value that rounds to zero, and only then", () => {
  assert.equal(fixedNoNegativeZero(-1e-15, 2), "0.00");
  assert.equal(fixedNoNegativeZero(-0.004, 2), "0.00");
  assert.equal(fixedNoNegativeZero(-0, 3), "0.000");
  assert.equal(fixedNoNegativeZero(-0.4, 0), "0");
  assert.equal(fixedNoNegativeZero(-0.005001, 2), "-0.01");
  assert.equal(fixedNoNegativeZero(-1.92, 2), "-1.92");
  assert.equal(fixedNoNegativeZero(2.54, 2), "2.54");
});

test("the gap pts column never prints -0.00 (a hit rate a rounding error above its limit)", () => {
  // The limit and the hit rate equal up to floating-point error: (limit - hitRate) * 100 is a tiny negative.
  const hitRate = 0.1 + 0.2;
  const figures = {
    requests: 3, hitRate, limit: 0.3, gapPoints: (0.3 - hitRate) * 100, flushes: 0, freeFlushes: 0, summaryMerges: 0,
    peakRequestTokens: 100, retainedContext: 1, workerRequests: 0, workerTokens: 0, billedEquivalent: 100, workerBilledEquivalent: 0,
    costPerRetained: 100, rewriteWaste: 0, minRawTailShare: null, costUsd: -0, oneHourRequests: 0, ttlChoicesRight: 0, ttlChoicesWrong: 0,
    stats: {} as ReplayFigures["stats"],
  } satisfies ReplayFigures;
  assert.ok(figures.gapPoints < 0 && figures.gapPoints.toFixed(2) === "-0.00", "the case this test is about");
  const row: SweepRow = { input: "a.jsonl", strategy: "sections", budget: 8000, figures };
  const table = renderTable({ rows: [row], total: [row] }, "anthropic", { model: "some-model" });
  assert.doesNotMatch(table, /-0\.0/, table);
  assert.match(table.split("\n").at(-1)!, /\s0\.00\s/);
});
