import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { sumResultStats } from "../../../src/runner/pricing/cost-figures.js";
import { writeReports } from "../../../src/runner/reports/run-reports.js";
import { buildStatsReport, renderStatsReport, statsJsonSchema, statsReportSchema } from "../../../src/runner/reports/stats-report.js";
import { repoRoot } from "../../support/paths.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleMeta, sampleResult, sampleRun } from "../sample-results.js";

test("the committed schema/stats.schema.json equals the one generated from the zod schema", async () => {
  const committed = JSON.parse(await readFile(join(repoRoot, "schema/stats.schema.json"), "utf8"));
  assert.deepStrictEqual(committed, statsJsonSchema(), "run `npm run build && node scripts/gen-schemas.mjs`");
});

test("a written stats.json validates against the schema", async (t) => {
  const runDir = await tempDir(t);
  await writeReports(runDir, sampleRun(), sampleMeta({ skipped: [{ suite: "zeta", id: "later", file: "/f.yaml", reason: "filter" }] }));
  const written = JSON.parse(await readFile(join(runDir, "stats.json"), "utf8"));
  assert.deepStrictEqual(statsReportSchema.parse(written), written);
});

test("counts, durations, steps and denials in total and per suite", () => {
  const report = buildStatsReport(sampleRun(), sampleMeta({ skipped: [{ suite: "zeta", id: "later", file: "/f.yaml", reason: "tag" }] }));
  assert.equal(report.runId, "run-1");
  assert.equal(report.wallTimeMs, 30 * 60_000);
  assert.deepStrictEqual(report.total.counts, { tasks: 9, passed: 6, failed: 2, errored: 1, stopped: 0, skipped: 1, interrupted: 0, notStarted: 0 });
  assert.equal(report.total.durationMs, 9 * 1_000 + 1_234 * 36);
  assert.equal(report.total.steps, 9 * 2 + 36);
  assert.equal(report.total.policyDenials, 2 * 5);
  assert.equal(report.total.resumed, 3);
  assert.deepStrictEqual(report.suites.map((s) => [s.suite, s.counts.tasks, s.counts.skipped]), [["arithmetic", 3, 0], ["strings", 3, 0], ["zeta", 3, 1]]);
  assert.deepStrictEqual(report.skipped, [{ suite: "zeta", id: "later", file: "/f.yaml", reason: "tag" }]);
});

test("TranscriptStats are summed per suite and in total; tasks without a transcript are left out", () => {
  const results = sampleRun();
  const report = buildStatsReport(results, sampleMeta());
  const statsOf = (suite?: string) => results.filter((r) => (suite === undefined || r.suite === suite) && r.stats !== null).map((r) => r.stats!);
  assert.deepStrictEqual(report.total.stats, sumResultStats(statsOf()));
  assert.deepStrictEqual(report.suites[0]!.stats, sumResultStats(statsOf("arithmetic")));
  assert.equal(report.tasks.find((t) => t.id === "task-03")!.stats, null);
});

test("per-task entries are ordered by suite then id and say what failed", () => {
  const report = buildStatsReport([...sampleRun()].reverse(), sampleMeta());
  assert.deepStrictEqual(report.tasks.map((t) => `${t.suite}/${t.id}`).slice(0, 3), ["arithmetic/task-00", "arithmetic/task-03", "arithmetic/task-06"]);
  const errored = report.tasks.find((t) => t.id === "task-03")!;
  assert.deepStrictEqual([errored.status, errored.errorCode, errored.failedChecks], ["errored", "step_cap", []]);
  const failed = report.tasks.find((t) => t.id === "task-01")!;
  assert.deepStrictEqual([failed.status, failed.errorCode, failed.failedChecks], ["failed", null, ["unit tests"]]);
});

test("a run where no task had a transcript has null stats", () => {
  const results = [sampleResult("s", "a", "passed", 3), sampleResult("s", "b", "passed", 7)];
  const report = buildStatsReport(results, sampleMeta());
  assert.equal(report.total.stats, null);
  assert.equal(report.suites[0]!.stats, null);
});

