/** A run directory: where its own files are, its results read back sorted, paths inside it kept inside. */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { test } from "node:test";
import { RunDir, readRunResults } from "../../../src/runner/run-dir/run-dir.js";
import { TaskResultFileError } from "../../../src/runner/run-dir/task-result.js";
import { compareTasks } from "../../../src/runner/tasks/task-key.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleResult, sampleRun } from "../sample-results.js";

test("names its own files and its task folders", () => {
  const run = new RunDir("/runs/r");
  assert.deepEqual(
    { manifest: run.manifestPath, lock: run.lockPath, reports: run.reports, task: run.task({ suite: "s", id: "x" }).dir },
    {
      manifest: "/runs/r/manifest.json", lock: "/runs/r/rhema.lock",
      reports: { junit: "/runs/r/junit.xml", stats: "/runs/r/stats.json", summary: "/runs/r/summary.md" },
      task: "/runs/r/tasks/s/x",
    },
  );
});

test("a run's results are read sorted by suite then id; unfinished tasks are passed over", async (t) => {
  const run = new RunDir(await tempDir(t));
  const results = sampleRun();
  for (const result of [...results].reverse()) await run.task(result).writeResult(result);
  await mkdir(run.task({ suite: "zeta", id: "unfinished" }).dir, { recursive: true });
  assert.deepStrictEqual(await run.readResults(), [...results].sort(compareTasks));
  assert.deepStrictEqual(await readRunResults(run.path), [...results].sort(compareTasks));
});

test("a result in the wrong folder is an error; a run without tasks/ has no results", async (t) => {
  const run = new RunDir(await tempDir(t));
  assert.deepStrictEqual(await run.readResults(), []);
  const misplaced = run.task({ suite: "other", id: "x" });
  await mkdir(misplaced.dir, { recursive: true });
  await writeFile(misplaced.path("result"), JSON.stringify(sampleResult("s", "x", "passed")));
  await assert.rejects(run.readResults(), (err: unknown) =>
    err instanceof TaskResultFileError && err.path === misplaced.path("result") && /holds s\/x, not other\/x/.test(err.message));
});

test("a report reads back as written, or null when there is none", async (t) => {
  const run = new RunDir(await tempDir(t));
  assert.equal(await run.readReport("stats"), null);
  await writeFile(run.reports.stats, "{}\n");
  assert.equal(await run.readReport("stats"), "{}\n");
});

test("a relative path resolves inside the run directory, or not at all", () => {
  const run = new RunDir("/runs/r");
  assert.deepEqual(
    ["tasks/s/x/default/1/events.jsonl", "tasks/../tasks/s/x/default/1/events.jsonl", "..foo/events.jsonl", "", ".", "../other/events.jsonl", "tasks/../../etc/passwd", "/etc/passwd"].map((p) => run.resolveInside(p)),
    ["/runs/r/tasks/s/x/default/1/events.jsonl", "/runs/r/tasks/s/x/default/1/events.jsonl", "/runs/r/..foo/events.jsonl", null, null, null, null, null],
  );
});
