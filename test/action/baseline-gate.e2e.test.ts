/**
 * The action as a pull-request gate (issue 22): this run compared with a baseline run directory
 * after it. A constructed baseline (s/up 0/5 → 3/3 improved, s/down 5/5 → 0/3 regressed, s/same
 * 5/5 → 3/3 inconclusive) given as a path: the outputs, the job summary (every cell), the sticky
 * comment sent to a local GitHub (only the regression and the improvement), the step's result per
 * compare-fail-on. Then the cache form: a base-branch job saves its run directory with
 * save-baseline (post step, folder cache), a pull-request job restores it by name and compares.
 * A missing baseline (a path that is not there, a cache miss) is a warning and no comparison.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { writeCompareRun } from "../runner/reports/compare-fixtures.js";
import { prepareJob, runStep, workflowCommands, type JobFiles } from "./action-harness.js";
import { startGitHub } from "./fake-github.js";

function task(pass: boolean): string {
  return `prompt: x\nmodel: { provider: scripted, script: [{ say: ok }] }\nchecks:\n  - { name: check, run: "${pass ? "true" : "test -e nothing-here"}" }\n`;
}

/** A checkout whose suite s has up, down and same passing or failing as given. */
async function checkout(root: string, pass: { up: boolean; down: boolean }): Promise<JobFiles> {
  const job = await prepareJob(root);
  await writeFiles(job.workspace, { "policy.yaml": OPEN_POLICY, "s/up.yaml": task(pass.up), "s/down.yaml": task(pass.down), "s/same.yaml": task(true) });
  return job;
}

const INPUTS = { tasks: "s", policy: "policy.yaml", sandbox: "off", repeats: "3", resume: "false", "fail-on": "never" };
const HEAD = { up: true, down: false };

