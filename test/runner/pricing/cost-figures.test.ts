/**
 * Cost in the reports: a task's cost block from its stats and pricing, sums over tasks, and how
 * every report writes it — unpriced never as $0, a partly priced total as a lower bound, a
 * simulated price said to be one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PRICE_TABLE } from "../../../src/runner/pricing/prices.js";
import { formatCostTotal, formatTaskCost, formatUsd, pricedAsOf, sumCosts, taskCost } from "../../../src/runner/pricing/cost-figures.js";
import { renderJUnitReport } from "../../../src/runner/reports/junit-report.js";
import { buildStatsReport } from "../../../src/runner/reports/stats-report.js";
import { renderSummaryReport } from "../../../src/runner/reports/summary-report.js";
import type { TaskCost, TaskResult } from "../../../src/runner/run-dir/task-result.js";
import { sampleMeta, sampleResult, sampleStats } from "../sample-results.js";

const PRICES = { ...PRICE_TABLE, pricingFile: null };
const SONNET = { task: "anthropic/claude-sonnet-4-5", worker: "anthropic/claude-sonnet-4-5", simulated: false };
const UNPRICED = { task: null, worker: null, simulated: false };

function costed(id: string, cost: Partial<TaskCost>): TaskResult {
  const result = sampleResult("s", id, "passed", 1);
  result.cost = { usd: 0.5, workerUsd: 0, unpricedRequests: 0, pricedAs: "anthropic/claude-sonnet-4-5", workerPricedAs: "anthropic/claude-sonnet-4-5", simulated: false, prices: PRICES, ...cost };
  return result;
}

test("a task's cost is its stats' dollars, the worker's included; an unpriced task's is null, not 0", () => {
  const stats = { ...sampleStats(1), requests: 4, workerRequests: 1, costUsd: 0.25, workerCostUsd: 0.05, unpricedRequests: 0 };
  assert.deepEqual(taskCost(stats, SONNET, PRICES), {
    usd: 0.3, workerUsd: 0.05, unpricedRequests: 0, pricedAs: SONNET.task, workerPricedAs: SONNET.worker, simulated: false, prices: PRICES,
  });
  const unpriced = { ...sampleStats(1), requests: 4, costUsd: 0, unpricedRequests: 4 };
  assert.equal(taskCost(unpriced, UNPRICED, PRICES)!.usd, null);
  const noRequests = { ...sampleStats(1), requests: 0, costUsd: 0, unpricedRequests: 0 };
  assert.equal(taskCost(noRequests, UNPRICED, PRICES)!.usd, null, "an unpriced model with no request yet is still unpriced");
  assert.equal(taskCost(noRequests, SONNET, PRICES)!.usd, 0, "a priced model with no request cost nothing");
  assert.equal(taskCost(null, SONNET, PRICES), undefined, "without stats nothing was counted");
});

test("what a task was priced as: provider/model, a priceAs model bare and simulated", () => {
  assert.deepEqual(pricedAsOf({ task: { provider: null, model: "claude-sonnet-4-5", simulated: true }, worker: null }), { task: "claude-sonnet-4-5", worker: null, simulated: true });
  assert.deepEqual(pricedAsOf({ task: { provider: "openai", model: "gpt-4o", simulated: false }, worker: { provider: "anthropic", model: "claude-haiku-4-5", simulated: false } }),
    { task: "openai/gpt-4o", worker: "anthropic/claude-haiku-4-5", simulated: false });
});

test("costs read as dollars, unpriced, a lower bound with the unpriced requests counted, and simulated", () => {
  assert.equal(formatTaskCost(costed("a", {}).cost), "$0.5000");
  assert.equal(formatTaskCost(costed("a", { usd: 12.345 }).cost), "$12.35");
  assert.equal(formatTaskCost(costed("a", { usd: null, pricedAs: null, unpricedRequests: 3 }).cost), "unpriced");
  assert.equal(formatTaskCost(costed("a", { usd: 0.01, unpricedRequests: 2 }).cost), "≥ $0.0100 (2 unpriced requests)");
  assert.equal(formatTaskCost(costed("a", { simulated: true }).cost), "$0.5000 (simulated)");
  assert.equal(formatTaskCost(costed("a", { replayed: true }).cost), "$0.5000 (replayed)");
  assert.equal(formatTaskCost(undefined), "—");
  assert.deepEqual([0, 0.00001, 0.0123, 1.5].map(formatUsd), ["$0.00", "<$0.0001", "$0.0123", "$1.50"]);
});

test("summed costs of replayed tasks say replayed, all or partly", () => {
  const live = costed("a", { usd: 0.25 });
  const replayed = costed("b", { usd: 0.5, replayed: true });
  assert.equal(sumCosts([live, replayed])!.replayedTasks, 1);
  assert.equal(formatCostTotal(sumCosts([live, replayed])), "$0.7500 (partly replayed)");
  assert.equal(formatCostTotal(sumCosts([replayed])), "$0.5000 (replayed)");
});

test("summed costs: priced dollars add up, unpriced tasks add their requests, all unpriced reads unpriced", () => {
  const priced = costed("a", { usd: 0.25, workerUsd: 0.05 });
  const simulated = costed("b", { usd: 0.5, simulated: true });
  const unpriced = costed("c", { usd: null, pricedAs: null, workerPricedAs: null, unpricedRequests: 3 });
  const old = sampleResult("s", "old", "passed", 1);
  assert.deepEqual(sumCosts([priced, simulated, unpriced, old]), { usd: 0.75, workerUsd: 0.05, unpricedRequests: 3, tasks: 3, unpricedTasks: 1, simulatedTasks: 1, replayedTasks: 0 });
  assert.equal(formatCostTotal(sumCosts([priced, simulated, unpriced])), "≥ $0.7500 (partly simulated; 3 unpriced requests)");
  assert.equal(formatCostTotal(sumCosts([simulated])), "$0.5000 (simulated)");
  assert.equal(formatCostTotal(sumCosts([unpriced, unpriced])), "unpriced");
  assert.equal(sumCosts([old]), null, "results from before costs were counted have none");
  assert.equal(formatCostTotal(null), "—");
});

test("stats.json carries each task's cost, the sums per suite and run, and the price table used", () => {
  const file = { ...PRICES, pricingFile: { path: "/repo/pricing.yaml", sha256: "cd".repeat(32) } };
  const report = buildStatsReport([costed("a", { usd: 0.25, prices: file }), costed("c", { usd: null, pricedAs: null, unpricedRequests: 2, prices: file })], sampleMeta());
  assert.deepEqual(report.prices, [file]);
  assert.deepEqual(report.total.cost, { usd: 0.25, workerUsd: 0, unpricedRequests: 2, tasks: 2, unpricedTasks: 1, simulatedTasks: 0, replayedTasks: 0 });
  assert.deepEqual(report.suites[0]!.cost, report.total.cost);
  assert.equal(report.tasks[1]!.cost!.usd, null);
  assert.equal(buildStatsReport([sampleResult("s", "old", "passed")], sampleMeta()).total.cost, null);
});

test("the summary has a cost column and total; unpriced is never $0, simulated is said", () => {
  const summary = renderSummaryReport([costed("a", { usd: 0.0123, simulated: true }), costed("c", { usd: null, pricedAs: null, unpricedRequests: 2 })], sampleMeta());
  assert.match(summary, / · cost ≥ \\\$0\.0123 \(simulated; 2 unpriced requests\) · /);
  assert.match(summary, /^\| ✅ \| `s\/a` \| .* \| \\\$0\.0123 \(simulated\) \| 0 \|$/m);
  assert.match(summary, /^\| ✅ \| `s\/c` \| .* \| unpriced \| 0 \|$/m);
  assert.match(summary, /_Cost — simulated: usage from the prompt-cache simulator \(scripted tasks priced as a real model/);
  assert.doesNotMatch(summary.split("_Cost —")[0]!, /\$0\.00\b/);
});

test("JUnit properties: cost per task and suite, 'unpriced' instead of 0, what it was priced as", () => {
  const xml = renderJUnitReport([costed("a", { usd: 0.25, simulated: true, pricedAs: "claude-sonnet-4-5" }), costed("c", { usd: null, pricedAs: null, workerPricedAs: null, unpricedRequests: 2 })], sampleMeta());
  const property = (name: string) => new RegExp(`<property name="${name.replaceAll(".", "\\.")}" value="([^"]*)"/>`).exec(xml)?.[1];
  assert.equal(property("task.a.totalCostUsd"), "0.25");
  assert.equal(property("task.a.pricedAs"), "claude-sonnet-4-5");
  assert.equal(property("task.a.costSimulated"), "true");
  assert.equal(property("task.c.costUsd"), "unpriced");
  assert.equal(property("task.c.workerCostUsd"), "unpriced");
  assert.equal(property("task.c.totalCostUsd"), "unpriced");
  assert.equal(property("task.c.pricedAs"), "unpriced");
  assert.equal(property("suite.totalCostUsd"), "0.25");
  assert.equal(property("suite.unpricedTasks"), "1");
  assert.match(xml, /\[\[PROPERTY\|totalCostUsd=unpriced\]\]/);
  const allUnpriced = renderJUnitReport([costed("c", { usd: null, pricedAs: null, unpricedRequests: 2 })], sampleMeta());
  assert.match(allUnpriced, /<property name="suite\.costUsd" value="unpriced"\/>/);
});
