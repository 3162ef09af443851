/**
 * A cancelled run reports what it spent: tasks interrupted by SIGINT after some steps carry the
 * time, steps, tokens and dollars of their checkpoints into summary.md, stats.json, junit.xml
 * (testcase `time`, system-out figures) and the Action's outputs; an unpriced model's cost reads
 * null/"unpriced" in each, never 0 (result.json's stats too).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { actionOutputs } from "../../src/action/action-outcome.js";
import { parseStatsReport } from "../../src/runner/reports/stats-report.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { junitXsd } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

/** Two quick shell steps, then a third that blocks until the run is interrupted. */
const blockingTask = (priceAs: string | null) => `prompt: Append the tags.
policy: ../policy.yaml
model:
  provider: scripted
${priceAs === null ? "" : `  priceAs: ${priceAs}\n`}  script:
    - call: shell
      input: { command: "echo t-0 >> tags.txt" }
    - call: shell
      input: { command: "echo t-1 >> tags.txt" }
    - call: shell
      input: { command: "echo t-2 >> tags.txt && sleep 60" }
    - say: done
checks:
  - { name: ok, run: "true" }
`;

async function assertValidJUnit(xml: string): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, result.rawOutput);
}

test("SIGINT after some steps: every report carries the interrupted tasks' time, steps, tokens and cost; unpriced is never 0", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/priced.yaml": blockingTask("claude-sonnet-4-5"), "suite/plain.yaml": blockingTask(null) });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out, "--concurrency", "2"], { cwd: root });
  const tags = (id: string) => readFile(join(out, "tasks/suite", id, "default/1/workspace/tags.txt"), "utf8").catch(() => "");
  await waitFor(async () => (await tags("priced")).includes("t-2") && (await tags("plain")).includes("t-2"));
  run.child.kill("SIGINT");
  const stopped = await run.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.deepEqual(await readRunResults(out), [], "interrupted tasks have no result");

  // stats.json: totals and each interrupted task's spend, from the checkpoints.
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.equal(stats.total.counts.interrupted, 2);
  assert.ok(stats.total.durationMs > 0, `task time ${stats.total.durationMs}`);
  assert.equal(stats.total.steps, 6, "three steps each");
  const prompt = (s: { inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }) => s.inputTokens + s.cacheReadTokens + s.cacheWriteTokens;
  assert.ok(stats.total.stats !== null && prompt(stats.total.stats) > 0 && stats.total.stats.outputTokens > 0, JSON.stringify(stats.total.stats));
  assert.equal(stats.total.stats.requests, 6);
  assert.ok(stats.total.cost !== null && stats.total.cost.usd !== null && stats.total.cost.usd > 0, JSON.stringify(stats.total.cost));
  assert.equal(stats.total.cost.unpricedTasks, 1);
  const spent = Object.fromEntries(stats.unfinished.map((u) => [u.id, u.spent]));
  assert.equal(spent.priced?.steps, 3);
  assert.ok(spent.priced!.cost!.usd! > 0 && spent.priced!.stats!.costUsd! > 0);
  assert.equal(spent.plain?.steps, 3);
  assert.ok(spent.plain!.durationMs > 0);
  assert.deepEqual([spent.plain!.cost!.usd, spent.plain!.stats!.costUsd, spent.plain!.stats!.workerCostUsd], [null, null, null], "unpriced: null, never 0");

  // summary.md: the totals and each interrupted row.
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.doesNotMatch(summary, / 0ms task time| 0 steps/);
  assert.match(summary, / task time · 6 steps · [1-9]\d* tokens · /);
  assert.match(summary, /cost ≥ \\\$0\.\d+ \(simulated; 3 unpriced requests\)/);
  assert.match(summary, /\| ⏸️ \| `suite\/plain` \| [^|—]+ \| 3 \| [^|]+ \| unpriced \|/);
  assert.match(summary, /\| ⏸️ \| `suite\/priced` \| [^|—]+ \| 3 \| [^|]+ \| \\\$0\.\d+ \(simulated\) \|/);

  // junit.xml: the interrupted testcases' time and figures.
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  await assertValidJUnit(junit);
  for (const id of ["plain", "priced"]) {
    const time = Number(new RegExp(`<testcase classname="suite" name="${id}" time="([\\d.]+)"`).exec(junit)?.[1]);
    assert.ok(time > 0, `${id}: time="${time}"`);
  }
  const plainCase = /name="plain"[\s\S]*?<\/testcase>/.exec(junit)![0];
  assert.match(plainCase, /\[\[PROPERTY\|steps=3\]\]/);
  assert.match(plainCase, /\[\[PROPERTY\|cacheWriteTokens=[1-9]\d*\]\]/);
  assert.match(plainCase, /\[\[PROPERTY\|costUsd=unpriced\]\]/);
  assert.match(plainCase, /\[\[PROPERTY\|totalCostUsd=unpriced\]\]/);
  assert.match(/name="priced"[\s\S]*?<\/testcase>/.exec(junit)![0], /\[\[PROPERTY\|totalCostUsd=0\.\d+\]\]/);

  // The Action's outputs, from what the runner hands it (results and the unfinished tasks).
  const outputs = actionOutputs({
    results: [], interrupted: true, interruptedTasks: 2, runDir: out, unfinished: stats.unfinished,
    reports: { junit: join(out, "junit.xml"), stats: join(out, "stats.json"), summary: join(out, "summary.md") },
  });
  assert.ok(Number(outputs["cache-write-tokens"]) > 0 && Number(outputs["output-tokens"]) > 0, JSON.stringify(outputs));
  assert.ok(Number(outputs["cost-usd"]) > 0, outputs["cost-usd"]);

  // A later run that leaves `plain` alone (another --filter) still reports what it spent.
  const other = await runCli(["run", "suite", "--out", out, "--filter", "suite/priced", "--timeout", "1s"], { cwd: root });
  assert.ok((await readRunResults(out)).some((r) => r.id === "priced"), other.stderr);
  const later = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  const left = later.unfinished.find((u) => u.id === "plain");
  assert.equal(left?.state, "not_selected");
  assert.equal(left?.spent?.steps, 3, JSON.stringify(left));
  assert.ok(left!.spent!.durationMs > 0 && left!.spent!.stats!.outputTokens > 0);
  assert.ok(later.total.steps >= 6, `total steps ${later.total.steps}`);
  assert.match(await readFile(join(out, "summary.md"), "utf8"), /\| ⏸️ \| `suite\/plain` \| [^|—]+ \| 3 \| [^|]+ \| unpriced \|/);
  const laterJunit = await readFile(join(out, "junit.xml"), "utf8");
  await assertValidJUnit(laterJunit);
  const leftCase = /name="plain"[\s\S]*?<\/testcase>/.exec(laterJunit)![0];
  assert.ok(Number(/time="([\d.]+)"/.exec(leftCase)?.[1]) > 0, leftCase);
  assert.match(leftCase, /<skipped message="not finished: an earlier run was interrupted while this task ran, and no run has selected it since/);
  assert.match(leftCase, /\[\[PROPERTY\|steps=3\]\]/);

  // The same command continues them; the finished results' unpriced stats say null, never 0.
  const resumed = await runCli(["run", "suite", "--out", out, "--timeout", "1s"], { cwd: root });
  const plain = (await readRunResults(out)).find((r) => r.id === "plain");
  assert.ok(plain, resumed.stderr);
  assert.deepEqual([plain.stats?.costUsd, plain.stats?.workerCostUsd, plain.cost?.usd], [null, null, null]);
  assert.ok(plain.steps >= 3);
});

test("an interrupted run of only unpriced tasks: the Action's cost-usd is unpriced, not 0", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/plain.yaml": blockingTask(null) });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out], { cwd: root });
  await waitFor(async () => (await readFile(join(out, "tasks/suite/plain/default/1/workspace/tags.txt"), "utf8").catch(() => "")).includes("t-2"));
  run.child.kill("SIGINT");
  assert.equal((await run.done).code, 130);
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.equal(stats.total.cost?.usd, null);
  assert.equal(stats.total.stats?.costUsd, null);
  const outputs = actionOutputs({
    results: [], interrupted: true, interruptedTasks: 1, runDir: out, unfinished: stats.unfinished,
    reports: { junit: "", stats: "", summary: "" },
  });
  assert.equal(outputs["cost-usd"], "unpriced");
  assert.ok(Number(outputs["cache-write-tokens"]) > 0 && Number(outputs["output-tokens"]) > 0, JSON.stringify(outputs));
  assert.match(await readFile(join(out, "summary.md"), "utf8"), /cost unpriced/);
});
