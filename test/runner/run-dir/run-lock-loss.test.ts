/**
 * A holder that loses its lock stops: the heartbeat re-reads the lock on every beat and aborts
 * `lost` once another runner owns it, and `confirm()` — awaited before each side effect — reads
 * it itself, so a holder resumed after a stall (whose heartbeat has not fired yet) finds out at
 * its first boundary. A stalled holder and a taker racing for one stale lock: exactly one goes on.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, readFile, rename, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LockLostError, RunLockedError, acquireRunLock } from "../../../src/runner/run-dir/run-lock.js";
import { tempDir } from "../../support/temp-dir.js";
import { waitFor } from "../../support/wait.js";

const NOW = new Date("2026-03-04T05:06:07Z");
const THEIRS = { host: "ci-9", pid: 4242, processStartTime: 7, startedAt: "2026-03-04T06:00:00.000Z", pidScope: null };
/** A heartbeat that never fires within a test: a holder stalled, or resumed before its timer. */
const NO_BEAT = 3_600_000;

async function makeOld(path: string, ageMs: number): Promise<void> {
  const old = new Date(Date.now() - ageMs);
  await utimes(path, old, old);
}

test("the heartbeat finds the lock another's: `lost` is aborted with a LockLostError naming the new owner, and the lock is left to it", async (t) => {
  const path = join(await tempDir(t), "rhema.lock");
  const lock = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: 30 });
  await writeFile(path, JSON.stringify(THEIRS));
  await waitFor(async () => lock.lost.aborted, 10_000); // the heartbeat's timer is unref'd: the poll keeps the loop alive
  const reason: unknown = lock.lost.reason;
  assert.ok(reason instanceof LockLostError && reason.code === "lock_lost", String(reason));
  assert.match((reason as Error).message, /another rhema run \(pid 4242\) on ci-9 took it over/);
  await assert.rejects(lock.confirm(), LockLostError);
  await lock.release();
  assert.deepEqual(JSON.parse(await readFile(path, "utf8")), THEIRS, "the new owner's lock is never touched");
});

test("a boundary finds the lock taken before any heartbeat runs (a holder just resumed): confirm throws and `lost` is aborted", async (t) => {
  const path = join(await tempDir(t), "rhema.lock");
  const lock = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: NO_BEAT, staleMs: 300 });
  await lock.confirm();
  await writeFile(path, JSON.stringify(THEIRS));
  await assert.rejects(lock.confirm(), (err: unknown) => err instanceof LockLostError && err.message.includes("(pid 4242) on ci-9"));
  assert.equal(lock.lost.aborted, true);
});

test("a lock another runner renamed over the holder's while its heartbeat is fresh (as a taker publishes) is seen at the holder's next boundary", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "rhema.lock");
  const lock = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: NO_BEAT });
  // The holder's heartbeat at a whole second, which the taker's file is given too, and the same
  // length as the holder's own record: only the inode tells the two apart.
  const beat = new Date(Math.floor(Date.now() / 1000) * 1000);
  await utimes(path, beat, beat);
  await lock.confirm();
  await lock.confirm();
  const ours = await readFile(path, "utf8");
  const theirs = JSON.stringify(THEIRS);
  assert.ok(theirs.length <= ours.length, `${theirs.length} <= ${ours.length}`);
  await writeFile(join(dir, "taker.tmp"), theirs.padEnd(ours.length, " "));
  await utimes(join(dir, "taker.tmp"), beat, beat);
  await rename(join(dir, "taker.tmp"), path);
  await assert.rejects(lock.confirm(), (err: unknown) => err instanceof LockLostError && err.message.includes("(pid 4242) on ci-9"));
  assert.equal(lock.lost.aborted, true);
});

test("a holder whose lock is as it last read it, heartbeat fresh, confirms with a stat alone: the file is not read, nor its heartbeat touched", async (t) => {
  const path = join(await tempDir(t), "rhema.lock");
  const lock = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: NO_BEAT });
  await lock.confirm();
  const before = await stat(path);
  // Unreadable to everyone but root: a confirm that read it would fail (as root, the mtime says it was not touched).
  await chmod(path, 0o000);
  for (let i = 0; i < 5; i++) await lock.confirm();
  assert.equal((await stat(path)).mtimeMs, before.mtimeMs, "no refresh of a fresh heartbeat");
  assert.equal(lock.lost.aborted, false);
  await chmod(path, 0o600);
  await lock.release();
});

test("a lock file removed under the holder is a lost lock too", async (t) => {
  const path = join(await tempDir(t), "rhema.lock");
  const lock = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: NO_BEAT });
  await writeFile(path, "");
  await assert.rejects(lock.confirm(), (err: unknown) => err instanceof LockLostError && err.message.includes("removed or replaced"));
});

test("a holder resumed after a stall that no one used keeps its lock: confirm refreshes the overdue heartbeat", async (t) => {
  const path = join(await tempDir(t), "rhema.lock");
  const lock = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: NO_BEAT, staleMs: 300 });
  await makeOld(path, 5_000);
  await lock.confirm();
  await assert.rejects(acquireRunLock(path, 4242, NOW, { staleMs: 300, host: "elsewhere" }), RunLockedError, "the heartbeat is fresh again");
  assert.equal(lock.lost.aborted, false);
  await lock.release();
});

test("a stalled holder's boundary and a taker race for its stale lock: exactly one of them goes on, every time", async (t) => {
  const dir = await tempDir(t);
  for (let round = 0; round < 40; round++) {
    const path = join(dir, `rhema-${round}.lock`);
    const holder = await acquireRunLock(path, process.pid, NOW, { heartbeatMs: NO_BEAT, staleMs: 300 });
    await makeOld(path, 1_000);
    // The holder's boundary comes at a different moment of the taker's work each round: before
    // its look, between its look and its rename, after.
    const [taken, kept] = await Promise.allSettled([
      acquireRunLock(path, 4242, NOW, { staleMs: 300, host: "elsewhere" }),
      new Promise((r) => setTimeout(r, round % 20)).then(() => holder.confirm()),
    ]);
    const goesOn = [kept.status === "fulfilled", taken.status === "fulfilled"];
    assert.equal(goesOn.filter(Boolean).length, 1, `round ${round}: holder ${kept.status}, taker ${taken.status}`);
    if (kept.status === "rejected") assert.ok(kept.reason instanceof LockLostError, String(kept.reason));
    if (taken.status === "rejected") assert.ok(taken.reason instanceof RunLockedError, String(taken.reason));
    if (taken.status === "fulfilled") await taken.value.release();
    await holder.release();
  }
});
