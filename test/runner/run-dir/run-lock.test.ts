/** The run directory's lock: exclusive while its owner lives, taken over once it is gone. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OutputError } from "../../../src/core/errors.js";
import { RunLockedError, acquireRunLock as acquireLockFile } from "../../../src/runner/run-dir/run-lock.js";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import { tempDir } from "../../support/temp-dir.js";

const NOW = new Date("2026-03-04T05:06:07Z");
const LOCK_FILE = "rhema.lock";
/** The lock of the run directory `runDir`, as the runner takes it. */
const acquireRunLock = (runDir: string, pid: number, now: Date) => new RunDir(runDir).lock(pid, now);
const exists = (path: string) => access(path).then(() => true, () => false);

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

test("creates the lock file with the owner's pid and start, 0600, in a private folder", async (t) => {
  const runDir = join(await tempDir(t), "run");
  const lock = await acquireRunLock(runDir, 4242, NOW);
  assert.equal(lock.tookOver, false);
  const path = join(runDir, LOCK_FILE);
  assert.deepEqual(JSON.parse(await readFile(path, "utf8")), { pid: 4242, startedAt: "2026-03-04T05:06:07.000Z" });
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
  assert.deepEqual(JSON.parse(await readFile(path, "utf8")), { pid: process.pid, startedAt: NOW.toISOString() });
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal(await exists(`${path}.${process.pid}`), false, "no temp file is left behind");
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

test("a lock the same pid left behind is taken over, not a dead end", async (t) => {
  const runDir = await tempDir(t);
  await acquireRunLock(runDir, process.pid, NOW);
  const again = await acquireRunLock(runDir, process.pid, NOW);
  assert.equal(again.tookOver, true);
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
  await acquireLockFile(new RunDir(runDir).lockPath, 4242, NOW);
  assert.equal(JSON.parse(await readFile(join(runDir, LOCK_FILE), "utf8")).pid, 4242);
});

test("a run directory under a file is an OutputError naming it, not a lock taken", async (t) => {
  const root = await tempDir(t);
  await writeFile(join(root, "file"), "not a folder");
  const runDir = join(root, "file", "run");
  await assert.rejects(acquireRunLock(runDir, process.pid, NOW), (err: unknown) =>
    err instanceof OutputError && err.errno === "ENOTDIR" && err.operation === "create" && err.path === runDir);
});
