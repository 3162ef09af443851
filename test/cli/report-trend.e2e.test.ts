/**
 * `rhema report trend` over constructed run directories, given out of order: the history is read
 * oldest first by each run's start; per task the runs passed, the pooled pass rate and its Wilson
 * interval, flaky runs, flips and the cost trend are the figures worked by hand below; the
 * proposed quarantine follows the rule (`--flaky-in`, `--flips`, `--last`) and the file it writes
 * is a quarantine file `run --quarantine` reads; a task quarantined in the newest run that passed
 * every run could leave.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeReports } from "../../src/runner/reports/run-reports.js";
import { readRunHistory } from "../../src/runner/reports/trend-history.js";
import { trendOf, DEFAULT_TREND_RULE } from "../../src/runner/reports/trend-figures.js";
import { RunDir } from "../../src/runner/run-dir/run-dir.js";
import type { TaskCost, TaskResult } from "../../src/runner/run-dir/task-result.js";
import { PRICE_TABLE } from "../../src/runner/pricing/prices.js";
import { loadQuarantineFile, quarantineEntries } from "../../src/runner/tasks/quarantine-file.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/temp-dir.js";
import { sampleResult } from "../runner/sample-results.js";

const cost = (usd: number): TaskCost => ({ usd, workerUsd: 0, unpricedRequests: 0, pricedAs: "anthropic/claude-sonnet-4-5", workerPricedAs: null, simulated: false, prices: { ...PRICE_TABLE, pricingFile: null } });

/** A trial's result: `pass` or not, its repeat, its dollars. */
function trial(id: string, pass: boolean, repeat: number, usd: number): TaskResult {
  return { ...sampleResult("s", id, pass ? "passed" : "failed", repeat), trial: { repeat, variant: null }, cost: cost(usd) };
}

/**
 * Four runs (k = 1..4, started k hours apart):
 *   s/flaky    2 trials a run, gate rate 0.5: runs 1 and 3 pass 1 of 2 (flaky), runs 2 and 4 pass 2 of 2: 6 of 8 trials
 *   s/flipper  1 trial: passed, failed, passed, failed: 3 flips
 *   s/broken   1 trial, failed every run: never proposed (never passed)
 *   s/steady   1 trial, passed every run, $0.010 → $0.012 → $0.015 → $0.020; quarantined in run 4
 */
async function writeRun(dir: string, k: number): Promise<void> {
  const run = new RunDir(dir);
  await mkdir(dir, { recursive: true });
  const startedAt = new Date(Date.UTC(2026, 0, 1, k)).toISOString();
  const plan = (id: string, trials: number) => ({ suite: "s", id, file: `/repo/tasks/s/${id}.yaml`, contentHash: "ab".repeat(32), trials, gate: trials > 1 ? { kind: "rate" as const, min: 0.5, judgedOn: "rate" as const } : { kind: "every" as const } });
  await run.writeManifest({
    version: 1, layout: 2, runId: `run-${k}`, startedAt, resumes: 0, activeMs: 0, hashScheme: "content-v2", shard: null,
    tasks: [plan("broken", 1), plan("flaky", 2), plan("flipper", 1), plan("steady", 1)],
  });
  const results = [
    trial("flaky", true, 1, 0.01), trial("flaky", k % 2 === 0, 2, 0.01),
    trial("flipper", k % 2 === 1, 1, 0.02),
    trial("broken", false, 1, 0.03),
    trial("steady", true, 1, [0.01, 0.012, 0.015, 0.02][k - 1]!),
  ];
  for (const result of results) await run.folderOf(result).writeResult(result);
  await writeReports(dir, results, {
    runId: `run-${k}`, startedAt, finishedAt: startedAt,
    trialPlans: [{ suite: "s", id: "flaky", trials: 2, gate: { kind: "rate", min: 0.5, judgedOn: "rate" } }],
    ...(k === 4 ? { quarantine: { file: "/repo/q.yaml", entries: [{ suite: "s", id: "steady", reason: "watching" }] } } : {}),
  });
}

async function history(t: Parameters<typeof tempDir>[0]): Promise<{ root: string; dirs: string[] }> {
  const root = await tempDir(t);
  for (const k of [1, 2, 3, 4]) await writeRun(join(root, `r${k}`), k);
  // Given out of order: the history is by each run's start.
  return { root, dirs: ["r3", "r1", "r4", "r2"].map((d) => join(root, d)) };
}

