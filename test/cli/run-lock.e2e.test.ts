/**
 * One runner at a time, whatever the pid namespace or stall (README "The run directory"),
 * through the built CLI with real namespaces and real signals. Each task's setup command and
 * check append a line to a file outside the workspace, and its shell call one to a file in the
 * task's workspace (the workspace boundary keeps the agent's writes there; both runners share
 * it), so every side effect that ran twice shows.
 *
 * - A second rhema in another pid namespace (`unshare -p -f --mount-proc`; same host name) is
 *   refused a live run's lock, whichever of the two starts first: a pid from another namespace
 *   says nothing here, only the heartbeat does.
 * - A rhema paused (SIGSTOP) past the lock's stale limit loses its run directory to a second
 *   one, which finishes the task; after SIGCONT the first starts nothing new — no request, tool
 *   call, setup command or check — and exits 3 naming the new owner; a command it had running
 *   is stopped (the new owner, in another pid namespace, cannot stop it).
 *
 * The stale limit is shortened through `RHEMA_LOCK_STALE_MS` (the heartbeat is a sixth of it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { cliEnv, runCli, startCli, type CliResult } from "../support/cli.js";
import { survivorsAfter, killAll } from "../support/run-processes.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const STALE_MS = 1_500;
const NAMESPACE = ["unshare", "-p", "-f", "--mount-proc"] as const;
const canUnshare = spawnSync(NAMESPACE[0], [...NAMESPACE.slice(1), "true"]).status === 0;
const NO_UNSHARE = canUnshare ? false : "unshare -p -f --mount-proc is not permitted here (needs root or user namespaces)";

interface TaskShape {
  /** The setup command's extra part, after its line is appended. */
  setupTail?: string;
  /** The shell call's extra part, after its line is appended. */
  toolTail?: string;
  /** The check's extra part, after its line is appended. */
  checkTail?: string;
  /** The first (tool-calling) request's delay between streamed chunks. */
  chunkDelayMs?: number;
}

/** The file in the task's workspace the shell call appends "tool" to. */
const TOOL_LOG = "tool.txt";

/** A task whose setup and check append their names to `log` (outside the workspace), and whose shell call appends "tool" to `TOOL_LOG`. */
function lineTask(log: string, shape: TaskShape = {}): string {
  const tail = (more?: string) => (more ? `; ${more}` : "");
  return `prompt: Append the tool line.
policy: { default: allow, rules: [] }
model:
  provider: scripted
  script:
    - call: shell
      input: { command: ${JSON.stringify(`echo tool >> ${TOOL_LOG}${tail(shape.toolTail)}`)} }
${shape.chunkDelayMs ? `      chunkDelayMs: ${shape.chunkDelayMs}\n` : ""}    - say: done
workspace:
  setup:
    - ${JSON.stringify(`echo setup >> ${log}${tail(shape.setupTail)}`)}
checks:
  - { name: appended, run: ${JSON.stringify(`echo check >> ${log}${tail(shape.checkTail)}`)} }
`;
}

async function lines(log: string): Promise<string[]> {
  return (await readFile(log, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
}

/** Every side effect of the task run in the run directory `out`, in the order of each file: setup and check, then the shell call's. */
async function sideEffects(log: string, out: string): Promise<string[]> {
  return [...(await lines(log)), ...(await lines(join(out, "tasks/suite/job/default/1/workspace", TOOL_LOG)))];
}
const ONCE_EACH = ["setup", "check", "tool"];

/** Waits until `log` holds `line`. */
function logged(log: string, line: string): Promise<void> {
  return waitFor(async () => (await lines(log)).includes(line), 30_000);
}

/** The run's outcome, or a failure (and `onLate` to unblock it) when it has not ended within `ms`. */
async function endsWithin(run: { done: Promise<CliResult> }, ms: number, onLate: () => Promise<void>): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  const first = await Promise.race([run.done, late]);
  clearTimeout(timer);
  if (first !== "late") return first;
  await onLate();
  const result = await run.done;
  assert.fail(`the run had not ended ${ms} ms on (it ended later with ${result.code}: ${result.stderr})`);
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // gone
  }
}

