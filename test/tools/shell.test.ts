import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CancelledError } from "../../src/core/errors.js";
import type { ProcessStart } from "../../src/core/tool.js";
import { currentPidScope } from "../../src/process/pid-scope.js";
import { groupRunning, isRunning } from "../../src/process/process-table.js";
import { probeReaper } from "../../src/process/subreaper.js";
import { DEFAULT_PATH, SHELL_HEAD_BYTES, SHELL_TAIL_BYTES, shellTool } from "../../src/tools/shell.js";
import { tempDir } from "../support/temp-dir.js";
import { callTool, textOf, toolContext, toolErrorOf } from "./tool-harness.js";

const tool = shellTool();

/**
 * Each pid (and the group led by the last one) must be gone. At once, none may still run; a
 * dead one may linger as a zombie until PID 1 reaps it (not instant in every container), so
 * ESRCH from kill(pid, 0) is awaited for a few seconds.
 */
async function assertGone(pids: number[]): Promise<void> {
  for (const pid of pids) assert.equal(await isRunning(pid), false, `process ${pid} still runs`);
  assert.equal(await groupRunning(pids.at(-1)!), false, `process group ${pids.at(-1)} still runs`);
  const deadline = Date.now() + 5000;
  const reaped = (): boolean => [...pids, -pids.at(-1)!].every((p) => {
    try {
      process.kill(p, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "ESRCH";
    }
  });
  while (!reaped() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, `process ${pid} is still there`);
  assert.throws(() => process.kill(-pids.at(-1)!, 0), { code: "ESRCH" }, `process group ${pids.at(-1)} is still there`);
}

function pidsIn(text: string): number[] {
  const m = /(\d+) (\d+)/.exec(text);
  assert.ok(m, `no pids in ${JSON.stringify(text)}`);
  return [Number(m[1]), Number(m[2])];
}

test("runs bash in the workspace and reports output and exit code", async (t) => {
  const ws = await tempDir(t);
  const result = await callTool(tool, { command: "pwd; echo to-stderr >&2; sleep 0.05; echo [[ok]]; exit 3" }, toolContext(ws));
  assert.deepEqual(result, { content: `${ws}\nto-stderr\n[[ok]]\n[exit code 3]`, isError: true });
  assert.deepEqual(await callTool(tool, { command: "true" }, toolContext(ws)), { content: "(no output)\n[exit code 0]" });
});

test("stdin is closed: a command reading it sees end of file", async (t) => {
  const ws = await tempDir(t);
  assert.deepEqual(await callTool(tool, { command: "cat; echo done" }, toolContext(ws)), { content: "done\n[exit code 0]" });
});

test("a command killed by a signal says so", async (t) => {
  const ws = await tempDir(t);
  assert.deepEqual(await callTool(tool, { command: "kill -9 $$" }, toolContext(ws)), { content: "(no output)\n[killed by SIGKILL]", isError: true });
});

test("a timeout kills `sleep 1000 & sleep 1000; wait` entirely", async (t) => {
  const ws = await tempDir(t);
  const started = Date.now();
  const result = await callTool(tool, { command: "sleep 1000 & echo $! $$; sleep 1000; wait", timeoutMs: 1000 }, toolContext(ws));
  assert.ok(Date.now() - started < 6000, "took too long");
  const text = textOf(result);
  assert.equal(result.isError, true);
  assert.match(text, /\[timed out after 1000 ms; the command and its child processes were killed\]$/);
  await assertGone(pidsIn(text));
});

test("a timeout says only that it killed the command, even when a member outlives the shell's SIGTERM", async (t) => {
  // The background subshell ignores SIGTERM, so it is still there when the shell has died and
  // the reaper looks: killed with the command, it is not a stray the command left behind.
  const ws = await tempDir(t);
  const result = await callTool(tool, { command: "(trap '' TERM; sleep 1000) & echo $! $$; sleep 1000", timeoutMs: 500 }, toolContext(ws));
  const text = textOf(result);
  assert.match(text, /\[timed out after 500 ms; the command and its child processes were killed\]$/);
  await assertGone(pidsIn(text));
});

test("a cancel (AbortController) kills `sleep 1000 & sleep 1000; wait` entirely and throws", async (t) => {
  const ws = await tempDir(t);
  const controller = new AbortController();
  const run = tool.run({ command: "sleep 1000 & echo $! $$ > pids; sleep 1000; wait" }, toolContext(ws, { signal: controller.signal }));
  setTimeout(() => controller.abort(), 500);
  await assert.rejects(run, CancelledError);
  await assertGone(pidsIn(await readFile(join(ws, "pids"), "utf8")));
});

test("a process that left the group with setsid is killed too", async (t) => {
  const ws = await tempDir(t);
  const result = await callTool(tool, { command: "setsid sleep 1000 & echo $! $$; sleep 1000", timeoutMs: 800 }, toolContext(ws));
  const [escaped, shell] = pidsIn(textOf(result));
  assert.equal(await isRunning(escaped!), false, "the setsid process still runs");
  await assertGone([escaped!, shell!]);
});

test("background processes still running when the command ends are stopped", async (t) => {
  const ws = await tempDir(t);
  const result = await callTool(tool, { command: "sleep 1000 & echo $! $$" }, toolContext(ws));
  const text = textOf(result);
  assert.match(text, /\[exit code 0\]\n\[processes it left running in the background were stopped\]$/);
  await assertGone(pidsIn(text));
});

test("50 MB of output is capped to head and tail without exhausting memory", async (t) => {
  const ws = await tempDir(t);
  global.gc?.();
  const before = process.memoryUsage().rss;
  const result = await callTool(tool, { command: "echo START; head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END" }, toolContext(ws));
  const growth = process.memoryUsage().rss - before;
  const text = textOf(result);
  assert.ok(text.length < SHELL_HEAD_BYTES + SHELL_TAIL_BYTES + 200, `result is ${text.length} chars`);
  assert.ok(text.startsWith("START\nxxx"));
  assert.match(text, /\n… \[\d+ bytes of output omitted; 50000011 bytes in all\] …\nx+\nEND\n\[exit code 0\]$/);
  assert.ok(growth < 64 * 1024 * 1024, `rss grew by ${Math.round(growth / 1024 / 1024)} MB`);
});

test("commands start from the env the caller hands in; a secret in it is hidden unless allowEnv names it", async (t) => {
  const ws = await tempDir(t);
  const withEnv = shellTool({ env: { RHEMA_TEST_API_KEY: "sk-rhema-test", RHEMA_TEST_PLAIN: "plain", RHEMA_TEST_UNSET: undefined } });
  const command = 'echo "key=${RHEMA_TEST_API_KEY:-unset} plain=$RHEMA_TEST_PLAIN unset=${RHEMA_TEST_UNSET-absent}"; env | grep -c sk-rhema-test';
  assert.equal(textOf(await callTool(withEnv, { command }, toolContext(ws))), "key=unset plain=plain unset=absent\n0\n[exit code 1]");
  assert.equal(
    textOf(await callTool(withEnv, { command }, toolContext(ws, { allowEnv: ["RHEMA_TEST_API_KEY"] }))),
    "key=sk-rhema-test plain=plain unset=absent\n1\n[exit code 0]",
  );
});

test("without an env, commands start from an empty one (not this process's) with a PATH that leaves the workspace off it", async (t) => {
  const ws = await tempDir(t);
  process.env.RHEMA_TEST_AMBIENT = "ambient";
  t.after(() => delete process.env.RHEMA_TEST_AMBIENT);
  await writeFile(join(ws, "planted"), "#!/bin/sh\necho planted\n", { mode: 0o755 });
  const command = 'echo "ambient=${RHEMA_TEST_AMBIENT:-unset} home=${HOME:-unset}"; env | grep -c "^RHEMA_TEST"; ls -d /; echo "$PATH"; planted';
  assert.equal(
    textOf(await callTool(tool, { command }, toolContext(ws))),
    `ambient=unset home=unset\n0\n/\n${DEFAULT_PATH}\nbash: line 1: planted: command not found\n[exit code 127]`,
  );
});

test("plan gives the command and no paths; bad input names the field", async (t) => {
  const ws = await tempDir(t);
  assert.deepEqual(await tool.plan!({ command: "ls -la" }, toolContext(ws)), { paths: [], command: "ls -la" });
  assert.equal(await toolErrorOf(callTool(tool, { command: "  " }, toolContext(ws))), "`command` is empty");
  assert.equal(
    await toolErrorOf(callTool(tool, { command: "ls", timeoutMs: 10 }, toolContext(ws))),
    "Invalid input for `shell`: `timeoutMs` must be an integer from 100 to 600000 (got 10)",
  );
});

test("a signal aborted before the call starts nothing", async (t) => {
  const ws = await tempDir(t);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(tool.run({ command: "touch made" }, toolContext(ws, { signal: controller.signal })), CancelledError);
  await assert.rejects(readFile(join(ws, "made")), { code: "ENOENT" });
});

test("ctx.onStarted sees the call's process group before the command runs; then the command runs in it", async (t) => {
  const ws = await tempDir(t);
  const seen: Array<ProcessStart & { ranYet: boolean; groupExists: boolean; procStart: number }> = [];
  const onStarted = async (info: ProcessStart): Promise<void> => {
    await new Promise((r) => setTimeout(r, 200));
    const stat = await readFile(`/proc/${info.pgid}/stat`, "utf8");
    let groupExists = true;
    try {
      process.kill(-info.pgid, 0);
    } catch {
      groupExists = false;
    }
    seen.push({ ...info, ranYet: existsSync(join(ws, "ran")), groupExists, procStart: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) });
  };
  const result = await callTool(tool, { command: "touch ran; echo $$; awk '{ print $5 }' /proc/$$/stat; awk '{ print $4 }' /proc/$$/stat" }, toolContext(ws, { onStarted }));
  const [shellPid, pgid, parent] = textOf(result).split("\n").map((l) => Number(l.trim()));
  assert.equal(seen.length, 1);
  const s = seen[0]!;
  const pidScope = await currentPidScope();
  assert.deepEqual(s, { host: hostname(), pgid: s.pgid, startTime: s.procStart, ...(pidScope ? { pidScope } : {}), ranYet: false, groupExists: true, procStart: s.procStart });
  // The recorded group is led by the shell itself, or by the reaper that runs it (subreaper.ts)
  // when perl is there — and then the shell is the reaper's child, in a group of its own, so that
  // a command killing its own group cannot kill the reaper.
  if ((await probeReaper()).ok) assert.deepEqual([parent, pgid], [s.pgid, shellPid], "the shell runs as the reaper's child, leading a group of its own");
  else assert.deepEqual([shellPid, pgid], [s.pgid, s.pgid], "the shell leads the recorded group");
});

test("an onStarted that throws: the group is killed, nothing ran, the error is rethrown", async (t) => {
  const ws = await tempDir(t);
  let pgid = 0;
  const failure = new Error("checkpoint failed");
  const onStarted = async (info: { pgid: number }): Promise<void> => {
    pgid = info.pgid;
    throw failure;
  };
  await assert.rejects(tool.run({ command: "touch ran" }, toolContext(ws, { onStarted })), (err) => err === failure);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(existsSync(join(ws, "ran")), false);
  await assertGone([pgid]);
});
