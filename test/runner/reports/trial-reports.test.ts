/**
 * The reports of repeated tasks (issue 21), written to real files: a 5-trial flaky task built by
 * hand (passes on trials 1, 3 and 5; trial 2 fails a check, trial 4 errors) gives the figures
 * computed here by hand, junit.xml with Surefire flaky/rerun entries valid against the XSD,
 * stats.json and summary.md that agree; a one-trial run's junit.xml and summary.md are unchanged.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { validateXML } from "xmllint-wasm";
import { writeReports } from "../../../src/runner/reports/run-reports.js";
import { parseStatsReport } from "../../../src/runner/reports/stats-report.js";
import { groupTaskTrials, runTrialOutputs } from "../../../src/runner/reports/task-trials.js";
import type { TaskResult, UnfinishedTask } from "../../../src/runner/run-dir/task-result.js";
import type { ReportMeta } from "../../../src/runner/reports/report-meta.js";
import type { TrialGate } from "../../../src/runner/trials/trial-gate.js";
import { junitXsd } from "../../support/paths.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleMeta, sampleResult, sampleRun } from "../sample-results.js";

const PRICES = { source: "test", version: "1", pricingFile: null };

/** Trial `repeat` of flaky/task: `status`, `steps` steps, `usd` dollars. */
function trial(repeat: number, status: TaskResult["status"], usd: number, id = "flaky"): TaskResult {
  const result = sampleResult("suite", id, status, repeat);
  result.trial = { repeat, variant: null };
  result.transcriptPath = `tasks/suite/${id}/default/${repeat}/events.jsonl`;
  result.cost = { usd, workerUsd: 0, unpricedRequests: 0, pricedAs: "anthropic/claude-sonnet-4-5", workerPricedAs: null, simulated: false, prices: PRICES };
  return result;
}

/** Passes on 1, 3, 5; 2 fails its check; 4 errors (step_cap). Steps 3..7, costs 0.01..0.05. */
function flakyTrials(): TaskResult[] {
  const statuses: TaskResult["status"][] = ["passed", "failed", "passed", "errored", "passed"];
  return statuses.map((status, i) => trial(i + 1, status, (i + 1) / 100));
}

function meta(gate: TrialGate, overrides: Partial<ReportMeta> = {}): ReportMeta {
  return sampleMeta({ trialPlans: [{ suite: "suite", id: "flaky", trials: 5, gate }], passAt: [1, 3, 6], ...overrides });
}

interface Written {
  junit: string;
  stats: ReturnType<typeof parseStatsReport>;
  summary: string;
}

async function written(t: { after(fn: () => unknown): void }, results: TaskResult[], reportMeta: ReportMeta): Promise<Written> {
  const dir = await tempDir(t);
  await writeReports(dir, results, reportMeta);
  return {
    junit: await readFile(join(dir, "junit.xml"), "utf8"),
    stats: parseStatsReport(await readFile(join(dir, "stats.json"), "utf8")),
    summary: await readFile(join(dir, "summary.md"), "utf8"),
  };
}

async function assertValid(xml: string): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, result.rawOutput);
}

function testCases(xml: string): string[] {
  return [...xml.matchAll(/<testcase [^>]*?(?:\/>|>[\s\S]*?<\/testcase>)/g)].map((m) => m[0]);
}

// By hand, n = 5, c = 3, z = 1.959964: p = 0.6, z²/n = 0.768292,
// centre = (0.6 + 0.384146) / 1.768292 = 0.556552, half = z·√(0.048 + 0.038415) / 1.768292 = 0.325827.
const WILSON = { lower: 0.230724, upper: 0.882379 };
// pass@1 = 1 − C(2,1)/C(5,1) = 0.6; pass@3 = 1 − C(2,3)/C(5,3) = 1 (C(2,3) = 0); pass^1 = 0.6; pass^3 = C(3,3)/C(5,3) = 1/10.
// Cost per pass: (0.01 + 0.02 + 0.03 + 0.04 + 0.05) / 3 = 0.05. Steps: 3..7, mean 5, sample SD √(10/4) = 1.581139.

