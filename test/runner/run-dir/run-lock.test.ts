/**
 * The run directory's lock: exclusive while its owner lives (host, pid, start time, the pid's
 * boot and namespace, a heartbeat), taken over once it is gone — its pid dead or now another
 * process (only where that pid can be looked at: the same pid namespace on the same boot), or
 * its heartbeat too old; and a holder that finds its lock taken stops (lock-loss tests).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, readdir, readlink, stat, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { compiled } from "../../support/paths.js";
import { currentPidScope } from "../../../src/process/pid-scope.js";
import { processStartTime } from "../../../src/runner/run-dir/lock-owner.js";
import { OutputError } from "../../../src/core/errors.js";
import { RunLockedError, acquireRunLock as acquireLockFile } from "../../../src/runner/run-dir/run-lock.js";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import { tempDir } from "../../support/temp-dir.js";
import { exists } from "../../support/wait.js";

const NOW = new Date("2026-03-04T05:06:07Z");
const LOCK_FILE = "rhema.lock";
/** The lock of the run directory `runDir`, as the runner takes it. */
const acquireRunLock = (runDir: string, pid: number, now: Date) => new RunDir(runDir).lock(pid, now);

/** A real live process to own a lock; killed when the test ends. */
function livePid(t: { after(fn: () => unknown): void }): number {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  t.after(() => child.kill("SIGKILL"));
  return child.pid!;
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn("true", [], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

test("creates the lock file with the owner's host, pid, process start time and start, 0600, in a private folder", async (t) => {
  const runDir = join(await tempDir(t), "run");
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  t.after(() => lock.release());
  assert.equal(lock.tookOver, false);
  const path = join(runDir, LOCK_FILE);
  const startTime = await processStartTime(process.pid);
  assert.ok(startTime !== null && startTime > 0, "this machine has /proc");
  const pidScope = {
    bootId: (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim(),
    pidNamespace: await readlink("/proc/self/ns/pid"),
  };
  assert.match(pidScope.pidNamespace, /^pid:\[\d+\]$/);
  assert.deepEqual(JSON.parse(await readFile(path, "utf8")), { host: hostname(), pid: process.pid, processStartTime: startTime, startedAt: "2026-03-04T05:06:07.000Z", pidScope });
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(runDir)).mode & 0o777, 0o700);
});

test("refuses a lock held by a live process, naming its pid", async (t) => {
  const runDir = await tempDir(t);
  const owner = livePid(t);
  await acquireRunLock(runDir, owner, NOW);
  await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
    err instanceof RunLockedError && err.code === "run_locked" && err.message.includes(`pid ${owner}`) && err.message.includes(runDir));
  assert.equal(JSON.parse(await readFile(join(runDir, LOCK_FILE), "utf8")).pid, owner, "the owner keeps its lock");
});

test("takes over the lock of a process that is gone", async (t) => {
  const runDir = await tempDir(t);
  await acquireRunLock(runDir, await deadPid(), NOW);
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(lock.tookOver, true);
  const path = join(runDir, LOCK_FILE);
  assert.equal(JSON.parse(await readFile(path, "utf8")).pid, process.pid);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.deepEqual(await readdir(runDir), [LOCK_FILE], "no temp file or guard is left behind");
  await lock.release();
});