test("tasks without a result are counted and listed as interrupted or not started", () => {
  const unfinished = [
    { suite: "zeta", id: "running", file: "/r.yaml", state: "interrupted" as const },
    { suite: "arithmetic", id: "queued", file: "/q.yaml", state: "not_started" as const },
    { suite: "zeta", id: "other", file: "/o.yaml", state: "not_selected" as const },
  ];
  const report = buildStatsReport(sampleRun(), sampleMeta({ unfinished }));
  assert.deepStrictEqual(report.total.counts, { tasks: 9, passed: 6, failed: 2, errored: 1, stopped: 0, skipped: 0, interrupted: 1, notStarted: 2 });
  assert.deepStrictEqual(report.suites.map((s) => [s.suite, s.counts.interrupted, s.counts.notStarted]), [["arithmetic", 0, 1], ["strings", 0, 0], ["zeta", 1, 1]]);
  assert.deepStrictEqual(report.unfinished.map((u) => `${u.suite}/${u.id} ${u.state}`), ["arithmetic/queued not_started", "zeta/other not_selected", "zeta/running interrupted"]);
  assert.deepStrictEqual(statsReportSchema.parse(JSON.parse(JSON.stringify(report))), report);
});

test("the wall time is the run's recorded active time when meta has it, not the span since the first start", () => {
  assert.equal(buildStatsReport(sampleRun(), sampleMeta({ wallTimeMs: 12_345 })).wallTimeMs, 12_345);
  assert.equal(buildStatsReport(sampleRun(), sampleMeta()).wallTimeMs, 30 * 60_000);
});

test("the sandbox per task, and per suite and in total the weakest any task ran in (none, then off, then bwrap) with counts", () => {
  const bwrap = { ...sampleResult("a", "t1", "passed", 1), sandbox: { mode: "bwrap" as const, network: "deny" as const } };
  const off = { ...sampleResult("a", "t2", "passed", 2), sandbox: { mode: "off" as const, network: "allow" as const } };
  const none = { ...sampleResult("b", "t3", "passed", 3), sandbox: { mode: "none" as const, network: "allow" as const, reason: "no bwrap", fix: "install it" } };
  const old = sampleResult("c", "t4", "passed", 4);
  const report = buildStatsReport([bwrap, off, none, old], sampleMeta());
  assert.deepEqual(report.tasks.map((t) => t.sandbox), [bwrap.sandbox, off.sandbox, none.sandbox, null]);
  assert.deepEqual(report.total.sandbox, { mode: "none", reason: "no bwrap", fix: "install it", tasks: { bwrap: 1, none: 1, off: 1 } });
  assert.deepEqual(report.suites.map((s) => [s.suite, s.sandbox]), [
    ["a", { mode: "off", tasks: { bwrap: 1, none: 0, off: 1 } }],
    ["b", { mode: "none", reason: "no bwrap", fix: "install it", tasks: { bwrap: 0, none: 1, off: 0 } }],
    ["c", null],
  ]);
  assert.deepEqual(buildStatsReport([bwrap], sampleMeta()).total.sandbox, { mode: "bwrap", tasks: { bwrap: 1, none: 0, off: 0 } });
  statsReportSchema.parse(report);
});

test("a task stopped on a budget is counted apart as stopped, with the budget named, neither failed nor errored", () => {
  const report = buildStatsReport([...sampleRun(), sampleResult("zeta", "pricey", "stopped", 2)], sampleMeta());
  assert.deepStrictEqual(report.total.counts, { tasks: 10, passed: 6, failed: 2, errored: 1, stopped: 1, skipped: 0, interrupted: 0, notStarted: 0 });
  assert.equal(report.suites.find((s) => s.suite === "zeta")!.counts.stopped, 1);
  const entry = report.tasks.find((t) => t.id === "pricey")!;
  assert.deepStrictEqual([entry.status, entry.errorCode, entry.budget], ["stopped", "budget", { scope: "task", measure: "cost", limit: 0.01, spent: 0.0123 }]);
  assert.deepStrictEqual(statsReportSchema.parse(JSON.parse(renderStatsReport(report))), report);
});
