/** Reaping on resume: a recorded group is stopped only if it is still the same group, on this host, in this pid namespace and boot. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { hostname } from "node:os";
import { test } from "node:test";
import { currentPidScope } from "../../src/process/pid-scope.js";
import { type ProcessGroupIdentity, stopRecordedGroup } from "../../src/process/process-identity.js";
import { groupRunning, isRunning, processStartTime } from "../../src/process/process-table.js";
import { TAKE_EVERY_HANDLE, nodeUnderFileLimit } from "../support/file-limit.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A detached `bash -c` group, its identity, and a cleanup that kills it whatever happened. */
async function group(t: { after(fn: () => unknown): void }, script: string): Promise<ProcessGroupIdentity & { pids: () => Promise<number[]> }> {
  const child = spawn("bash", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  await once(child, "spawn");
  const pgid = child.pid!;
  t.after(() => {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // gone
    }
  });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  const startTime = (await processStartTime(pgid))!;
  await sleep(200);
  return { host: hostname(), pgid, startTime, pids: async () => out.trim().split(/\s+/).map(Number) };
}

test("a live group on this host with the recorded start time is stopped, its background job too", async (t) => {
  const g = await group(t, "sleep 30 & echo $!; sleep 30");
  const [background] = await g.pids();
  assert.equal(await isRunning(background!), true);
  assert.equal(await stopRecordedGroup(g, { graceMs: 500 }), "stopped");
  assert.equal(await groupRunning(g.pgid), false);
  assert.equal(await isRunning(background!), false);
});

test("a group whose leader exited but whose background job runs on is stopped", async (t) => {
  const g = await group(t, "sleep 30 & echo $!");
  const [background] = await g.pids();
  assert.equal(await isRunning(g.pgid), false);
  assert.equal(await isRunning(background!), true);
  assert.equal(await stopRecordedGroup(g, { graceMs: 500 }), "stopped");
  assert.equal(await isRunning(background!), false);
});

test("a group that is gone is reported gone", async (t) => {
  const g = await group(t, "exit 0");
  assert.equal(await stopRecordedGroup(g), "gone");
});

test("a pid now held by another process (another start time) is never signalled", async (t) => {
  const g = await group(t, "sleep 30");
  assert.equal(await stopRecordedGroup({ ...g, startTime: g.startTime - 1 }, { graceMs: 100 }), "gone");
  await sleep(200);
  assert.equal(await isRunning(g.pgid), true, "the other process was signalled");
});

test("a group recorded on another host is never signalled", async (t) => {
  const g = await group(t, "sleep 30");
  assert.equal(await stopRecordedGroup({ ...g, host: `not-${hostname()}` }, { graceMs: 100 }), "elsewhere");
  await sleep(200);
  assert.equal(await isRunning(g.pgid), true, "a group of another host was signalled");
});

// The pgid a checkpoint recorded in another pid namespace (another container, `unshare -p`) or
// before a reboot names, here, whatever group holds that number now: never signalled. The group
// below stands for that unrelated group: its leader is gone (no start time to compare), its
// member runs on, which is the case a host-name check alone let through.
for (const [what, differs] of [["pid namespace", { pidNamespace: "pid:[1]" }], ["boot", { bootId: "00000000-0000-0000-0000-000000000000" }]] as const) {
  test(`a group recorded in another ${what} of this host is never signalled, even where its number names a live group here`, async (t) => {
    const here = await currentPidScope();
    if (here === null) return t.skip("no /proc to tell pid namespaces apart");
    const g = await group(t, "sleep 30 & echo $!");
    const [member] = await g.pids();
    assert.equal(await isRunning(g.pgid), false);
    assert.equal(await stopRecordedGroup({ ...g, pidScope: { ...here, ...differs } }, { graceMs: 100 }), "elsewhere");
    await sleep(200);
    assert.equal(await isRunning(member!), true, `a group recorded in another ${what} was signalled`);
    assert.equal(await stopRecordedGroup({ ...g, pidScope: here }, { graceMs: 500 }), "stopped");
    assert.equal(await isRunning(member!), false);
  });
}

test("where the scope cannot be told here, a group recorded with one is not signalled", async (t) => {
  const g = await group(t, "sleep 30");
  const here = await currentPidScope();
  if (here === null) return t.skip("no /proc");
  assert.equal(await stopRecordedGroup({ ...g, pidScope: here }, { graceMs: 100, pidScope: null }), "elsewhere");
  assert.equal(await isRunning(g.pgid), true);
});

test("out of file handles, a live group is not taken for gone: the questions about it throw, and a group kill still kills it", async (t) => {
  // A child under a low `ulimit -n` asks about a live group of its own once it has taken every file handle.
  const module = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
  const script = `
    import { spawn } from "node:child_process";
    import { once } from "node:events";
    import { closeSync, openSync } from "node:fs";
    import { hostname } from "node:os";
    const { stopRecordedGroup } = await import(${module("../../src/process/process-identity.js")});
    const { groupRunning, isRunning, processStartTime } = await import(${module("../../src/process/process-table.js")});
    const { killGroup } = await import(${module("../../src/process/group-kill.js")});
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    await once(child, "spawn");
    const exited = once(child, "exit");
    const identity = { host: hostname(), pgid: child.pid, startTime: await processStartTime(child.pid) };
    ${TAKE_EVERY_HANDLE}
    const said = (p) => p.then((v) => String(v), (err) => "threw " + err.code);
    const answers = {
      stop: await said(stopRecordedGroup(identity, { graceMs: 100 })),
      groupRunning: await said(groupRunning(child.pid)),
      isRunning: await said(isRunning(child.pid)),
    };
    await killGroup(child.pid, 100);
    const [, signal] = await exited;
    for (const fd of held) closeSync(fd);
    process.stdout.write(JSON.stringify({ answers, signal, held: held.length }));
  `;
  const { status, stdout, stderr } = nodeUnderFileLimit(256, script);
  t.diagnostic(stdout);
  assert.equal(status, 0, stderr);
  const { answers, signal, held } = JSON.parse(stdout) as { answers: Record<string, string>; signal: string; held: number };
  assert.ok(held > 0);
  assert.deepEqual(answers, { stop: "threw EMFILE", groupRunning: "threw EMFILE", isRunning: "threw EMFILE" }, "no answer is made up from a /proc that could not be read");
  assert.equal(signal, "SIGTERM", "the group kill signalled it all the same");
});
