/** The action's outcome for a run with a task stopped on a budget: counted as stopped, failing under fail-on failure only. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { actionOutputs, runAnnotations, stepFailure, type ActionRunOutcome } from "../../src/action/action-outcome.js";
import { sampleResult } from "../runner/sample-results.js";

const outcome: ActionRunOutcome = {
  results: [sampleResult("s", "ok", "passed"), sampleResult("s", "pricey", "stopped", 2)],
  interrupted: false, interruptedTasks: 0, runDir: "/w/run",
  reports: { junit: "/w/run/junit.xml", stats: "/w/run/stats.json", summary: "/w/run/summary.md" },
};

test("a stopped task is the stopped output, neither failed nor errored", () => {
  const o = actionOutputs(outcome);
  assert.deepEqual([o.passed, o.failed, o.errored, o.stopped], ["1", "0", "0", "1"]);
});

test("fail-on failure counts a stopped task; fail-on error does not", () => {
  assert.equal(stepFailure("failure", outcome), "1 task(s) did not pass: s/pricey");
  assert.equal(stepFailure("error", outcome), null);
});

test("a stopped task is an error annotation naming its budget; the totals say how many stopped", () => {
  const annotations = runAnnotations(outcome, "/repo");
  assert.deepEqual(annotations[0], {
    level: "error", title: "s/pricey", file: "tasks/s/pricey.yaml",
    message: "stopped: the task's cost budget of $0.0100 is spent ($0.0123): stopped before the next model request",
  });
  assert.match(annotations.at(-1)!.message, /^2 task\(s\): 1 passed, 0 failed, 0 errored, 1 stopped on a budget;/);
});
