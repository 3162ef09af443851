/**
 * The pull-request comment against a local server on 127.0.0.1 that speaks the REST endpoints
 * it uses (GITHUB_API_URL points at it): created once, found again by its marker and updated on
 * a re-run (never duplicated), one per shard, and a 403 is a warning, not a failed step.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";
import { prepareJob, runStep, workflowCommands } from "./action-harness.js";
import { startGitHub } from "./fake-github.js";

async function prJob(t: Parameters<typeof tempDir>[0]) {
  const root = await tempDir(t, "rhema-comment-");
  const job = await prepareJob(root);
  await cp(join(repoRoot, "tasks"), join(job.workspace, "tasks"), { recursive: true });
  const event = join(root, "event.json");
  await writeFile(event, JSON.stringify({ pull_request: { number: 7 } }));
  return { job, event };
}

const INPUTS = { tasks: "tasks/arithmetic", filter: "arithmetic/fix-add", comment: "true", "github-token": "ghs_testtoken123", resume: "false" };

test("comments once per pull request and shard, and updates that comment on a re-run", async (t) => {
  const github = await startGitHub();
  t.after(github.close);
  const { job, event } = await prJob(t);
  const env = { GITHUB_API_URL: github.url, GITHUB_EVENT_PATH: event, GITHUB_SERVER_URL: "https://github.example", GITHUB_RUN_ATTEMPT: "1" };

  const first = await runStep(job, { inputs: INPUTS, env });
  assert.equal(first.code, 0, first.stdout + first.stderr);
  assert.match(first.stdout, /comment created \(#100\)/);
  const again = await runStep(job, { inputs: INPUTS, env: { ...env, GITHUB_RUN_ATTEMPT: "2" } });
  assert.match(again.stdout, /comment updated \(#100\)/);
  const shard = await runStep(job, { inputs: { ...INPUTS, shard: "1/1", out: ".rhema/shard1" }, env });
  assert.match(shard.stdout, /comment created \(#101\)/);

  assert.deepEqual(github.comments.map((c) => c.id), [1, 100, 101]);
  const mine = github.comments[1]!.body;
  assert.ok(mine.startsWith("<!-- rhema-action: nightly / suite / shard all -->\n"), mine);
  assert.match(mine, /1 of 1 task passed/);
  assert.match(mine, /\[Job summary and reports\]\(https:\/\/github\.example\/octo\/repo\/actions\/runs\/4242\/attempts\/2\)/);
  assert.ok(github.comments[2]!.body.startsWith("<!-- rhema-action: nightly / suite / shard 1/1 -->\n"));
  assert.ok(github.seen.every((s) => s.endsWith("token ghs_testtoken123")), github.seen.join("\n"));
  // The token is masked (the runner then hides it everywhere) and printed nowhere else.
  const lines = (first.stdout + again.stdout).split("\n").filter((l) => l.includes("ghs_testtoken123"));
  assert.ok(lines.length > 0 && lines.every((l) => l === "::add-mask::ghs_testtoken123"), lines.join("\n"));
});

test("a token without write access (403) is a warning, not a failed step", async (t) => {
  const github = await startGitHub({ forbidden: true });
  t.after(github.close);
  const { job, event } = await prJob(t);
  // No report artifact (its own warning when there is no artifact service): this test's one warning is the comment's.
  const step = await runStep(job, { inputs: { ...INPUTS, "upload-report": "false" }, env: { GITHUB_API_URL: github.url, GITHUB_EVENT_PATH: event } });
  assert.equal(step.code, 0, step.stdout);
  assert.deepEqual(workflowCommands(step.stdout, "warning"), [
    "::warning::rhema: comment: the token cannot write comments on octo/repo#7 (403); give the job `permissions: pull-requests: write`",
  ]);
});

test("outside a pull request there is no comment and no request", async (t) => {
  const github = await startGitHub();
  t.after(github.close);
  const { job } = await prJob(t);
  const step = await runStep(job, { inputs: INPUTS, env: { GITHUB_API_URL: github.url } });
  assert.equal(step.code, 0);
  assert.match(step.stdout, /not for a pull request; no comment/);
  assert.deepEqual(github.seen, []);
});
