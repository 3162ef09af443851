/**
 * report.html in a real browser on more kinds of run (issue 26's "Show it"), each made through
 * the built CLI and opened from file:// in headless Chromium: a flaky repeated task (a seeded
 * choice of two scripts, one passing its check, one failing it), a long task compacted under a
 * small transcript budget, a run sharded 1/2 and 2/2 then `report merge`d, and a run stopped by
 * SIGINT mid-task (a trial interrupted, one not started). Each test asserts
 * what a person looks for there, and fails on a console error or a request leaving the page
 * (test/support/report-html-run.ts, which also saves the screenshots). Skips without chromium,
 * as report-html.browser.test.ts does.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { launchChromium } from "../support/chromium.js";
import { VIEWER_POLICY, WAITING_TASK, browserOrSkip, listedRows, openReport, viewerTask } from "../support/report-html-run.js";
import { OPEN_POLICY, compactingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists, waitFor } from "../support/wait.js";

const { chromium: CHROMIUM, skip } = await browserOrSkip();

const write = (content: string) => `{ call: write_file, input: { path: out.txt, content: ${content} } }`;
const FLAKY = `prompt: Write good into out.txt.
policy: ../policy.yaml
repeats: 4
seed: 3
model:
  provider: scripted
  scripts:
    - script:
        - calls: [${write("good")}]
        - say: wrote good
    - script:
        - calls: [${write("bad")}]
        - say: wrote bad
checks:
  - { name: says good, run: "grep -q good out.txt" }
`;
const SHARDED = ["alpha", "beta", "gamma", "delta"];

let browser: Browser;
let root: string;
const cleanUps: Array<() => unknown> = [];
const page = (dir: string) => pathToFileURL(join(root, dir, "report.html")).href;

before(async () => {
  if (skip) return;
  root = await tempDir({ after: (fn: () => unknown) => cleanUps.push(fn) });
  await writeFiles(root, {
    "policy.yaml": VIEWER_POLICY,
    "flaky/flaky.yaml": FLAKY,
    "flaky/steady.yaml": viewerTask("Write good.", write("good"), "wrote it", "grep -q good out.txt"),
    ...Object.fromEntries(SHARDED.map((id) => [`sharded/${id}.yaml`, viewerTask(`Echo ${id}.`, `{ call: shell, input: { command: "echo ${id}-said" } }`, `said ${id}`, "true")])),
    "long/policy.yaml": OPEN_POLICY,
    "long/tasks/read.yaml": compactingTask({ steps: 24, budget: 5_000, block: 500 }),
    "long/ws/notes.txt": "a line of notes that the model reads again and again\n".repeat(20),
  });
  const runs = await Promise.all([
    runCli(["run", "flaky", "--out", "flaky-run"], { cwd: root }),
    runCli(["run", "long/tasks", "--out", "long-run"], { cwd: root }),
    runCli(["run", "sharded", "--out", "shard-1", "--shard", "1/2"], { cwd: root }),
    runCli(["run", "sharded", "--out", "shard-2", "--shard", "2/2"], { cwd: root }),
  ]);
  assert.deepEqual(runs.map((r) => r.code), [1, 0, 0, 0], runs.map((r) => r.stderr).join("\n"));
  const merged = await runCli(["report", "merge", "shard-1", "shard-2", "--out", "merged"], { cwd: root });
  assert.equal(merged.code, 0, merged.stderr);
  browser = await launchChromium(CHROMIUM!);
});

after(async () => {
  await browser?.close();
  for (const cleanUp of cleanUps) await cleanUp();
});

test("a flaky repeated task: the flaky filter finds its trials, each with its own pass or fail", { skip }, async (t) => {
  const statuses = (await readRunResults(join(root, "flaky-run"))).filter((r) => r.id === "flaky").map((r) => `flaky/flaky#${r.trial!.repeat} ${r.status}`);
  assert.ok(statuses.some((s) => s.endsWith("passed")) && statuses.some((s) => s.endsWith("failed")), `seed 3 draws both scripts: ${statuses.join(", ")}`);
  const p = await openReport(t, browser, page("flaky-run"), 5);
  await p.check("#f-flaky");
  assert.deepEqual(await listedRows(p), statuses, "only the flaky task's trials, each with its status");
  assert.equal(await p.locator("#shown-count").textContent(), "4 of 5 trials");
  assert.equal(await p.locator("#trial-list .tag", { hasText: "flaky" }).count(), 4, "each row tagged flaky");
  const failed = statuses.find((s) => s.endsWith("failed"))!.split(" ")[0]!;
  await p.locator("#trial-list button", { hasText: failed }).click();
  const detail = await p.locator("#detail").innerText();
  assert.match(detail, /flaky\s*yes/);
  assert.match(detail, /failed says good — exit 1/);
  assert.match(detail, /wrote bad/);
});

test("a compacted long task: its compaction flushes are shown in the steps they happened at", { skip }, async (t) => {
  const stats = JSON.parse(await readFile(join(root, "long-run", "stats.json"), "utf8")) as { total: { stats: { flushes: number } } };
  assert.ok(stats.total.stats.flushes >= 2, `flushed ${stats.total.stats.flushes} times`);
  const p = await openReport(t, browser, page("long-run"), 1);
  await p.locator("#trial-list button").click();
  const flush = p.locator("p.meta", { hasText: /^flush: compacted messages \d+–\d+ \(/ });
  assert.equal(await p.locator(".step").locator(flush).count(), stats.total.stats.flushes, "one line per flush stats.json counts");
  const first = p.locator(".step").filter({ has: flush }).first();
  const step = Number((await first.getAttribute("id"))!.replace("step-", ""));
  assert.ok(step > 1, `the first flush is at step ${step}`);
  assert.match(await first.innerText(), /into \d+ summary tokens/);
  assert.match(await first.innerText(), /reading part \d+ of the log/, "the step keeps its model text");
});

test("a merged sharded run: both shards' trials, each with its conversation", { skip }, async (t) => {
  const perShard = await Promise.all(["shard-1", "shard-2"].map(async (d) => (await readRunResults(join(root, d))).map((r) => r.id)));
  assert.ok(perShard.every((ids) => ids.length > 0), `each shard ran a task: ${JSON.stringify(perShard)}`);
  const p = await openReport(t, browser, page("merged"), SHARDED.length);
  assert.deepEqual(await listedRows(p), [...SHARDED].sort().map((id) => `sharded/${id}#1 passed`));
  for (const id of SHARDED) {
    await p.locator("#trial-list button", { hasText: `sharded/${id}#1` }).click();
    await p.locator("#detail h2", { hasText: `sharded/${id}#1` }).waitFor();
    const detail = await p.locator("#detail").innerText();
    assert.match(detail, new RegExp(`Prompt\\s+Echo ${id}\\.`), `${id}: its prompt (from the checkpoint the merge copied)`);
    assert.match(detail, new RegExp(`echo ${id}-said[\\s\\S]*\\n${id}-said\\n`), `${id}: its tool call and result`);
    assert.match(detail, new RegExp(`said ${id}`), `${id}: the model's text`);
    assert.doesNotMatch(detail, /no checkpoint/);
  }
});

test("an interrupted run: the interrupted trial with its steps so far, the trial not started, each found by the status filter", { skip }, async (t) => {
  await writeFiles(root, { "stopped/a-wait.yaml": WAITING_TASK, "stopped/b-later.yaml": viewerTask("Say hi.", `{ call: shell, input: { command: "echo hi" } }`, "said hi", "true") });
  const run = startCli(["run", "stopped", "--out", "stopped-run", "--concurrency", "1"], { cwd: root });
  await waitFor(() => exists(join(root, "stopped-run/tasks/stopped/a-wait/default/1/workspace/started")));
  run.child.kill("SIGINT");
  assert.equal((await run.done).code, 130);
  const p = await openReport(t, browser, page("stopped-run"), 2);
  assert.deepEqual(await listedRows(p), ["stopped/a-wait#1 interrupted", "stopped/b-later#1 not started"]);
  await p.selectOption("#f-status", "not_started");
  assert.deepEqual(await listedRows(p), ["stopped/b-later#1 not started"]);
  await p.locator("#trial-list button").click();
  assert.match(await p.locator("#detail").innerText(), /not started: the run stopped before it started/);
  await p.selectOption("#f-status", "interrupted");
  await p.locator("#trial-list button").click();
  const detail = await p.locator("#detail").innerText();
  assert.match(detail, /interrupted: it was running when the run stopped/);
  assert.match(detail, /Prompt\s+Write out\.txt, then wait\./);
  assert.match(detail, /Steps so far[\s\S]*step 1[\s\S]*tool write_file\s+allow[\s\S]*step 2[\s\S]*now I wait[\s\S]*tool shell\s+allow/);
  assert.doesNotMatch(detail, /Checks|Final answer/, "no checks or answer yet");
});