/** The pid of a zombie: a child that exits after its shell became a `sleep`, which never waits for it (the shell would reap it); gone when the test ends. */
async function zombiePid(t: { after(fn: () => unknown): void }): Promise<number> {
  const parent = spawn("/bin/sh", ["-c", "sleep 0.2 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
  t.after(() => parent.kill("SIGKILL"));
  const pid = Number((await new Promise<Buffer>((resolve) => parent.stdout!.once("data", resolve))).toString().trim());
  for (;;) {
    const state = (await readFile(`/proc/${pid}/stat`, "utf8")).replace(/^.*\) /s, "")[0];
    if (state === "Z") return pid;
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("takes over the lock of a killed owner that waits to be reaped (a zombie holds nothing)", async (t) => {
  const runDir = await tempDir(t);
  await acquireRunLock(runDir, await zombiePid(t), NOW);
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(lock.tookOver, true);
  assert.equal(JSON.parse(await readFile(join(runDir, LOCK_FILE), "utf8")).pid, process.pid);
  await lock.release();
});

for (const [what, text] of [["an empty", ""], ["a torn", '{"pid": 12'], ["a pid-less", '{"startedAt":"x"}\n']] as const) {
  test(`treats ${what} lock file as stale and takes it over`, async (t) => {
    const runDir = await tempDir(t);
    await writeFile(join(runDir, LOCK_FILE), text);
    const lock = await acquireRunLock(runDir, process.pid, NOW);
    assert.equal(lock.tookOver, true);
    assert.equal(JSON.parse(await readFile(join(runDir, LOCK_FILE), "utf8")).pid, process.pid);
  });
}

test("a lock with this pid that an earlier process of this pid namespace left (another start time) is taken over, not a dead end", async (t) => {
  const runDir = await tempDir(t);
  const pidScope = await currentPidScope();
  await writeFile(join(runDir, LOCK_FILE), JSON.stringify({ host: hostname(), pid: process.pid, processStartTime: 1, startedAt: "x", pidScope }));
  const again = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(again.tookOver, true);
  await again.release();
});

test("a lock that does not say which pid namespace its pid is of (an older rhema's) is judged by its heartbeat alone, even with this pid", async (t) => {
  for (const owner of [{ pid: process.pid, startedAt: "x" }, { host: hostname(), pid: process.pid, processStartTime: 1, startedAt: "x" }, { host: hostname(), pid: 1, processStartTime: 1, startedAt: "x" }]) {
    const runDir = await tempDir(t);
    const path = join(runDir, LOCK_FILE);
    await writeFile(path, JSON.stringify(owner));
    await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
      err instanceof RunLockedError && err.message.includes(`(pid ${owner.pid})`) && err.message.includes("taken over only once its heartbeat is 30 s old"));
    const old = new Date(Date.now() - 31_000);
    await utimes(path, old, old);
    const again = await acquireRunLock(runDir, process.pid, NOW);
    assert.equal(again.tookOver, true, JSON.stringify(owner));
    await again.release();
  }
});

for (const [what, differs] of [["another pid namespace (a container, unshare -p)", { pidNamespace: "pid:[1]" }], ["another boot", { bootId: "00000000-0000-0000-0000-000000000000" }]] as const) {
  test(`a lock of a pid in ${what}, same host name, is not judged by that pid here: only its heartbeat frees it`, async (t) => {
    const runDir = await tempDir(t);
    const path = join(runDir, LOCK_FILE);
    const pidScope = { ...(await currentPidScope())!, ...differs };
    // Its pid is dead here, and pid 1 is alive here with another start time: neither says anything about the owner.
    for (const pid of [await deadPid(), 1, process.pid]) {
      await writeFile(path, JSON.stringify({ host: hostname(), pid, processStartTime: 5, startedAt: NOW.toISOString(), pidScope }));
      await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
        err instanceof RunLockedError && err.message.includes(`(pid ${pid}) on ${hostname()}`) && err.message.includes("another pid namespace"));
    }
    const old = new Date(Date.now() - 31_000);
    await utimes(path, old, old);
    const lock = await acquireRunLock(runDir, process.pid, NOW);
    assert.equal(lock.tookOver, true);
    await lock.release();
  });
}

test("a lock this very process holds is refused", async (t) => {
  const runDir = await tempDir(t);
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  await assert.rejects(acquireRunLock(runDir, process.pid, NOW), RunLockedError);
  await lock.release();
});

test("a lock of this pid namespace with the pid of a live unrelated process and another start time is taken over (the pid was reused)", async (t) => {
  const runDir = await tempDir(t);
  const live = livePid(t);
  const start = await processStartTime(live);
  assert.ok(start !== null);
  const pidScope = await currentPidScope();
  for (const pid of [1, live]) {
    await writeFile(join(runDir, LOCK_FILE), JSON.stringify({ host: hostname(), pid, processStartTime: start + 12345, startedAt: NOW.toISOString(), pidScope }));
    const lock = await acquireRunLock(runDir, process.pid, NOW);
    assert.equal(lock.tookOver, true, `pid ${pid}`);
    await lock.release();
  }
});

test("a lock of a live rhema (another process holding it, heartbeat running) is refused", async (t) => {
  const runDir = await tempDir(t);
  const module = compiled("src/runner/run-dir/run-lock.js");
  const holder = spawn(process.execPath, ["--input-type=module", "-e",
    `const { acquireRunLock } = await import(${JSON.stringify(module)});
     await acquireRunLock(${JSON.stringify(join(runDir, LOCK_FILE))}, process.pid, new Date(), { heartbeatMs: 100 });
     console.log("locked"); setInterval(() => {}, 1000);`], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => holder.kill("SIGKILL"));
  await new Promise((resolve) => holder.stdout!.once("data", resolve));
  const before = (await stat(join(runDir, LOCK_FILE))).mtimeMs;
  await new Promise((r) => setTimeout(r, 400));
  assert.ok((await stat(join(runDir, LOCK_FILE))).mtimeMs > before, "the holder's heartbeat refreshes the lock");
  await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
    err instanceof RunLockedError && err.message.includes(`(pid ${holder.pid}) on ${hostname()}`));
  holder.kill("SIGKILL");
  await new Promise((r) => holder.once("exit", r));
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(lock.tookOver, true, "once it is killed, its lock is taken over at once");
  await lock.release();
});

