/** result.json's shape: parsed and validated both ways, each problem named with the file. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { TaskResultFileError, checkTaskResult, parseTaskResult, resultJsonSchema } from "../../../src/runner/run-dir/task-result.js";
import { repoRoot } from "../../support/paths.js";
import { sampleResult } from "../sample-results.js";

test("the committed schema/result.schema.json equals the one generated from the zod schema, and says unpriced stats are null", async () => {
  const committed = JSON.parse(await readFile(join(repoRoot, "schema/result.schema.json"), "utf8")) as { properties: { stats: { anyOf: { type?: string; properties: { costUsd: { anyOf: { type: string }[] } } }[] } } };
  assert.deepStrictEqual(committed, resultJsonSchema());
  const stats = committed.properties.stats.anyOf.find((s) => s.type === "object")!;
  assert.deepEqual(stats.properties.costUsd.anyOf.map((s) => s.type), ["number", "null"]);
});

const PATH = "/runs/r/tasks/s/x/default/1/result.json";

function resultErrorOf(fn: () => unknown): TaskResultFileError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof TaskResultFileError, `expected a TaskResultFileError, got ${String(err)}`);
    assert.equal(err.code, "result_invalid");
    assert.equal(err.path, PATH);
    return err;
  }
  assert.fail("expected a TaskResultFileError");
}

test("a result's text parses back whole", () => {
  const result = sampleResult("s", "x", "errored", 3);
  assert.deepStrictEqual(parseTaskResult(JSON.stringify(result), PATH), result);
});

test("text that is not JSON is an error naming the file", () => {
  assert.match(resultErrorOf(() => parseTaskResult('{"version": 1, "suite": ', PATH)).message, new RegExp(`^${PATH}: not valid JSON`));
  assert.match(resultErrorOf(() => parseTaskResult("", PATH)).message, /not valid JSON \(the file is empty\)/);
});

test("a result of the wrong shape names the field", () => {
  const { steps: _steps, ...withoutSteps } = sampleResult("s", "x", "passed");
  assert.match(resultErrorOf(() => parseTaskResult(JSON.stringify(withoutSteps), PATH)).message, /not a task result: steps: /);
  assert.match(resultErrorOf(() => parseTaskResult(JSON.stringify({ ...sampleResult("s", "x", "passed"), version: 99 }), PATH)).message, /version/);
});

test("an inconsistent result is refused for writing", () => {
  const { error: _error, ...erroredWithoutError } = sampleResult("s", "x", "errored");
  assert.match(resultErrorOf(() => checkTaskResult(erroredWithoutError, PATH)).message, /refusing to write an invalid result: error: /);
  resultErrorOf(() => checkTaskResult({ ...sampleResult("s", "y", "passed"), status: "failed" }, PATH));
  resultErrorOf(() => checkTaskResult({ ...sampleResult("s", "z", "failed"), status: "passed" }, PATH));
});

test("a result's cost parses back whole; unpriced is null, and a negative or missing figure names the field", () => {
  const prices = { source: "@pydantic/genai-prices", version: "0.1.8", pricingFile: null };
  const cost = { usd: null, workerUsd: 0, unpricedRequests: 3, pricedAs: null, workerPricedAs: null, simulated: false, prices };
  const result = { ...sampleResult("s", "x", "passed"), cost };
  assert.deepStrictEqual(parseTaskResult(JSON.stringify(result), PATH), result);
  assert.match(resultErrorOf(() => parseTaskResult(JSON.stringify({ ...result, cost: { ...cost, usd: -1 } }), PATH)).message, /not a task result: cost\.usd: /);
  const { prices: _prices, ...withoutPrices } = cost;
  assert.match(resultErrorOf(() => parseTaskResult(JSON.stringify({ ...result, cost: withoutPrices }), PATH)).message, /cost\.prices: /);
});

test("a stopped result names its budget, has the budget error code and ran no checks; anything else is refused", () => {
  const stopped = sampleResult("s", "x", "stopped");
  assert.deepStrictEqual(parseTaskResult(JSON.stringify(stopped), PATH), stopped);
  const { budget: _budget, ...withoutBudget } = stopped;
  assert.match(resultErrorOf(() => checkTaskResult(withoutBudget, PATH)).message, /budget: budget is present exactly when status is stopped/);
  assert.match(resultErrorOf(() => checkTaskResult({ ...sampleResult("s", "y", "errored"), budget: stopped.budget! }, PATH)).message, /budget: /);
  assert.match(resultErrorOf(() => checkTaskResult({ ...stopped, error: { code: "timeout", message: "late" } }, PATH)).message, /error\.code: a stopped task's error code is budget/);
  assert.match(resultErrorOf(() => checkTaskResult({ ...stopped, checks: sampleResult("s", "z", "passed").checks }, PATH)).message, /checks: a stopped task ran no checks/);
});
