/**
 * A cancelled job and its re-run: the bundled action is stopped mid-suite — SIGINT then
 * SIGTERM 1 s later, as GitHub cancels (and separately SIGKILL) — its post step saves the run
 * directory to the cache (a folder here, through the cache port), and attempt 2 in a new
 * checkout restores it: the finished task is not re-run, the interrupted one continues from its
 * checkpoint, the rest run, and the final outputs count every task once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { TRAP_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { prepareJob, runStep, startStep, type JobFiles } from "./action-harness.js";

/** GitHub gives the main step 7.5 s between SIGINT and SIGTERM, then kills it. */
const SHUTDOWN_WINDOW_MS = 7500;
const SLOW_STEPS = 4;

/**
 * Each step's command ignores SIGINT and SIGTERM, so stopping it takes the process group's
 * whole grace period (2 s) before SIGKILL: the job's SIGTERM at 1 s lands mid-shutdown.
 */
function stubbornTask(id: string, steps: number): string {
  const script = Array.from({ length: steps }, (_, k) =>
    `    - say: step ${k}\n      call: shell\n      input: { command: "trap '' INT TERM; echo ${id}-${k} >> tags.txt; sleep 1.5" }\n`).join("");
  return `prompt: Append the tags slowly.
policy: ../policy.yaml
model:
  provider: scripted
  script:
${script}    - say: done
checks:
  - { name: tags written, run: "test $(wc -l < tags.txt) -ge 1" }
`;
}

const SUITE = {
  "policy.yaml": TRAP_POLICY,
  "suite/a-fast.yaml": taggingTask("a", 1),
  "suite/b-slow.yaml": stubbornTask("b", SLOW_STEPS),
  "suite/c-after.yaml": taggingTask("c", 1),
};
// Unsandboxed: in the sandbox a stopped command dies with its PID namespace at once, trap or no
// trap, and the SIGTERM would land after the shutdown instead of inside it.
const INPUTS = { tasks: "suite", concurrency: "1", sandbox: "off" };

async function checkout(root: string): Promise<JobFiles> {
  const job = await prepareJob(root);
  await writeFiles(job.workspace, SUITE);
  return job;
}

const runDirOf = (job: JobFiles) => join(job.workspace, ".rhema/runs/latest");
const taskFile = (job: JobFiles, id: string, file: string) => readFile(join(runDirOf(job), "tasks/suite", id, "default/1", file), "utf8");

/** Starts attempt 1 and stops it with `stop` once b-slow has done a few steps; then runs its post step. */
async function cancelledAttempt(job: JobFiles, env: Record<string, string>, stop: (pid: number) => Promise<void>) {
  const step = await startStep(job, { inputs: INPUTS, env });
  const tags = join(runDirOf(job), "tasks/suite/b-slow/default/1/workspace/tags.txt");
  let exited = false;
  void step.finished.then(() => (exited = true));
  for (;;) {
    if (exited) assert.fail(`the step ended before it was stopped:\n${(await step.finished).stdout}`);
    const text = await readFile(tags, "utf8").catch(() => "");
    if (text.split("\n").length > 2) break; // b-1 was written: its sleep has begun
    await new Promise((r) => setTimeout(r, 50));
  }
  const stoppedAt = Date.now();
  await stop(step.child.pid!);
  const main = await step.finished;
  const shutdownMs = Date.now() - stoppedAt;
  const post = await runStep(job, { inputs: INPUTS, env, phase: "post" });
  return { main, shutdownMs, post };
}