test("a lock from another host is refused while its heartbeat is fresh, and taken over once the heartbeat is older than the limit", async (t) => {
  const runDir = await tempDir(t);
  const path = join(runDir, LOCK_FILE);
  await writeFile(path, JSON.stringify({ host: "ci-runner-7", pid: 1, processStartTime: 5, startedAt: NOW.toISOString() }));
  await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
    err instanceof RunLockedError && err.message.includes("(pid 1) on ci-runner-7"));
  const old = new Date(Date.now() - 31_000);
  await utimes(path, old, old);
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(lock.tookOver, true);
  await lock.release();
});

test("the holder's heartbeat keeps a long run's lock from going stale", async (t) => {
  const runDir = await tempDir(t);
  const lock = await acquireLockFile(join(runDir, LOCK_FILE), process.pid, NOW, { heartbeatMs: 50, host: "here" });
  await new Promise((r) => setTimeout(r, 500));
  await assert.rejects(acquireLockFile(join(runDir, LOCK_FILE), 4242, NOW, { staleMs: 300, host: "elsewhere" }), RunLockedError);
  await lock.release();
});

test("two takers of one stale lock: exactly one wins", async (t) => {
  const runDir = await tempDir(t);
  const path = join(runDir, LOCK_FILE);
  await writeFile(path, JSON.stringify({ host: "gone", pid: 1, processStartTime: 5, startedAt: "x" }));
  const old = new Date(Date.now() - 60_000);
  await utimes(path, old, old);
  const alive = async () => ({ alive: true, startTime: null });
  const outcomes = await Promise.allSettled([1001, 1002, 1003].map((pid) => acquireLockFile(path, pid, NOW, { host: "h", probe: alive })));
  assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1, JSON.stringify(outcomes.map((o) => o.status)));
  for (const o of outcomes) if (o.status === "fulfilled") await o.value.release();
});

test("release leaves a lock that another runner took over meanwhile", async (t) => {
  const runDir = await tempDir(t);
  const path = join(runDir, LOCK_FILE);
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  const theirs = JSON.stringify({ host: "other", pid: 7, processStartTime: 1, startedAt: "y" });
  await writeFile(path, theirs);
  await lock.release();
  assert.equal(await readFile(path, "utf8"), theirs);
});

test("release removes the lock file, so the next runner creates it afresh", async (t) => {
  const runDir = await tempDir(t);
  const lock = await acquireRunLock(runDir, livePid(t), NOW);
  await lock.release();
  assert.equal(await exists(join(runDir, LOCK_FILE)), false);
  await lock.release(); // a second release is harmless
  const next = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(next.tookOver, false);
});

test("the lock file sits where RunDir names it", async (t) => {
  const runDir = join(await tempDir(t), "run");
  const lock = await acquireLockFile(new RunDir(runDir).lockPath, 4242, NOW);
  assert.equal(JSON.parse(await readFile(join(runDir, LOCK_FILE), "utf8")).pid, 4242);
  await lock.release();
});

test("a run directory under a file is an OutputError naming it, not a lock taken", async (t) => {
  const root = await tempDir(t);
  await writeFile(join(root, "file"), "not a folder");
  const runDir = join(root, "file", "run");
  await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
    err instanceof OutputError && err.errno === "ENOTDIR" && err.operation === "create" && err.path === runDir);
});

test("taking the lock removes the temp files a killed run's atomic writes left beside the run's own files", async (t) => {
  const runDir = await tempDir(t);
  for (const name of ["manifest.json.3735928559", "junit.xml.12", "summary.md.7", "stats.json", "notes.txt.12", "rhema.lock.4242"]) await writeFile(join(runDir, name), "x");
  const lock = await acquireRunLock(runDir, process.pid, NOW);
  assert.deepEqual((await readdir(runDir)).sort(), ["notes.txt.12", LOCK_FILE, "rhema.lock.4242", "stats.json"].sort(), "another runner's lock attempt is left alone");
  await lock.release();
});