async function heartbeatAgeMs(lock: string): Promise<number> {
  return Date.now() - (await stat(lock)).mtimeMs;
}

for (const first of ["host", "namespace"] as const) {
  const second = first === "host" ? "namespace" : "host";
  test(`a rhema in another pid namespace with the same host name is refused a live run's lock (${first} first, ${second} second)`, { skip: NO_UNSHARE }, async (t) => {
    const root = await tempDir(t);
    const log = join(root, "log.txt");
    const go = join(root, "go");
    await writeFiles(root, { "suite/job.yaml": lineTask(log, { setupTail: `while [ ! -e ${go} ]; do sleep 0.05; done` }) });
    const args = ["run", "suite", "--out", join(root, "run"), "--sandbox", "off"];
    const env = cliEnv({ RHEMA_LOCK_STALE_MS: String(STALE_MS) });
    const where = (side: "host" | "namespace") => ({ cwd: root, env, detached: true, ...(side === "namespace" ? { launcher: NAMESPACE } : {}) });
    const holder = startCli(args, where(first));
    t.after(() => killGroup(holder.child));
    await logged(log, "setup"); // the holder holds the lock, inside its setup command
    // Well past the stale limit: a refusal now is the heartbeat's and the namespaces', not luck.
    await new Promise((r) => setTimeout(r, STALE_MS));
    const other = startCli(args, where(second));
    t.after(() => killGroup(other.child));
    const refused = await endsWithin(other, 20_000, () => writeFile(go, ""));
    assert.equal(refused.code, 2, refused.stderr);
    // The holder's pid as its own namespace numbers it: 1 when it runs in the new one.
    const holderPid = first === "namespace" ? 1 : holder.child.pid!;
    assert.match(refused.stderr, new RegExp(`is in use by another rhema run \\(pid ${holderPid}\\) on ${hostname()}; its pid is not one this process can check \\(another pid namespace`));
    await writeFile(go, "");
    const held = await holder.done;
    assert.equal(held.code, 0, held.stderr);
    assert.deepEqual(await sideEffects(log, join(root, "run")), ONCE_EACH, "each side effect once");
  });
}

test("a rhema stopped (SIGSTOP) past the stale limit loses its run to a second one; after SIGCONT it starts nothing new and exits 3 naming the new owner", async (t) => {
  const root = await tempDir(t);
  const log = join(root, "log.txt");
  const go = join(root, "go");
  const out = join(root, "run");
  // The first request streams slowly: the first runner is stopped while it waits on it. The
  // check waits for `go`: the second runner still holds the lock when the first resumes.
  await writeFiles(root, { "suite/job.yaml": lineTask(log, { chunkDelayMs: 1_500, checkTail: `while [ ! -e ${go} ]; do sleep 0.05; done` }) });
  const args = ["run", "suite", "--out", out, "--sandbox", "off"];
  const env = cliEnv({ RHEMA_LOCK_STALE_MS: String(STALE_MS) });
  const stalled = startCli(args, { cwd: root, env, detached: true });
  t.after(() => killGroup(stalled.child));
  const events = join(out, "tasks/suite/job/default/1/events.jsonl");
  await waitFor(async () => (await readFile(events, "utf8").catch(() => "")).includes('"type":"request"'), 30_000);
  stalled.child.kill("SIGSTOP");
  t.after(() => stalled.child.kill("SIGCONT"));
  await waitFor(async () => (await heartbeatAgeMs(join(out, "rhema.lock"))) > STALE_MS + 300, 30_000);

  const next = startCli(args, { cwd: root, env, detached: true });
  t.after(() => killGroup(next.child));
  t.after(() => writeFile(go, "").catch(() => {}));
  await logged(log, "check"); // the second runner is in its check, holding the lock

  const resumedAt = Date.now();
  stalled.child.kill("SIGCONT");
  const lost = await endsWithin(stalled, 20_000, async () => killGroup(stalled.child));
  const tookMs = Date.now() - resumedAt;
  assert.equal(lost.code, 3, lost.stderr);
  assert.match(lost.stderr, new RegExp(`this run lost the run directory's lock — another rhema run \\(pid ${next.child.pid}\\) on ${hostname()} took it over`));
  assert.doesNotMatch(lost.stderr, /\n\s+at /, "no stack trace");
  assert.deepEqual(await sideEffects(log, out), ONCE_EACH, "the stopped runner ran nothing after SIGCONT: each side effect once");

  await writeFile(go, "");
  const finished = await next.done;
  assert.equal(finished.code, 0, finished.stderr);
  assert.deepEqual(await sideEffects(log, out), ONCE_EACH);
  const result = JSON.parse(await readFile(join(out, "tasks/suite/job/default/1/result.json"), "utf8"));
  assert.equal(result.status, "passed", "the new owner's result stands");
  t.diagnostic(`exit 3 came ${tookMs} ms after SIGCONT (heartbeat ${STALE_MS / 6} ms)`);
});