async function reRun(root: string, env: Record<string, string>, firstA: string) {
  const job = await checkout(root);
  const step = await runStep(job, { inputs: INPUTS, env: { ...env, GITHUB_RUN_ATTEMPT: "2" } });
  assert.equal(step.code, 0, step.stdout + step.stderr);
  assert.match(step.stdout, /restored .* from the folder cache .* \(rhema-nightly-suite-all-\.rhema_runs_latest-4242-1\)/);
  assert.match(step.stdout, /slow\/a-fast|suite\/a-fast: passed \(kept from an earlier attempt\)/);
  assert.equal(await taskFile(job, "a-fast", "result.json"), firstA, "a-fast was not run again");
  const b = JSON.parse(await taskFile(job, "b-slow", "result.json"));
  assert.equal(b.status, "passed");
  assert.ok(b.resumed >= 1, "b-slow continued from its checkpoint");
  const bTags = (await taskFile(job, "b-slow", "workspace/tags.txt")).trim().split("\n");
  assert.deepEqual([...new Set(bTags)].sort(), Array.from({ length: SLOW_STEPS }, (_, k) => `b-${k}`).sort());
  assert.equal(bTags.filter((t) => t === "b-0").length, 1, "b-slow was not started afresh");
  assert.deepEqual(
    { passed: step.outputs.passed, failed: step.outputs.failed, errored: step.outputs.errored, interrupted: step.outputs.interrupted },
    { passed: "3", failed: "0", errored: "0", interrupted: "0" },
  );
  const stats = JSON.parse(await readFile(join(runDirOf(job), "stats.json"), "utf8"));
  assert.deepEqual(stats.tasks.map((t: { id: string }) => t.id), ["a-fast", "b-slow", "c-after"]);
}

test("SIGINT then SIGTERM 1 s later: the shutdown is not cut short; the re-run resumes from the cache", async (t) => {
  const root = await tempDir(t, "rhema-action-");
  const env = { RHEMA_ACTION_CACHE_DIR: join(root, "cache") };
  const job = await checkout(join(root, "attempt1"));
  const { main, shutdownMs, post } = await cancelledAttempt(job, env, async (pid) => {
    process.kill(pid, "SIGINT");
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(pid, "SIGTERM");
  });
  assert.equal(main.signal, null, `exited by itself, not by a signal:\n${main.stdout}${main.stderr}`);
  assert.equal(main.code, 1, main.stdout);
  assert.ok(shutdownMs > 1000 && shutdownMs < SHUTDOWN_WINDOW_MS, `shutdown took ${shutdownMs} ms`);
  assert.match(main.stdout, /SIGTERM during shutdown: still writing checkpoints and reports/);
  assert.match(main.stdout, /::error::rhema: the run was interrupted before it completed/);
  assert.deepEqual([main.outputs.passed, main.outputs.interrupted], ["1", "1"]);
  assert.match(await readFile(join(runDirOf(job), "summary.md"), "utf8"), /1 of 1 task passed|a-fast/);
  assert.equal(post.code, 0, post.stdout);
  assert.deepEqual(await readdir(join(root, "cache")), ["rhema-nightly-suite-all-.rhema_runs_latest-4242-1"]);
  await reRun(join(root, "attempt2"), env, await taskFile(job, "a-fast", "result.json"));
});

test("SIGKILL mid-suite: the post step saves what the checkpoints hold; the re-run resumes", async (t) => {
  const root = await tempDir(t, "rhema-action-");
  const env = { RHEMA_ACTION_CACHE_DIR: join(root, "cache") };
  const job = await checkout(join(root, "attempt1"));
  const { main, post } = await cancelledAttempt(job, env, async (pid) => void process.kill(pid, "SIGKILL"));
  assert.equal(main.signal, "SIGKILL");
  assert.equal(post.code, 0, post.stdout);
  assert.match(post.stdout, /saved .* to the folder cache/);
  await reRun(join(root, "attempt2"), env, await taskFile(job, "a-fast", "result.json"));
});

test("resume: false neither restores nor saves", async (t) => {
  const root = await tempDir(t, "rhema-action-");
  const env = { RHEMA_ACTION_CACHE_DIR: join(root, "cache") };
  const job = await checkout(join(root, "attempt1"));
  const inputs = { ...INPUTS, filter: "suite/a-fast", resume: "false" };
  assert.equal((await runStep(job, { inputs, env })).code, 0);
  const post = await runStep(job, { inputs, env, phase: "post" });
  assert.equal(post.code, 0);
  assert.deepEqual(await readdir(join(root, "cache")).catch(() => []), []);
});