test("a baseline path: outputs, the job summary, the comment's regressions and improvements, and the step per compare-fail-on", async (t) => {
  const github = await startGitHub();
  t.after(github.close);
  const root = await tempDir(t, "rhema-gate-");
  const job = await checkout(root, HEAD);
  await writeCompareRun(join(job.workspace, "base-run"), [{ id: "up", passes: 0, trials: 5 }, { id: "down", passes: 5, trials: 5 }, { id: "same", passes: 5, trials: 5 }]);
  const event = join(root, "event.json");
  await writeFile(event, JSON.stringify({ pull_request: { number: 7 } }));
  const env = { GITHUB_API_URL: github.url, GITHUB_EVENT_PATH: event, GITHUB_SERVER_URL: "https://github.example" };
  const inputs = { ...INPUTS, baseline: "base-run", comment: "true", "github-token": "ghs_testtoken123" };

  const step = await runStep(job, { inputs, env });
  assert.equal(step.code, 1, step.stdout + step.stderr);
  assert.deepEqual([step.outputs.regressed, step.outputs.improved, step.outputs.failed], ["1", "1", "1"]);
  assert.deepEqual(workflowCommands(step.stdout, "error").filter((l) => l.includes("baseline")),
    ["::error::rhema: against the baseline: 1 cell regressed (s/down) (compare-fail-on: regressed)"]);

  const summary = await readFile(join(job.runnerDir, "summary.md"), "utf8");
  const compare = summary.slice(summary.indexOf("## rhema report compare"));
  assert.match(compare, /`this run` against the base `base-run`, margin ±0.1: \*\*1 regressed\*\*, 1 improved, 0 unchanged, 1 inconclusive/);
  assert.match(compare, /### Regressed \(1\)[\s\S]*\| s\/down \| \*\*regressed\*\* \| 5\/5 → 0\/3 \|[\s\S]*### Improved \(1\)[\s\S]*\| s\/up \| improved \| 0\/5 → 3\/3 \|/);
  assert.match(compare, /<details><summary>The rest: 1 inconclusive<\/summary>[\s\S]*\| s\/same \| inconclusive \| 5\/5 → 3\/3 \|/);

  assert.deepEqual(github.comments.map((c) => c.id), [1, 100]);
  const body = github.comments[1]!.body;
  assert.ok(body.startsWith("<!-- rhema-action: nightly / suite / shard all -->\n## rhema report compare\n"), body);
  assert.match(body, /\| s\/down \| \*\*regressed\*\* \| 5\/5 → 0\/3 \|/);
  assert.match(body, /\| s\/up \| improved \| 0\/5 → 3\/3 \|/);
  assert.doesNotMatch(body, /\| s\/same \|[^\n]*inconclusive/, "the comment lists only regressions and improvements");
  assert.match(body, /Not listed here: 1 inconclusive \(the job summary has every cell\)\./);
  assert.ok(body.indexOf("### Improved") < body.indexOf("s/same"), "the run's own summary follows the comparison");

  // The same job again (kept results) per compare-fail-on: the comment is updated, never added.
  const never = await runStep(job, { inputs: { ...inputs, "compare-fail-on": "never" }, env: { ...env, GITHUB_RUN_ATTEMPT: "2" } });
  assert.equal(never.code, 0, never.stdout);
  assert.deepEqual([never.outputs.regressed, never.outputs.improved], ["1", "1"]);
  const inconclusive = await runStep(job, { inputs: { ...inputs, "compare-fail-on": "inconclusive" }, env });
  assert.equal(inconclusive.code, 1);
  assert.match(inconclusive.stdout, /::error::rhema: against the baseline: 1 cell regressed \(s\/down\); 1 cell inconclusive \(s\/same\) \(compare-fail-on: inconclusive\)/);
  assert.deepEqual(github.comments.map((c) => c.id), [1, 100]);
  // fail-on still judges the run apart: s/down failed.
  const both = await runStep(job, { inputs: { ...inputs, "fail-on": "failure", "compare-fail-on": "never" }, env });
  assert.equal(both.code, 1);
  assert.match(both.stdout, /::error::rhema: 1 task did not pass: s\/down\n/);
});

test("a base-branch run saves its baseline (save-baseline); a pull request's run restores it by name from the cache and compares", async (t) => {
  const root = await tempDir(t, "rhema-gate-");
  const cacheDir = join(root, "cache");
  const base = await checkout(join(root, "base"), { up: false, down: true });
  const baseEnv = { RHEMA_ACTION_CACHE_DIR: cacheDir, GITHUB_REF_NAME: "main", GITHUB_RUN_ID: "100" };
  const baseInputs = { ...INPUTS, "save-baseline": "true" };
  const main = await runStep(base, { inputs: baseInputs, env: baseEnv });
  assert.equal(main.code, 0, main.stdout + main.stderr);
  const post = await runStep(base, { inputs: baseInputs, env: baseEnv, phase: "post" });
  assert.equal(post.code, 0, post.stdout);
  assert.match(post.stdout, /saved the run directory as the baseline rhema-baseline-nightly-main-all-100-1 to the folder cache .*; a pull request's job restores it with `baseline: rhema-baseline-nightly-main`/);
  assert.deepEqual(await readdir(cacheDir), ["rhema-baseline-nightly-main-all-100-1"], "resume: false saves no resume entry");
  const entry = join(cacheDir, "rhema-baseline-nightly-main-all-100-1");
  assert.ok(existsSync(join(entry, "tasks/s/down/default/3/result.json")));
  assert.equal(existsSync(join(entry, "tasks/s/down/default/3/workspace")), false, "the trials' workspaces are left out");
  assert.equal(existsSync(join(entry, "rhema.lock")), false);

  // Another branch's baseline is never restored.
  await writeCompareRun(join(cacheDir, "rhema-baseline-nightly-mainline-all-99-1"), [{ id: "up", passes: 3, trials: 3 }]);
  const pr = await checkout(join(root, "pr"), HEAD);
  const prEnv = { RHEMA_ACTION_CACHE_DIR: cacheDir, GITHUB_REF_NAME: "7/merge", GITHUB_RUN_ID: "200" };
  const step = await runStep(pr, { inputs: { ...INPUTS, baseline: "rhema-baseline-nightly-main" }, env: prEnv });
  assert.equal(step.code, 1, step.stdout + step.stderr);
  assert.match(step.stdout, /restored the baseline rhema-baseline-nightly-main-all-100-1 from the folder cache/);
  assert.deepEqual([step.outputs.regressed, step.outputs.improved], ["1", "1"]);
  const summary = await readFile(join(pr.runnerDir, "summary.md"), "utf8");
  assert.match(summary, /`this run` against the base `rhema-baseline-nightly-main-all-100-1`/);
  assert.match(summary, /\| s\/down \| \*\*regressed\*\* \| 3\/3 → 0\/3 \|/);
  assert.match(summary, /\| s\/same \| inconclusive \| 3\/3 → 3\/3 \|/);
});

test("a missing baseline (a path not there, a cache miss) is a warning and no comparison, never a failure", async (t) => {
  const root = await tempDir(t, "rhema-gate-");
  const job = await checkout(root, { up: true, down: true });
  const env = { RHEMA_ACTION_CACHE_DIR: join(root, "cache") };
  const cases: [string, RegExp][] = [
    ["runs/none", /the run directory runs\/none does not exist/],
    ["rhema-baseline-nightly-main", /the folder cache .* has no entry rhema-baseline-nightly-main-all-… \(no base run saved one with save-baseline yet\)/],
  ];
  for (const [baseline, reason] of cases) {
    await writeFile(join(job.runnerDir, "summary.md"), "");
    const step = await runStep(job, { inputs: { ...INPUTS, baseline, "fail-on": "failure", "compare-fail-on": "inconclusive" }, env });
    assert.equal(step.code, 0, step.stdout + step.stderr);
    assert.deepEqual([step.outputs.regressed, step.outputs.improved], ["0", "0"]);
    const warnings = workflowCommands(step.stdout, "warning").filter((l) => l.includes("no baseline"));
    assert.equal(warnings.length, 1, step.stdout);
    assert.match(warnings[0]!, reason);
    const summary = await readFile(join(job.runnerDir, "summary.md"), "utf8");
    assert.match(summary, /No baseline to compare with: .*This run is not compared; the first run on a branch has no baseline\./);
    assert.match(summary, reason);
  }
});
