import assert from "node:assert/strict";
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { RhemaError } from "../../../src/core/errors.js";
import { mergeRunReports } from "../../../src/runner/reports/report-merge.js";
import { writeReports } from "../../../src/runner/reports/run-reports.js";
import { loadTasks, type LoadedTasks } from "../../../src/runner/tasks/suite-loader.js";
import type { TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import { TaskResultFileError, type TaskResult } from "../../../src/runner/run-dir/task-result.js";
import { type ReportMeta } from "../../../src/runner/reports/report-meta.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleResult } from "../sample-results.js";

const T0 = "2025-01-02T03:00:00.000Z";
const T1 = "2025-01-02T03:30:00.000Z";
const REPORTS = ["junit.xml", "stats.json", "summary.md"];

/** A deterministic result for a task, whatever shard runs it. */
function resultFor(task: TaskDefinition): TaskResult {
  const seed = [...`${task.suite}/${task.id}`].reduce((sum, ch) => sum + ch.charCodeAt(0), 0) % 9;
  const status = seed === 4 ? "errored" : seed % 3 === 1 ? "failed" : "passed";
  return { ...sampleResult(task.suite, task.id, status, seed), file: task.file, tags: task.tags };
}

/** Writes a run directory as the executor would: results, transcripts, reports. */
async function writeRun(runDir: string, loaded: LoadedTasks, meta: Omit<ReportMeta, "skipped">): Promise<TaskResult[]> {
  const results = loaded.tasks.map(resultFor);
  for (const result of results) {
    await new RunDir(runDir).task(result).writeResult(result);
    await mkdir(dirname(join(runDir, result.transcriptPath)), { recursive: true });
    await writeFile(join(runDir, result.transcriptPath), `{"transcript":"${result.id}"}\n`);
  }
  await writeReports(runDir, results, { ...meta, skipped: loaded.skipped });
  return results;
}

async function makeSuites(root: string): Promise<string> {
  for (const suite of ["alpha", "beta", "gamma", "delta"]) {
    for (let n = 1; n <= 5; n++) {
      const file = join(root, "suites", suite, `task-${n}.yaml`);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, `prompt: task ${n}\ntags: [${n === 5 ? "slow" : "fast"}]\n`);
    }
  }
  return join(root, "suites");
}

async function readReports(dir: string): Promise<string[]> {
  return Promise.all(REPORTS.map((name) => readFile(join(dir, name), "utf8")));
}

/** An unsharded run and three shard runs of the same suites (with tasks skipped by tag). */
async function shardedAndWhole(t: Parameters<typeof tempDir>[0]) {
  const root = await tempDir(t);
  const suites = await makeSuites(root);
  const selection = { cwd: root, tags: ["fast"] };
  const whole = join(root, "whole");
  await writeRun(whole, await loadTasks([suites], selection), { runId: "run-1", startedAt: T0, finishedAt: T1 });
  const shards: string[] = [];
  for (const index of [1, 2, 3]) {
    const dir = join(root, `shard-${index}`);
    const loaded = await loadTasks([suites], { ...selection, shard: { index, count: 3 } });
    // Shard 2 ran longest, from the run's start to its end: the merged wall time is the longest shard's.
    await writeRun(dir, loaded, {
      runId: `run-1-shard-${index}`,
      startedAt: index === 2 ? T0 : "2025-01-02T03:01:00.000Z",
      finishedAt: index === 2 ? T1 : "2025-01-02T03:20:00.000Z",
    });
    shards.push(dir);
  }
  return { root, whole, shards };
}