test("a command the stopped rhema had running when a rhema in another pid namespace took its run over is stopped after SIGCONT", { skip: NO_UNSHARE }, async (t) => {
  const root = await tempDir(t);
  const log = join(root, "log.txt");
  const [goTool, goCheck] = [join(root, "go-tool"), join(root, "go-check")];
  const out = join(root, "run");
  // The shell call appends its line, then waits for `go-tool` and would append "late"; the check waits for `go-check`.
  await writeFiles(root, { "suite/job.yaml": lineTask(log, {
    toolTail: `while [ ! -e ${goTool} ]; do sleep 0.05; done; echo late >> ${TOOL_LOG}`,
    checkTail: `while [ ! -e ${goCheck} ]; do sleep 0.05; done`,
  }) });
  const args = ["run", "suite", "--out", out, "--sandbox", "off"];
  const mark = `rhema-lock-test-${randomUUID()}`;
  const stalled = startCli(args, { cwd: root, env: cliEnv({ RHEMA_LOCK_STALE_MS: String(STALE_MS), RHEMA_TEST_MARK: mark }), detached: true });
  t.after(() => killGroup(stalled.child));
  t.after(async () => killAll(await survivorsAfter({ mark }, 0)));
  t.after(() => Promise.all([writeFile(goTool, ""), writeFile(goCheck, "")]).catch(() => {}));
  await logged(join(out, "tasks/suite/job/default/1/workspace", TOOL_LOG), "tool");
  stalled.child.kill("SIGSTOP");
  t.after(() => stalled.child.kill("SIGCONT"));
  await waitFor(async () => (await heartbeatAgeMs(join(out, "rhema.lock"))) > STALE_MS + 300, 30_000);

  // The new owner, in another pid namespace, cannot see the stalled runner's command to stop it.
  const next = startCli(args, { cwd: root, env: cliEnv({ RHEMA_LOCK_STALE_MS: String(STALE_MS) }), detached: true, launcher: NAMESPACE });
  t.after(() => killGroup(next.child));
  await logged(log, "check");

  stalled.child.kill("SIGCONT");
  const lost = await endsWithin(stalled, 20_000, () => writeFile(goTool, ""));
  assert.equal(lost.code, 3, lost.stderr);
  assert.match(lost.stderr, /this run lost the run directory's lock — another rhema run \(pid 1\) on /);
  assert.deepEqual(await survivorsAfter({ mark }, 5_000), [], "its command was stopped");
  await writeFile(goTool, "");

  await writeFile(goCheck, "");
  const finished = await next.done;
  assert.equal(finished.code, 0, finished.stderr);
  assert.deepEqual(await sideEffects(log, out), ONCE_EACH, "each side effect once; the stopped command never appended its late line");
});

test("RHEMA_LOCK_STALE_MS that is not a whole number of ms from 300 up is exit 2 naming it", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/job.yaml": lineTask(join(root, "log.txt")) });
  for (const value of ["0", "12s", "-5", "299"]) {
    const run = await runCli(["run", "suite", "--out", join(root, "run"), "--sandbox", "off"], { cwd: root, env: cliEnv({ RHEMA_LOCK_STALE_MS: value }) });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`Expected RHEMA_LOCK_STALE_MS to be a whole number of milliseconds from 300 up, got "${value}"`));
  }
  assert.deepEqual(await lines(join(root, "log.txt")), [], "nothing ran");
});
