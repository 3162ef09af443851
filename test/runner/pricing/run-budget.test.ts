/**
 * Budgets as pure decisions: which budget is spent, whether a stopped task's budget was raised,
 * and the run's spend as the sum of each task's latest stats (a resumed task counted once).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { emptyTranscriptStats, type TranscriptStats } from "../../../src/core/transcript-types.js";
import { RunBudget, budgetRaised, spentBudget, unenforceableCostBudget } from "../../../src/runner/pricing/run-budget.js";

const stats = (costUsd: number, tokens: number, unpriced = false): TranscriptStats => ({
  ...emptyTranscriptStats(8000), requests: 1, costUsd, inputTokens: tokens, unpricedRequests: unpriced ? 1 : 0,
});

test("a budget is spent once reached; cost is named before tokens; none set is never spent", () => {
  assert.equal(spentBudget("task", { maxCostUsd: 1 }, { costUsd: 0.99, tokens: 10 }), null);
  assert.deepEqual(spentBudget("task", { maxCostUsd: 1, maxTokens: 5 }, { costUsd: 1, tokens: 10 }), { scope: "task", measure: "cost", limit: 1, spent: 1 });
  assert.deepEqual(spentBudget("run", { maxTokens: 5 }, { costUsd: 9, tokens: 5 }), { scope: "run", measure: "tokens", limit: 5, spent: 5 });
  assert.equal(spentBudget("run", {}, { costUsd: 1e9, tokens: 1e9 }), null);
});

test("a stopped task continues when the budget it stopped on was raised above its spend or removed", () => {
  const stoppedOn = { scope: "task" as const, measure: "cost" as const, limit: 0.01, spent: 0.012 };
  assert.equal(budgetRaised(stoppedOn, { task: { maxCostUsd: 0.01 }, run: {} }), false);
  assert.equal(budgetRaised(stoppedOn, { task: { maxCostUsd: 0.012 }, run: {} }), false, "raised, but not above what was spent");
  assert.equal(budgetRaised(stoppedOn, { task: { maxCostUsd: 0.02 }, run: {} }), true);
  assert.equal(budgetRaised(stoppedOn, { task: {}, run: { maxCostUsd: 0.001 } }), true, "the task's budget was removed; the run's is its own check");
  assert.equal(budgetRaised({ ...stoppedOn, scope: "run", measure: "tokens", limit: 100, spent: 120 }, { task: {}, run: { maxTokens: 100 } }), false);
});

test("the run's spend sums each task's latest stats: a task's newer stats replace its older ones", () => {
  const budget = new RunBudget({ maxCostUsd: 1 });
  const a = { suite: "s", id: "a", variant: null, repeat: 1 };
  budget.record(a, stats(0.25, 100));
  budget.record({ suite: "s", id: "b", variant: null, repeat: 1 }, stats(0.5, 50));
  budget.record(a, stats(0.4, 150)); // a resumed task's stats carry its earlier runs
  assert.deepEqual(budget.total(), { costUsd: 0.9, tokens: 200 });
  assert.equal(budget.spent(), null);
  const check = budget.checkFor(a, { maxTokens: 1000 });
  assert.deepEqual(check("task", stats(0.5, 160)), { scope: "run", measure: "cost", limit: 1, spent: 1 });
  assert.deepEqual(check("worker", stats(0.5, 1000)), { scope: "task", measure: "tokens", limit: 1000, spent: 1000 }, "the task's own budget first");
  budget.record({ suite: "s", id: "c", variant: null, repeat: 1 }, stats(0, 10, true));
  assert.equal(budget.total().costUsd, 1, "an unpriced task adds no dollars");
});

test("a cost budget on an unpriced model or worker cannot be enforced; a token budget or none needs no price", () => {
  const priced = { provider: null, model: "claude-sonnet-4-5", simulated: true };
  const subject = { file: "/t/a.yaml", key: "s/a", model: "scripted", scriptedWithoutPriceAs: true, pricing: { task: null, worker: null } };
  assert.equal(unenforceableCostBudget(subject, undefined), null);
  assert.match(unenforceableCostBudget({ ...subject, maxCostUsd: 0.5 }, undefined)!, /^\/t\/a\.yaml: cannot enforce limits\.maxCostUsd \$0\.5000 on unpriced model scripted/);
  assert.match(unenforceableCostBudget(subject, 20)!, /^cannot enforce --max-cost \$20\.00 \(task s\/a, \/t\/a\.yaml\) on unpriced model scripted/);
  const withWorker = { ...subject, scriptedWithoutPriceAs: false, worker: "openai/gpt-x", pricing: { task: priced, worker: null } };
  assert.match(unenforceableCostBudget(withWorker, 20)!, /on unpriced model openai\/gpt-x \(the task's transcript\.worker\): add it to a pricing file$/);
  assert.equal(unenforceableCostBudget({ ...withWorker, pricing: { task: priced, worker: priced } }, 20), null);
});