describe("report merge", () => {
  test("merging shards 1/3, 2/3, 3/3 gives the unsharded run's reports, byte for byte", async (t) => {
    const { root, whole, shards } = await shardedAndWhole(t);
    const out = join(root, "merged");
    const outcome = await mergeRunReports(shards, out, { runId: "run-1" });
    assert.deepStrictEqual(await readReports(out), await readReports(whole));
    assert.deepStrictEqual(outcome.meta.startedAt, T0);
    assert.deepStrictEqual(outcome.meta.finishedAt, T1);
    assert.equal(outcome.results.length, 16);
    assert.equal(outcome.meta.skipped?.length, 4);
    assert.deepStrictEqual(outcome.missingTranscripts, []);
    for (const name of REPORTS) assert.equal((await stat(join(out, name))).mode & 0o777, 0o600, name);
  });

  test("without a run id the shards' ids are joined; nothing else differs", async (t) => {
    const { root, whole, shards } = await shardedAndWhole(t);
    const out = join(root, "merged");
    const outcome = await mergeRunReports([...shards].reverse(), out);
    const mergedId = "run-1-shard-1+run-1-shard-2+run-1-shard-3";
    assert.equal(outcome.meta.runId, mergedId);
    const merged = await readReports(out);
    const expected = (await readReports(whole)).map((text) => text.replaceAll("run-1", mergedId));
    assert.deepStrictEqual(merged, expected);
  });

  test("the merged directory holds the results and transcripts, and can be merged again", async (t) => {
    const { root, shards } = await shardedAndWhole(t);
    const out = join(root, "merged");
    const first = await mergeRunReports(shards, out, { runId: "run-1" });
    for (const result of first.results) {
      assert.equal(await readFile(join(out, result.transcriptPath), "utf8"), `{"transcript":"${result.id}"}\n`);
      assert.equal((await stat(new RunDir(out).task(result).path("result"))).mode & 0o777, 0o600);
    }
    const again = join(root, "merged-again");
    await mergeRunReports([out], again);
    assert.deepStrictEqual(await readReports(again), await readReports(out));
  });

  test("a task present in two shards is an error naming both directories", async (t) => {
    const { root, shards } = await shardedAndWhole(t);
    const copy = join(root, "shard-1-copy");
    await cp(shards[0]!, copy, { recursive: true });
    const err = await mergeRunReports([shards[0]!, shards[1]!, copy], join(root, "out")).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof RhemaError && err.code === "result_invalid", String(err));
    assert.match(err.message, new RegExp(`^Task \\S+ is in two run directories: ${shards[0]} and ${copy}`));
  });

  test("a shard without stats.json is merged from its results; a missing transcript is reported", async (t) => {
    const { root, whole, shards } = await shardedAndWhole(t);
    await rm(join(shards[1]!, "stats.json"));
    const out = join(root, "merged");
    const outcome = await mergeRunReports(shards, out, { runId: "run-1" });
    const wholeStats = JSON.parse((await readReports(whole))[1]!);
    const mergedStats = JSON.parse((await readReports(out))[1]!);
    assert.deepStrictEqual(mergedStats.tasks, wholeStats.tasks);
    assert.ok(mergedStats.skipped.length < wholeStats.skipped.length, "shard 2's skipped tasks were only in its stats.json");
    assert.deepStrictEqual(outcome.missingTranscripts, []);
  });

  test("a transcript that is missing is reported, not fatal", async (t) => {
    const { root, shards } = await shardedAndWhole(t);
    const [suite] = await readdir(join(shards[0]!, "tasks"));
    const [id] = await readdir(join(shards[0]!, "tasks", suite!));
    const transcript = join(shards[0]!, "tasks", suite!, id!, "events.jsonl");
    await rm(transcript);
    const outcome = await mergeRunReports(shards, join(root, "merged"));
    assert.deepStrictEqual(outcome.missingTranscripts, [transcript]);
  });

  test("a corrupt result in a shard is an error naming the file", async (t) => {
    const { root, shards } = await shardedAndWhole(t);
    const [suite] = await readdir(join(shards[2]!, "tasks"));
    const [id] = await readdir(join(shards[2]!, "tasks", suite!));
    const path = new RunDir(shards[2]!).task({ suite: suite!, id: id! }).path("result");
    await writeFile(path, "{ torn");
    const err = await mergeRunReports(shards, join(root, "out")).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof TaskResultFileError);
    assert.equal(err.path, path);
  });

  test("bad directories are usage errors", async (t) => {
    const { root, shards } = await shardedAndWhole(t);
    const usage = async (promise: Promise<unknown>, pattern: RegExp) => {
      const err = await promise.then(() => null, (e: unknown) => e);
      assert.ok(err instanceof RhemaError && err.code === "usage", String(err));
      assert.match(err.message, pattern);
    };
    await usage(mergeRunReports([], join(root, "out")), /at least one run directory/);
    await usage(mergeRunReports([join(root, "nope")], join(root, "out")), /Run directory not found/);
    await usage(mergeRunReports(shards, shards[0]!), /is also an input/);
    await usage(mergeRunReports(["relative/dir"], join(root, "out")), /absolute path/);
  });
  test("a shard without stats.json is known by its manifest's shard; without either it records none", async (t) => {
    const root = await tempDir(t);
    const suites = await makeSuites(root);
    const dirs: string[] = [];
    for (const index of [1, 2]) {
      const dir = join(root, `shard-${index}`);
      await writeRun(dir, await loadTasks([suites], { cwd: root, shard: { index, count: 2 } }), { runId: `r${index}`, startedAt: T0, finishedAt: T1, shard: `${index}/2` });
      dirs.push(dir);
    }
    // Shard 2 was killed before its first report: only its manifest says which shard it is.
    await rm(join(dirs[1]!, "stats.json"));
    await new RunDir(dirs[1]!).writeManifest({ version: 1, runId: "r2", startedAt: T0, resumes: 0, activeMs: 0, hashScheme: "content-v2", shard: "2/2", tasks: [] });
    const outcome = await mergeRunReports(dirs, join(root, "merged"));
    assert.deepStrictEqual(outcome.meta.shards, { count: 2, merged: ["1/2", "2/2"], missing: [] });
    // Without the manifest it records no shard: beside a sharded input that needs --allow-partial.
    await rm(join(dirs[1]!, "manifest.json"));
    const err = await mergeRunReports(dirs, join(root, "merged-2")).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof RhemaError && err.code === "usage", String(err));
    assert.match(err.message, new RegExp(`record no shard .*: ${dirs[1]}; the others are shards of 2: ${dirs[0]} \\(shard 1/2\\)`));
    const partial = await mergeRunReports(dirs, join(root, "merged-3"), { allowPartial: true });
    assert.deepStrictEqual(partial.meta.shards, { count: 2, merged: ["1/2"], missing: ["2/2"] });
  });
});
