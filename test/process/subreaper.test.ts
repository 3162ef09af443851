/**
 * The reaper for unsandboxed commands (src/process/subreaper.ts), through `runProcessGroup`: a
 * `(setsid …&)` escapee is stopped when the command ends, on its own or by timeout, and the
 * command's exit code or signal comes through the reaper unchanged; without perl the probe says
 * why. (The SIGKILL of rhema is test/cli/setsid-orphans.e2e.test.ts.)
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { runProcessGroup, type GroupRun } from "../../src/process/process-group.js";
import { probeReaper } from "../../src/process/subreaper.js";
import { DEFAULT_PATH } from "../../src/tools/shell.js";
import { killAll, liveRunProcesses } from "../support/run-processes.js";
import { tempDir } from "../support/temp-dir.js";

const reaper = await probeReaper();

function run(command: string, cwd: string, extra: Partial<GroupRun> = {}) {
  return runProcessGroup({ command, cwd, env: { PATH: DEFAULT_PATH }, timeoutMs: 20_000, signal: new AbortController().signal, onOutput: () => {}, ...extra });
}

test("perl is here (Essential on Debian and Ubuntu; CI has it) and accepts PR_SET_CHILD_SUBREAPER", () => {
  assert.ok(reaper.ok, reaper.ok ? "" : reaper.reason);
});

test("without perl on the search path the probe says so", async () => {
  const probe = await probeReaper({ path: "/nonexistent-rhema-bin" });
  assert.deepEqual(probe, { ok: false, reason: "perl is not installed (not found on /nonexistent-rhema-bin)" });
});

test("a setsid escapee is stopped when the command ends, and the call says so", async (t) => {
  const ws = await tempDir(t);
  const mark = `rhema-reaper-${randomBytes(5).toString("hex")}`;
  t.after(async () => killAll(await liveRunProcesses({ mark })));
  const outcome = await run(`(setsid sh -c 'sleep 300; true' ${mark} &); echo left`, ws);
  assert.deepEqual(outcome, { exitCode: 0, exitSignal: null, killed: null, straysKilled: true });
  assert.deepEqual(await liveRunProcesses({ mark }), []);
});

test("a setsid escapee of a command stopped by its timeout is stopped too", async (t) => {
  const ws = await tempDir(t);
  const mark = `rhema-reaper-${randomBytes(5).toString("hex")}`;
  t.after(async () => killAll(await liveRunProcesses({ mark })));
  const outcome = await run(`(setsid sh -c 'sleep 300; true' ${mark} &); sleep 60`, ws, { timeoutMs: 1_000 });
  assert.equal(outcome.killed, "timeout");
  assert.deepEqual(await liveRunProcesses({ mark }), []);
});

test("the command's exit code and signal come through the reaper unchanged; nothing left is nothing said", async (t) => {
  const ws = await tempDir(t);
  assert.deepEqual(await run("exit 7", ws), { exitCode: 7, exitSignal: null, killed: null, straysKilled: false });
  assert.deepEqual(await run("kill -KILL $$", ws), { exitCode: null, exitSignal: "SIGKILL", killed: null, straysKilled: false });
  assert.deepEqual(await run("kill -TERM $$", ws), { exitCode: null, exitSignal: "SIGTERM", killed: null, straysKilled: false });
});
