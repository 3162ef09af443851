import assert from "node:assert/strict";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { test } from "node:test";
import {
  TaskResultFileError, compareTasks, readRunResults, readTaskResult, taskResultPath, writeTaskResult,
} from "../../../src/runner/run-dir/task-result.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleResult, sampleRun } from "../sample-results.js";

async function resultErrorOf(promise: Promise<unknown>): Promise<TaskResultFileError> {
  const err = await promise.then(() => null, (e: unknown) => e);
  assert.ok(err instanceof TaskResultFileError, `expected a TaskResultFileError, got ${String(err)}`);
  assert.equal(err.code, "result_invalid");
  return err;
}

test("a written result reads back whole, 0600 in 0700 folders", async (t) => {
  const runDir = await tempDir(t);
  const result = sampleResult("arithmetic", "fix-add", "failed", 2);
  const path = await writeTaskResult(runDir, result);
  assert.equal(path, join(runDir, "tasks/arithmetic/fix-add/result.json"));
  assert.deepStrictEqual(await readTaskResult(path), result);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(dirname(path))).mode & 0o777, 0o700);
  assert.equal((await stat(join(runDir, "tasks"))).mode & 0o777, 0o700);
});

test("a corrupt result file is a clear error naming it", async (t) => {
  const path = join(await tempDir(t), "result.json");
  await writeFile(path, '{"version": 1, "suite": ');
  const err = await resultErrorOf(readTaskResult(path));
  assert.match(err.message, new RegExp(`^${path}: not valid JSON`));
  assert.equal(err.path, path);
});

test("a result of the wrong shape names the field", async (t) => {
  const path = join(await tempDir(t), "result.json");
  const { steps: _steps, ...withoutSteps } = sampleResult("s", "x", "passed");
  await writeFile(path, JSON.stringify(withoutSteps));
  assert.match((await resultErrorOf(readTaskResult(path))).message, /not a task result: steps: /);
  await writeFile(path, JSON.stringify({ ...sampleResult("s", "x", "passed"), version: 99 }));
  assert.match((await resultErrorOf(readTaskResult(path))).message, /version/);
});

test("an inconsistent result is refused on write", async (t) => {
  const runDir = await tempDir(t);
  const { error: _error, ...erroredWithoutError } = sampleResult("s", "x", "errored");
  await resultErrorOf(writeTaskResult(runDir, erroredWithoutError));
  await resultErrorOf(writeTaskResult(runDir, { ...sampleResult("s", "y", "passed"), status: "failed" }));
  await resultErrorOf(writeTaskResult(runDir, { ...sampleResult("s", "z", "failed"), status: "passed" }));
  await assert.rejects(readFile(taskResultPath(runDir, "s", "x")), { code: "ENOENT" });
});

test("a run's results are read sorted by suite then id; unfinished tasks are passed over", async (t) => {
  const runDir = await tempDir(t);
  const results = sampleRun();
  for (const result of [...results].reverse()) await writeTaskResult(runDir, result);
  await mkdir(join(runDir, "tasks/zeta/unfinished"), { recursive: true });
  const read = await readRunResults(runDir);
  assert.deepStrictEqual(read, [...results].sort(compareTasks));
});

test("a result in the wrong folder is an error; a run without tasks/ has no results", async (t) => {
  const runDir = await tempDir(t);
  assert.deepStrictEqual(await readRunResults(runDir), []);
  const misplaced = taskResultPath(runDir, "other", "x");
  await mkdir(dirname(misplaced), { recursive: true });
  await writeFile(misplaced, JSON.stringify(sampleResult("s", "x", "passed")));
  assert.match((await resultErrorOf(readRunResults(runDir))).message, /holds s\/x, not other\/x/);
});