describe("reports of repeated tasks", () => {
  test("a 5-trial flaky task: pass rate, Wilson bounds, pass@k, pass^k, spreads and cost per pass as computed by hand", () => {
    const [task] = groupTaskTrials(flakyTrials(), meta({ kind: "rate", min: 0.6, judgedOn: "rate" }));
    const f = task!.figures;
    assert.equal(f.trials, 5);
    assert.equal(f.passes, 3);
    assert.equal(f.passRate!.rate, 0.6);
    assert.ok(Math.abs(f.passRate!.interval.lower - WILSON.lower) < 1e-5, String(f.passRate!.interval.lower));
    assert.ok(Math.abs(f.passRate!.interval.upper - WILSON.upper) < 1e-5, String(f.passRate!.interval.upper));
    assert.deepEqual(f.passAt.map((a) => [a.k, a.value === null ? "n<k" : Number(a.value.toFixed(6))]), [[1, 0.6], [3, 1], [6, "n<k"]]);
    assert.deepEqual(f.passPower.map((a) => [a.k, a.value === null ? "n<k" : Number(a.value.toFixed(6))]), [[1, 0.6], [3, 0.1], [6, "n<k"]]);
    assert.deepEqual({ ...f.steps!, sd: Number(f.steps!.sd!.toFixed(6)) }, { count: 5, mean: 5, sd: 1.581139, min: 3, max: 7 });
    assert.equal(f.costPerPass.kind, "usd");
    assert.ok(f.costPerPass.kind === "usd" && Math.abs(f.costPerPass.usd - 0.05) < 1e-12);
    assert.equal(f.flaky, true);
    assert.equal(task!.status, "passed");
  });

  test("gate passed with failed trials: one testcase, a flakyFailure and a flakyError, valid against the XSD; stats and summary agree", async (t) => {
    const out = await written(t, flakyTrials(), meta({ kind: "rate", min: 0.6, judgedOn: "rate" }));
    await assertValid(out.junit);
    const cases = testCases(out.junit);
    assert.equal(cases.length, 1, "one testcase per task");
    const tc = cases[0]!;
    assert.match(tc, /^<testcase classname="suite" name="flaky" time="[\d.]+" file="\/repo\/tasks\/suite\/flaky.yaml">/);
    assert.doesNotMatch(tc, /<failure|<error|<rerun/);
    assert.match(tc, /<flakyFailure message="trial 2\/5: check &quot;unit tests&quot; failed \(exit code 1\)[^"]*" type="check">\s*<stackTrace><!\[CDATA\[check: unit tests[\s\S]*?<\/stackTrace>\s*<system-out><!\[CDATA\[[\s\S]*?<\/system-out>\s*<\/flakyFailure>/);
    assert.match(tc, /<flakyError message="trial 4\/5: agent error step_cap: [^"]*" type="step_cap">\s*<stackTrace>/);
    assert.ok(tc.indexOf("<flakyError") < tc.lastIndexOf("<system-out>"), "rerun entries come before the testcase's system-out");
    assert.match(out.junit, /<testsuites name="rhema run run-1" tests="1" failures="0" errors="0"/);
    assert.match(out.junit, /<property name="task.flaky.passRateLower" value="0.231"\/>/);
    assert.match(tc, /\[\[PROPERTY\|pass\^3=0.100\]\]/);
    assert.match(tc, /trial 4\/5: errored — agent error step_cap/);

    const entry = out.stats.taskTrials[0]!;
    assert.deepEqual(
      { status: entry.status, counted: entry.counted, passes: entry.passes, flaky: entry.flaky, gatePassed: entry.gatePassed },
      { status: "passed", counted: 5, passes: 3, flaky: true, gatePassed: true },
    );
    assert.ok(Math.abs(entry.passRate!.lower - WILSON.lower) < 1e-5 && Math.abs(entry.passRate!.upper - WILSON.upper) < 1e-5);
    assert.deepEqual(entry.passPower.map((a) => a.value === null ? a.why : Number(a.value.toFixed(6))), [0.6, 0.1, "n<k"]);
    assert.deepEqual(out.stats.tasks.map((r) => r.trial?.repeat), [1, 2, 3, 4, 5]);
    assert.deepEqual({ ...out.stats.total.trials!, costPerPass: undefined }, {
      counted: 5, passes: 3, gateDecided: 0, passRate: entry.passRate, flakyTasks: 1,
      tasks: { passed: 1, failed: 0, errored: 0, stopped: 0, unfinished: 0 }, costPerPass: undefined,
    });

    assert.match(out.summary, /^### rhema run `run-1`: 1 of 1 task passed \(3 of 5 trials passed\)/);
    const row = out.summary.split("\n").find((line) => line.startsWith("| ✅ | `suite/flaky` | 3/5"));
    assert.equal(row, "| ✅ | `suite/flaky` | 3/5 | 60.0% (23.1%–88.2%) | 0.600 | 0.600 | 1.000 | 0.100 | n<k | n<k | ⚠️ flaky | \\$0.0500 | rate >= 0.6 |");
    assert.match(out.summary, /\| ❌ \| `suite\/flaky#2` \|/);
  });

  test("the summary's sandbox line counts trials, not tasks, when tasks repeat", async (t) => {
    const results = flakyTrials().map((r) => ({ ...r, sandbox: { mode: "bwrap" as const, network: "deny" as const } }));
    const out = await written(t, results, meta({ kind: "rate", min: 0.6, judgedOn: "rate" }));
    assert.match(out.summary, /\nSandbox: bwrap for 5 trials \(network deny for shell and checks\)\.\n/);
    assert.deepEqual(out.stats.total.sandbox?.tasks, { bwrap: 5, none: 0, off: 0 });
  });

  test("gate failed: <failure> of the first failed trial plus a rerunError per other, valid against the XSD", async (t) => {
    const out = await written(t, flakyTrials(), meta({ kind: "every" }));
    await assertValid(out.junit);
    const tc = testCases(out.junit)[0]!;
    assert.match(tc, /<failure message="trial 2\/5: check &quot;unit tests&quot; failed[^"]*" type="check">/);
    assert.match(tc, /<rerunError message="trial 4\/5: agent error step_cap: [^"]*" type="step_cap">\s*<stackTrace>/);
    assert.doesNotMatch(tc, /<flaky|<rerunFailure/);
    assert.match(out.junit, /<testsuites name="rhema run run-1" tests="1" failures="1" errors="0"/);
    assert.equal(out.stats.taskTrials[0]!.status, "failed");
    assert.match(out.summary, /^### rhema run `run-1`: 0 of 1 task passed \(3 of 5 trials passed\)/);
  });

  test("a second failed check trial is a rerunFailure; every counted trial errored is an <error> with rerunErrors", async (t) => {
    const failing = [trial(1, "failed", 0.01), trial(2, "passed", 0.01), trial(3, "failed", 0.01)];
    const plans = (n: number): Partial<ReportMeta> => ({ trialPlans: [{ suite: "suite", id: "flaky", trials: n, gate: { kind: "every" } }] });
    const out = await written(t, failing, meta({ kind: "every" }, plans(3)));
    await assertValid(out.junit);
    assert.match(testCases(out.junit)[0]!, /<failure message="trial 1\/3: [^"]*" type="check">[\s\S]*<rerunFailure message="trial 3\/3: [^"]*" type="check">/);

    const errored = await written(t, [trial(1, "errored", 0), trial(2, "errored", 0)], meta({ kind: "every" }, plans(2)));
    await assertValid(errored.junit);
    assert.match(testCases(errored.junit)[0]!, /<error message="trial 1\/2: agent error step_cap[^"]*" type="step_cap">[\s\S]*<rerunError message="trial 2\/2: /);
    assert.equal(errored.stats.taskTrials[0]!.status, "errored");
    assert.deepEqual(errored.stats.taskTrials[0]!.costPerPass, { kind: "no-pass", spentUsd: 0 });
    assert.match(errored.summary, /\| 💥 \| `suite\/flaky` \| 0\/2 \| 0\.0% \(0\.0%–[\d.]+%\) \| [^|]+\| [^|]+\| [^|]+\| [^|]+\| [^|]+\| [^|]+\|  \| no pass \|/);
  });

  test("gate-decided trials are left out of n and say so; pending trials leave the task unfinished until the gate is decided", async (t) => {
    const skipped = (repeat: number, state: UnfinishedTask["state"]): UnfinishedTask =>
      ({ suite: "suite", id: "flaky", file: "/repo/tasks/suite/flaky.yaml", trial: { repeat, variant: null }, state });
    const early = [trial(1, "failed", 0.01), trial(2, "failed", 0.01), trial(3, "passed", 0.01)];
    const out = await written(t, early, meta({ kind: "rate", min: 0.8, judgedOn: "rate" }, { unfinished: [skipped(4, "gate_decided"), skipped(5, "gate_decided")] }));
    await assertValid(out.junit);
    const entry = out.stats.taskTrials[0]!;
    assert.deepEqual([entry.status, entry.counted, entry.gateDecided, entry.pending], ["failed", 3, 2, 0]);
    assert.match(testCases(out.junit)[0]!, /trial 4\/5: skipped \(gate decided\)/);
    assert.match(out.summary, /\| `suite\/flaky` \| 1\/3 \(\+2 skipped \(gate decided\)\)/);
    assert.doesNotMatch(out.summary, /The run was interrupted/);

    const pending = await written(t, [trial(1, "passed", 0.01), trial(2, "passed", 0.01)], meta({ kind: "every" }, { unfinished: [skipped(3, "interrupted"), skipped(4, "not_started"), skipped(5, "not_started")] }));
    await assertValid(pending.junit);
    assert.equal(pending.stats.taskTrials[0]!.status, "unfinished");
    assert.equal(pending.stats.taskTrials[0]!.gatePassed, null);
    assert.match(testCases(pending.junit)[0]!, /<error message="unfinished: 3 of 5 trials have no result yet[^"]*" type="interrupted"/);

    // One failure decides an every-trial gate, pending trials or not.
    const decided = await written(t, [trial(1, "passed", 0.01), trial(2, "failed", 0.01)], meta({ kind: "every" }, { unfinished: [skipped(3, "interrupted")] }));
    assert.equal(decided.stats.taskTrials[0]!.status, "failed");
  });

  test("--junit-cases trial: one testcase per trial named id#n, valid against the XSD", async (t) => {
    const out = await written(t, flakyTrials(), meta({ kind: "every" }, { junitCases: "trial" }));
    await assertValid(out.junit);
    const names = testCases(out.junit).map((tc) => / name="([^"]+)"/.exec(tc)![1]);
    assert.deepEqual(names, ["flaky#1", "flaky#2", "flaky#3", "flaky#4", "flaky#5"]);
    assert.match(out.junit, /<testsuites name="rhema run run-1" tests="5" failures="1" errors="1"/);
  });

  test("a run whose tasks have one trial each gives the junit.xml and summary.md of a run before trials", async (t) => {
    const before = await written(t, sampleRun(), sampleMeta());
    const withTrials = sampleRun().map((r) => ({ ...r, trial: { repeat: 1, variant: null } }));
    const plans = withTrials.map((r) => ({ suite: r.suite, id: r.id, trials: 1, gate: { kind: "every" } as const }));
    const after = await written(t, withTrials, sampleMeta({ trialPlans: plans, passAt: [1, 3] }));
    assert.equal(after.junit, before.junit);
    assert.equal(after.summary, before.summary);
    assert.deepEqual(after.stats.taskTrials.map((e) => [e.id, e.status]), after.stats.tasks.map((r) => [r.id, r.status]));
    assert.equal(after.stats.taskTrials.length, 9);
  });

  test("the Action's figures: counted trials, flaky tasks, passed ÷ counted over the run", () => {
    const results = [...flakyTrials(), trial(1, "passed", 0.01, "steady")];
    const outputs = runTrialOutputs(results, meta({ kind: "every" }, { unfinished: [{ suite: "suite", id: "other", file: "/x", trial: { repeat: 1, variant: null }, state: "not_started" }] }));
    assert.deepEqual(outputs, { trials: 6, flaky: 1, passRate: 4 / 6 });
  });
});