test("the trend over runs given out of order: the figures worked by hand, and the proposals by the rule", async (t) => {
  const { dirs } = await history(t);
  const runs = await readRunHistory(dirs);
  assert.deepEqual(runs.map((r) => r.runId), ["run-1", "run-2", "run-3", "run-4"]);
  const trend = trendOf(runs, DEFAULT_TREND_RULE);
  const row = (id: string) => trend.tasks.find((task) => task.id === id)!;
  const figures = (id: string) => {
    const r = row(id);
    return { runs: r.runs, runsPassed: r.runsPassed, trials: r.trials, passes: r.passes, flakyRuns: r.flakyRuns, flips: r.flips, proposed: r.proposed, quarantined: r.quarantined, couldLeave: r.couldLeave };
  };
  assert.deepEqual(figures("flaky"), { runs: 4, runsPassed: 4, trials: 8, passes: 6, flakyRuns: 2, flips: 0, proposed: "flaky in 2 of the last 4 runs", quarantined: false, couldLeave: false });
  assert.deepEqual(figures("flipper"), { runs: 4, runsPassed: 2, trials: 4, passes: 2, flakyRuns: 0, flips: 3, proposed: "passed and failed by turns: 3 flips in the last 4 runs (2 passed)", quarantined: false, couldLeave: false });
  assert.deepEqual(figures("broken"), { runs: 4, runsPassed: 0, trials: 4, passes: 0, flakyRuns: 0, flips: 0, proposed: null, quarantined: false, couldLeave: false });
  assert.deepEqual(figures("steady"), { runs: 4, runsPassed: 4, trials: 4, passes: 4, flakyRuns: 0, flips: 0, proposed: null, quarantined: true, couldLeave: true });
  // Wilson 95 % for 6 of 8: centre (0.75 + z²/16)/(1 + z²/8) = 0.66890, half-width 0.25963.
  const rate = row("flaky").passRate!;
  assert.equal(rate.rate, 0.75);
  assert.equal(rate.interval.lower.toFixed(4), "0.4093");
  assert.equal(rate.interval.upper.toFixed(4), "0.9285");
  // Cost: first and last run's per-trial dollars; per pass, (0.010 + 0.012 + 0.015 + 0.020) / 4 passes.
  const steady = row("steady");
  assert.equal(steady.costPerTrial!.firstUsd, 0.01);
  assert.equal(steady.costPerTrial!.lastUsd, 0.02);
  assert.equal(steady.costPerTrial!.change!.toFixed(4), "1.0000");
  assert.equal(steady.costPerPass.kind === "usd" && steady.costPerPass.usd.toFixed(5), "0.01425");
  assert.deepEqual(row("broken").costPerPass, { kind: "no-pass", spentUsd: 0.12 });
  assert.deepEqual(row("flaky").history.map((p) => [p.runId, p.status, p.flaky, p.passes, p.trials]), [
    ["run-1", "passed", true, 1, 2], ["run-2", "passed", false, 2, 2], ["run-3", "passed", true, 1, 2], ["run-4", "passed", false, 2, 2],
  ]);
  // The last 3 runs: flaky once (run 3), the flipper flips twice: neither is proposed.
  const last3 = trendOf(runs, { ...DEFAULT_TREND_RULE, last: 3 });
  assert.deepEqual(last3.tasks.map((task) => [task.id, task.flakyRuns, task.flips, task.proposed]), [
    ["broken", 0, 0, null], ["flaky", 1, 0, null], ["flipper", 0, 2, null], ["steady", 0, 0, null],
  ]);
  assert.deepEqual(trendOf(runs, { last: 3, flakyIn: 1, flips: 2 }).tasks.filter((task) => task.proposed !== null).map((task) => task.id), ["flaky", "flipper"]);
});

test("report trend through the built CLI: Markdown on stdout, --json, and a proposed quarantine file run --quarantine reads", async (t) => {
  const { root, dirs } = await history(t);
  const q = join(root, "out dir ü", "quarantine.yaml");
  const result = await runCli(["report", "trend", ...dirs, "--json", "trend.json", "--propose-quarantine", q], { cwd: root });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^## rhema trend: 4 tasks over the last 4 of 4 runs \(2026-01-01T01:00:00\.000Z `run-1` → 2026-01-01T04:00:00\.000Z `run-4`\)/);
  assert.match(result.stdout, /\| `s\/flaky` \| ⚠️✅⚠️✅ \| 4 of 4 \| 0\.750 \(6\/8\) \[0\.409, 0\.929\] \| 2 of 4 \| 0 \| \$0\.0100 → \$0\.0100 \(0\.0%\) \| \$0\.0133 \| proposed \|/);
  assert.match(result.stdout, /\| `s\/steady` \| ✅✅✅✅ \| 4 of 4 \| .* \| \$0\.0100 → \$0\.0200 \(\+100\.0%\) \| \$0\.0142 \| 🔒 quarantined, could leave \|/);
  assert.match(result.stdout, /### Proposed quarantine\n\nRule: flaky in at least 2 of the last 10 runs, or at least 3 flips of its verdict among them\.\n\n- `s\/flaky` — flaky in 2 of the last 4 runs\n- `s\/flipper` — passed and failed by turns/);
  assert.match(result.stdout, /### Could leave quarantine\n\n- `s\/steady` — passed all 4 runs/);
  assert.match(result.stderr, /proposed quarantine: 2 tasks written to /);
  assert.deepEqual(quarantineEntries(await loadQuarantineFile(q)), [
    { suite: "s", id: "flaky", reason: "flaky in 2 of the last 4 runs" },
    { suite: "s", id: "flipper", reason: "passed and failed by turns: 3 flips in the last 4 runs (2 passed)" },
  ]);
  const json = JSON.parse(await readFile(join(root, "trend.json"), "utf8")) as { version: number; runs: { runId: string }[]; proposedQuarantine: unknown[]; tasks: { id: string; flakyRuns: number }[] };
  assert.equal(json.version, 1);
  assert.deepEqual(json.runs.map((r) => r.runId), ["run-1", "run-2", "run-3", "run-4"]);
  assert.equal(json.proposedQuarantine.length, 2);

  const bad = await runCli(["report", "trend", dirs[0]!, "--last", "0"], { cwd: root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Expected --last to be a whole number from 1 and up, got "0"/);
  const twice = await runCli(["report", "trend", dirs[0]!, dirs[0]!], { cwd: root });
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /is given twice/);
  const notRun = await runCli(["report", "trend", root], { cwd: root });
  assert.equal(notRun.code, 2);
  assert.match(notRun.stderr, /is not a rhema run directory/);
});
