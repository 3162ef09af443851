/**
 * `report compare --cells`' per-cell totals from constructed results whose stats are chosen so
 * every figure can be worked out by hand: the cache figures over the cell's summed stats (not a
 * mean of the tasks' rates), billed-equivalent input with the worker's part apart, dollars summed
 * (null when a trial is unpriced); the Markdown's cells table and the JSON valid against its schema.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { emptyTranscriptStats, type TranscriptStats } from "../../../src/core/transcript-types.js";
import { cellTotals } from "../../../src/runner/reports/compare-cells.js";
import { buildCompareReport, compareJsonSchema } from "../../../src/runner/reports/compare-json.js";
import { renderCompareMarkdown } from "../../../src/runner/reports/compare-markdown.js";
import { compareCells, compareRuns } from "../../../src/runner/reports/compare-rows.js";
import type { TaskResult } from "../../../src/runner/run-dir/task-result.js";
import { cellResults } from "./compare-fixtures.js";

function stats(part: Partial<TranscriptStats>): TranscriptStats {
  return { ...emptyTranscriptStats(800), ...part };
}

/** Task a and b in cell `small` (one flush each, a model worker in b), task a in cell `large`. */
function results(): TaskResult[] {
  const [a1, b1, a2] = cellResults([
    { id: "a", variant: "small", passes: 1, trials: 1, usd: 0.5 },
    { id: "b", variant: "small", passes: 0, trials: 1, usd: 0.25 },
    { id: "a", variant: "large", passes: 1, trials: 1, usd: null },
  ]);
  return [
    { ...a1!, stats: { ...stats({ requests: 10, flushes: 1, inputTokens: 100, cacheReadTokens: 800, cacheWriteTokens: 100, newTokens: 300, budgetedTokens: 1000 }), costUsd: 0.5, workerCostUsd: null } },
    {
      ...b1!,
      stats: {
        ...stats({ requests: 5, flushes: 1, inputTokens: 300, cacheReadTokens: 600, cacheWriteTokens: 100, cacheWrite1hTokens: 40, newTokens: 200, budgetedTokens: 1000, workerRequests: 1, workerInputTokens: 500, workerCacheReadTokens: 400, workerCacheWriteTokens: 50 }),
        costUsd: 0.2, workerCostUsd: 0.05,
      },
    },
    { ...a2!, stats: { ...stats({ requests: 10, inputTokens: 50, cacheReadTokens: 900, cacheWriteTokens: 50, newTokens: 100, budgetedTokens: 1000 }), costUsd: null, workerCostUsd: null } },
  ];
}

test("a cell's figures are taken over its summed stats: hit rate, HR*(B), billed-equivalent with the worker apart, dollars", () => {
  const [small, large] = cellTotals(results(), ["small", "large"]);
  // small: input 400, reads 1400, writes 200 (40 of them 1-hour): hit rate 1400 / 2000; HR* 1 − 500 / 2000.
  // billed-eq main: 400 + 1.25 × 160 + 2 × 40 + 0.1 × 1400 = 820; worker: (500 − 400 − 50) + 1.25 × 50 + 0.1 × 400 = 152.5.
  assert.deepEqual(small, {
    cell: "small", tasks: 2, trials: 2, passes: 1,
    passRate: { rate: 0.5, lower: small!.passRate!.lower, upper: small!.passRate!.upper },
    requests: 15, flushes: 2, cacheHitRate: 0.7, limitHitRate: 0.75,
    billedEquivalentTokens: 972.5, workerBilledEquivalentTokens: 152.5,
    costUsd: 0.75, costPerPassUsd: 0.75,
  });
  assert.ok(Math.abs(small!.passRate!.lower - 0.0945) < 1e-4 && Math.abs(small!.passRate!.upper - 0.9055) < 1e-4, JSON.stringify(small!.passRate));
  // large: an unpriced trial leaves the cell's dollars unknown, never a partial sum.
  assert.deepEqual({ ...large!, passRate: null }, {
    cell: "large", tasks: 1, trials: 1, passes: 1, passRate: null,
    requests: 10, flushes: 0, cacheHitRate: 0.9, limitHitRate: 0.9,
    billedEquivalentTokens: 50 + 1.25 * 50 + 0.1 * 900, workerBilledEquivalentTokens: 0,
    costUsd: null, costPerPassUsd: null,
  });
});

test("--cells lists every cell, the base first, in the Markdown and the JSON; between two runs there are none", () => {
  const comparison = compareCells(results(), "large", 0.1);
  assert.deepEqual(comparison.cells?.map((c) => c.cell), ["large", "small"]);
  const md = renderCompareMarkdown(comparison, { base: "run", head: "run" });
  assert.match(md, /### Cells \(every task\)\n\n\| cell \| pass rate \| requests \| flushes \| cache hit rate \| HR\*\(B\) \| billed-eq tokens \(worker\) \| cost \| cost \/ pass \|/);
  assert.match(md, /\| `large` \| 1\/1 \| 10 \| 0 \| 0\.9000 \| 0\.9000 \| 203 \(0\) \| unpriced \| unpriced \|/);
  assert.match(md, /\| `small` \| 1\/2 \| 15 \| 2 \| 0\.7000 \| 0\.7500 \| 973 \(153\) \| \$0\.7500 \| \$0\.7500 \|/);
  const report = buildCompareReport(comparison, { base: "run", head: "run" }, "regressed");
  assert.equal(report.cells?.[1]?.billedEquivalentTokens, 972.5);
  const validate = new Ajv2020({ strict: false }).compile(compareJsonSchema());
  assert.ok(validate(JSON.parse(JSON.stringify(report))), JSON.stringify(validate.errors));

  const runs = compareRuns(results(), results(), 0.1);
  assert.equal(runs.cells, null);
  assert.doesNotMatch(renderCompareMarkdown(runs, { base: "b", head: "h" }), /### Cells/);
  assert.equal(buildCompareReport(runs, { base: "b", head: "h" }, "regressed").cells, null);
});
