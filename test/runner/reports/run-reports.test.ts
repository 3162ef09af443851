import assert from "node:assert/strict";
import { chmod, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { OutputError, RhemaError } from "../../../src/core/errors.js";
import { ReportWriter, renderReports, writeReports } from "../../../src/runner/reports/run-reports.js";
import { parseStatsReport } from "../../../src/runner/reports/stats-report.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleMeta, sampleResult, sampleRun } from "../sample-results.js";

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

test("writes junit.xml, stats.json and summary.md 0600 in a 0700 run directory", async (t) => {
  const runDir = join(await tempDir(t), "runs/latest");
  const files = await writeReports(runDir, sampleRun(), sampleMeta());
  assert.deepStrictEqual(files, { junit: join(runDir, "junit.xml"), stats: join(runDir, "stats.json"), summary: join(runDir, "summary.md") });
  const rendered = renderReports(sampleRun(), sampleMeta());
  for (const kind of ["junit", "stats", "summary"] as const) {
    assert.equal(await readFile(files[kind], "utf8"), rendered[kind]);
    assert.equal(await modeOf(files[kind]), 0o600, kind);
  }
  assert.equal(await modeOf(runDir), 0o700);
});

test("the reports do not depend on the order results finished in", () => {
  const results = sampleRun();
  const shuffled = [results[4]!, results[8]!, results[0]!, results[2]!, results[7]!, results[1]!, results[6]!, results[3]!, results[5]!];
  assert.deepStrictEqual(renderReports(shuffled, sampleMeta()), renderReports(results, sampleMeta()));
});

test("two results for one trial are refused", () => {
  const twice = [sampleResult("s", "x", "passed"), sampleResult("s", "x", "failed")];
  assert.throws(() => renderReports(twice, sampleMeta()), (err: unknown) => err instanceof RhemaError && /two results for s\/x trial 1/.test(err.message));
  const trial = (repeat: number, status: "passed" | "failed") => ({ ...sampleResult("s", "x", status), trial: { repeat, variant: null } });
  assert.throws(() => renderReports([trial(2, "passed"), trial(2, "failed")], sampleMeta()), /two results for s\/x trial 2/);
});

test("the trials of one task are one result each, not two results for the task", () => {
  const trial = (repeat: number, status: "passed" | "failed") => ({ ...sampleResult("s", "x", status), trial: { repeat, variant: null } });
  assert.doesNotThrow(() => renderReports([trial(2, "failed"), trial(1, "passed")], sampleMeta()));
});

test("copies for --junit/--stats/--summary are 0600 and leave the user's folder mode alone", async (t) => {
  const root = await tempDir(t);
  const userDir = join(root, "ci-out");
  await mkdir(userDir);
  await chmod(userDir, 0o755);
  const copies = { junit: join(userDir, "junit.xml"), stats: join(root, "new/deep/stats.json"), summary: join(userDir, "summary.md") };
  await writeReports(join(root, "run"), sampleRun(), sampleMeta(), copies);
  for (const kind of ["junit", "stats", "summary"] as const) {
    assert.equal(await readFile(copies[kind], "utf8"), await readFile(join(root, "run", kind === "junit" ? "junit.xml" : kind === "stats" ? "stats.json" : "summary.md"), "utf8"));
    assert.equal(await modeOf(copies[kind]), 0o600);
  }
  assert.equal(await modeOf(userDir), 0o755);
});

test("a ReportWriter coalesces overlapping writes and ends with the latest results", async (t) => {
  const runDir = await tempDir(t);
  const written: number[] = [];
  const writer = new ReportWriter(runDir, {}, async (...args) => {
    written.push(args[1].length);
    return await writeReports(...args);
  });
  const all = sampleRun();
  const writes = all.map((_, index) => writer.write(all.slice(0, index + 1), sampleMeta()));
  await Promise.all(writes);
  // Nine writes asked while none had started: one set of reports, the newest, is written.
  assert.deepEqual(written, [all.length]);
  const stats = parseStatsReport(await readFile(join(runDir, "stats.json"), "utf8"));
  assert.equal(stats.total.counts.tasks, all.length);
  await writer.write(all.slice(0, 2), sampleMeta({ finishedAt: "2025-01-02T04:00:00.000Z" }));
  const later = parseStatsReport(await readFile(join(runDir, "stats.json"), "utf8"));
  assert.deepStrictEqual([later.total.counts.tasks, later.finishedAt], [2, "2025-01-02T04:00:00.000Z"]);
  assert.deepEqual(written, [all.length, 2]);
});

test("a ReportWriter reports a failed write and keeps working", async (t) => {
  const root = await tempDir(t);
  const blocker = join(root, "blocker");
  await writeFile(blocker, "a file where the run directory's parent should be");
  const writer = new ReportWriter(join(blocker, "run"));
  await assert.rejects(writer.write(sampleRun(), sampleMeta()), (err: unknown) =>
    err instanceof OutputError && err.errno === "ENOTDIR" && err.operation === "write" && err.path === join(blocker, "run/junit.xml"));
  await rm(blocker);
  await writer.write(sampleRun(), sampleMeta());
  assert.equal(await modeOf(join(blocker, "run/junit.xml")), 0o600);
});
