/**
 * Budgets as pure decisions: which budget is spent, whether a stopped task's budget was raised,
 * and the run's (or a matrix cell's) spend as the sum of each trial's latest stats (a resumed trial counted once).
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
  assert.equal(budgetRaised(stoppedOn, { task: { maxCostUsd: 0.01 }, cell: {}, run: {} }), false);
  assert.equal(budgetRaised(stoppedOn, { task: { maxCostUsd: 0.012 }, cell: {}, run: {} }), false, "raised, but not above what was spent");
  assert.equal(budgetRaised(stoppedOn, { task: { maxCostUsd: 0.02 }, cell: {}, run: {} }), true);
  assert.equal(budgetRaised(stoppedOn, { task: {}, cell: {}, run: { maxCostUsd: 0.001 } }), true, "the task's budget was removed; the run's is its own check");
  assert.equal(budgetRaised({ ...stoppedOn, scope: "run", measure: "tokens", limit: 100, spent: 120 }, { task: {}, cell: {}, run: { maxTokens: 100 } }), false);
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

test("a cell's spend sums its trials across tasks; its budget stops only its own trials, before the run's", () => {
  const budget = new RunBudget({ maxCostUsd: 10 }, new Map([["model=a", { maxCostUsd: 1 }], ["model=b", {}]]));
  assert.equal(budget.limited, true);
  const a1 = { suite: "s", id: "x", variant: "model=a", repeat: 1 };
  const a2 = { suite: "s", id: "y", variant: "model=a", repeat: 2 };
  const b1 = { suite: "s", id: "x", variant: "model=b", repeat: 1 };
  budget.record(a1, stats(0.5, 10));
  budget.record(b1, stats(3, 10));
  assert.equal(budget.spentFor(a2), null, "model=a has spent $0.50 of $1");
  budget.record(a2, stats(0.25, 10));
  budget.record(a2, stats(0.5, 20)); // its newer stats replace the older
  assert.deepEqual(budget.total("model=a"), { costUsd: 1, tokens: 30 });
  assert.deepEqual(budget.spentFor(a1), { scope: "cell", measure: "cost", limit: 1, spent: 1 });
  assert.equal(budget.spentFor(b1), null, "another cell (no budget of its own) runs on");
  assert.deepEqual(budget.checkFor(a2, { maxCostUsd: 0.5 })("task", stats(0.5, 20)), { scope: "task", measure: "cost", limit: 0.5, spent: 0.5 }, "the task's own first");
  assert.deepEqual(budget.checkFor(a2, {})("task", stats(0.5, 20)), { scope: "cell", measure: "cost", limit: 1, spent: 1 });
  budget.record({ suite: "s", id: "z", variant: null, repeat: 1 }, stats(6, 10));
  assert.deepEqual(budget.spentFor(b1), { scope: "run", measure: "cost", limit: 10, spent: 10 });
  assert.equal(new RunBudget({}, new Map([["model=b", {}]])).limited, false);
  const stoppedOn = { scope: "cell" as const, measure: "cost" as const, limit: 1, spent: 1.02 };
  assert.equal(budgetRaised(stoppedOn, { task: {}, cell: { maxCostUsd: 1 }, run: {} }), false);
  assert.equal(budgetRaised(stoppedOn, { task: {}, cell: { maxCostUsd: 2 }, run: {} }), true);
});

test("a cost budget on an unpriced model or worker cannot be enforced; a token budget or none needs no price", () => {
  const priced = { provider: null, model: "claude-sonnet-4-5", simulated: true };
  const subject = { file: "/t/a.yaml", key: "s/a", model: "scripted", scriptedWithoutPriceAs: true, pricing: { task: null, worker: null } };
  assert.equal(unenforceableCostBudget(subject, undefined), null);
  assert.match(unenforceableCostBudget({ ...subject, maxCostUsd: 0.5 }, undefined)!, /^\/t\/a\.yaml: cannot enforce limits\.maxCostUsd \$0\.5000 on unpriced model scripted/);
  assert.match(unenforceableCostBudget({ ...subject, cell: { variant: "model=a", maxCostUsd: 2 } }, 20)!,
    /^cannot enforce the budget\.maxCostUsd \$2\.00 of matrix cell model=a \(task s\/a, \/t\/a\.yaml\) on unpriced model scripted/);
  assert.match(unenforceableCostBudget({ ...subject, cell: { variant: "model=a" } }, 20)!, /^cannot enforce --max-cost/, "a cell without a budget: the run's");
  assert.match(unenforceableCostBudget(subject, 20)!, /^cannot enforce --max-cost \$20\.00 \(task s\/a, \/t\/a\.yaml\) on unpriced model scripted/);
  const withWorker = { ...subject, scriptedWithoutPriceAs: false, worker: "openai/gpt-x", pricing: { task: priced, worker: null } };
  assert.match(unenforceableCostBudget(withWorker, 20)!, /on unpriced model openai\/gpt-x \(the task's transcript\.worker\): add it to a pricing file$/);
  assert.equal(unenforceableCostBudget({ ...withWorker, pricing: { task: priced, worker: priced } }, 20), null);
});
