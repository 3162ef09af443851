/**
 * `report merge` and trials, through real run directories: the shards' manifests give the merged
 * reports each task's planned trials and gate, `--pass-at` and `--junit-cases` shape them, and a
 * task whose trials are in two shards (a result in one, an unfinished trial in the other) is refused.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { mergeRunReports } from "../../../src/runner/reports/report-merge.js";
import { writeReports } from "../../../src/runner/reports/run-reports.js";
import { parseStatsReport } from "../../../src/runner/reports/stats-report.js";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import type { TaskResult, UnfinishedTask } from "../../../src/runner/run-dir/task-result.js";
import type { ReportMeta } from "../../../src/runner/reports/report-meta.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleMeta, sampleResult } from "../sample-results.js";

/** A shard's run directory: its results and transcripts, a manifest planning `trials` per task, its reports. */
async function writeShard(dir: string, shard: string, results: TaskResult[], plans: { id: string; trials: number }[], unfinished: UnfinishedTask[] = []): Promise<void> {
  const run = new RunDir(dir);
  await mkdir(dir, { recursive: true });
  await run.writeManifest({
    version: 1, layout: 2, runId: `run-${shard}`, startedAt: "2025-01-02T03:00:00.000Z", resumes: 0, activeMs: 0, hashScheme: "content-v2", shard,
    tasks: plans.map((p) => ({ suite: "s", id: p.id, file: `/repo/tasks/s/${p.id}.yaml`, contentHash: "ab".repeat(32), trials: p.trials, gate: { kind: "rate", min: 0.5, judgedOn: "rate" } })),
  });
  for (const result of results) {
    await run.folderOf(result).writeResult(result);
    await mkdir(dirname(join(dir, result.transcriptPath)), { recursive: true });
    await writeFile(join(dir, result.transcriptPath), "{}\n");
  }
  const meta: ReportMeta = sampleMeta({ runId: `run-${shard}`, shard, unfinished });
  await writeReports(dir, results, meta);
}

const pending = (id: string, repeat: number, state: UnfinishedTask["state"]): UnfinishedTask =>
  ({ suite: "s", id, file: `/repo/tasks/s/${id}.yaml`, trial: { repeat, variant: null }, state });

test("report merge carries the shards' trial plans, --pass-at and --junit-cases into the merged reports", async (t) => {
  const root = await tempDir(t);
  const a = join(root, "a");
  const b = join(root, "b");
  // Shard 1 holds task one (trial 1 of 3 passed, trials 2 and 3 skipped by the early stop); shard 2 task two.
  await writeShard(a, "1/2", [{ ...sampleResult("s", "one", "passed", 1), trial: { repeat: 1, variant: null } }], [{ id: "one", trials: 3 }],
    [pending("one", 2, "gate_decided"), pending("one", 3, "gate_decided")]);
  await writeShard(b, "2/2", [{ ...sampleResult("s", "two", "failed", 2), trial: { repeat: 1, variant: null } }], [{ id: "two", trials: 1 }]);
  const out = join(root, "merged");
  await mergeRunReports([a, b], out, { passAt: [1, 2], junitCases: "trial" });
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.deepEqual(stats.taskTrials.map((e) => [e.id, e.trials, e.counted, e.gateDecided, e.status, e.passAt.map((at) => at.value ?? at.why)]), [
    ["one", 3, 1, 2, "passed", [1, "n<k"]],
    ["two", 1, 1, 0, "failed", [0, "n<k"]],
  ]);
  assert.deepEqual(stats.taskTrials.map((e) => e.gate), [{ kind: "rate", min: 0.5, judgedOn: "rate" }, { kind: "rate", min: 0.5, judgedOn: "rate" }], "the manifests' gates");
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.deepEqual([...junit.matchAll(/<testcase [^>]* name="([^"]+)"/g)].map((m) => m[1]), ["one#1", "one#2", "one#3", "two"]);
  assert.match(await readFile(join(out, "summary.md"), "utf8"), /\| pass@1 \| pass\^1 \| pass@2 \| pass\^2 \|/);
});

test("report merge refuses a task whose trials are in two shards", async (t) => {
  const root = await tempDir(t);
  const a = join(root, "a");
  const b = join(root, "b");
  await writeShard(a, "1/2", [{ ...sampleResult("s", "one", "passed", 1), trial: { repeat: 1, variant: null } }], [{ id: "one", trials: 2 }]);
  await writeShard(b, "2/2", [], [{ id: "one", trials: 2 }], [pending("one", 2, "not_started")]);
  await assert.rejects(mergeRunReports([a, b], join(root, "merged")), (err: Error) => {
    assert.match(err.message, new RegExp(`^Task s/one is in two run directories: ${a} and ${b}`));
    return true;
  });
});
