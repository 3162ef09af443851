/**
 * The run directory's lock: one runner per directory, and never a dead end. The lock file (its
 * path given by `RunDir`) records its owner — host, pid, the process's start time, and the boot
 * and pid namespace its pid belongs to — and its mtime is the owner's heartbeat, refreshed every
 * `heartbeatMs` while the lock is held. A stale lock (lock-owner.ts: heartbeat older than
 * `staleMs`, or, where the owner's pid can be looked at from here, a pid that is gone or now
 * another process) is taken over; a live one is refused.
 *
 * A holder can lose its lock: paused past the stale limit (SIGSTOP, `docker pause`, a frozen
 * cgroup, a suspended VM), its heartbeat stops and another runner takes the directory over. So
 * the holder never trusts that it still holds it: every beat looks at the file again, and so does
 * `confirm()`, which the runner awaits before each side effect (a task's start, a model request,
 * a tool call, a setup command, a check, a result or report written). A look is a stat while the
 * file is the inode, with the size and mtime, that the holder last read as its own and the
 * heartbeat is younger than a beat (a taker always puts a file of its own in place: another
 * inode, or another size or mtime); else the file is read again, and the heartbeat refreshed once
 * older than a beat (at most a sixth of the stale limit). After a pause, timers fire late and the
 * first code to run may be such a boundary rather than the heartbeat, so `confirm` does not rely
 * on the beat: it looks at the lock itself and, when the heartbeat is older than half the stale
 * limit (a taker may be judging it stale this moment), refreshes it under the takeover guard,
 * which a taker holds from its last look to its rename — so either the taker sees the fresh
 * heartbeat and backs off, or the holder sees the new owner. A lost lock aborts `lost`
 * (running commands and requests stop) and every later `confirm` throws `LockLostError`
 * (exit 3) naming the new owner; the lost holder never writes the lock again.
 *
 * proper-lockfile was weighed and not taken: it judges by mtime alone (so a killed runner's lock
 * on the same host would block for the whole stale limit), records no owner to name in the
 * refusal, and by default throws from a timer when its lock is compromised.
 *
 * Every lock file appears whole: it is written to a temp file and published with link(2)
 * (fails if a lock exists) or, taking over, rename(2) — under a short-lived `.takeover` guard
 * so two takers cannot both win. Taking the lock is a run's first write: a run directory rhema
 * cannot write is an `OutputError` here, before any task starts.
 */
import { link, open, readFile, rename, rm, stat, utimes } from "node:fs/promises";
import { dirname } from "node:path";
import { RhemaError, errnoCode } from "../../core/errors.js";
import { currentPidScope } from "../../process/pid-scope.js";
import { thisHost } from "../../process/process-identity.js";
import { ensurePrivateDir, writePrivateJson } from "../../store/private-files.js";
import {
  DEFAULT_LOCK_TIMING, judgeLock, pidComparable, probeProcess, processStartTime, readOwnerRecord,
  type LockOwner, type LockTiming, type ProcessProbe, type RecordedOwner,
} from "./lock-owner.js";
import { asOutputError, guardOutput } from "./output-guard.js";
import { parseJsonText } from "./state-file.js";

const DEFAULT_REMEDY = "wait for it, or pass another --out";

export class RunLockedError extends RhemaError {
  /**
   * `owner`: the lock's owner record, or just its pid. `heartbeatOnly`: its pid cannot be
   * looked at from here, so only its heartbeat going stale (after `staleMs`) frees the lock.
   */
  constructor(runDir: string, owner: RecordedOwner | number | null, heartbeatOnly?: { staleMs: number }, remedy = DEFAULT_REMEDY) {
    const when = heartbeatOnly
      ? `; its pid is not one this process can check (another pid namespace, container, boot or machine), so the lock is taken over only once its heartbeat is ${heartbeatOnly.staleMs / 1000} s old`
      : "";
    super("run_locked", `${runDir} is in use by another rhema run${describeOwner(owner)}${when}; ${remedy}`);
  }
}

/**
 * This runner's lock was taken by another while this one was stalled (its heartbeat stopped
 * for longer than the stale limit): it must stop before any further side effect. Exit 3.
 */
export class LockLostError extends RhemaError {
  constructor(runDir: string, owner: RecordedOwner | null, what = "the run directory's lock") {
    const now = owner === null ? "its lock file was removed or replaced" : `another rhema run${describeOwner(owner)} took it over`;
    super("lock_lost", `${runDir}: this run lost ${what} — ${now} while this run was stalled (paused, stopped or suspended) ` +
      "past the lock's stale limit; it stopped before starting anything more (no request, tool call, setup command or check), " +
      "and the run holding it now carries on");
  }
}

/** " (pid 12) on ci-7", or "" when nothing is known. */
function describeOwner(owner: RecordedOwner | number | null): string {
  const record = typeof owner === "number" ? { pid: owner, host: null } : owner;
  return record === null ? "" : ` (pid ${record.pid})${record.host !== null ? ` on ${record.host}` : ""}`;
}

/** What the runner's side effects ask of the lock (passed down to tasks). */
export interface LockGuard {
  /** Aborted, its reason a `LockLostError`, once the lock is found another runner's. */
  readonly lost: AbortSignal;
  /**
   * Resolves while the lock is still this runner's — read afresh, its heartbeat refreshed
   * under the takeover guard when overdue; throws `LockLostError` (and aborts `lost`) otherwise.
   */
  confirm(): Promise<void>;
}

export interface RunLock extends LockGuard {
  /** Whether a stale lock (of a dead or vanished runner) was taken over. */
  tookOver: boolean;
  /** Stops the heartbeat and removes the lock, if it is still this runner's. */
  release(): Promise<void>;
}

export interface RunLockOptions extends Partial<LockTiming> {
  /** What a refused runner is told to do (default: wait, or pass another --out). */
  remedy?: string;
  /** What a runner that lost the lock lost (default: "the run directory's lock"). */
  what?: string;
  /** Default: this machine's name. */
  host?: string;
  /** How a pid is judged alive here; default /proc and kill(pid, 0). */
  probe?: (pid: number) => Promise<ProcessProbe>;
}

/** A guard left by a taker that died mid-takeover is ignored after this long. */
const TAKEOVER_GUARD_STALE_MS = 10_000;
const ATTEMPTS = 5;
const RETRY_MS = 50;

interface LockSnapshot {
  owner: RecordedOwner | null;
  mtimeMs: number;
  ino: number;
  size: number;
}

/** Takes the lock at `lockPath` (in the run directory, which is made 0700 if missing). */
export async function acquireRunLock(lockPath: string, pid: number, now: Date = new Date(), options: RunLockOptions = {}): Promise<RunLock> {
  const runDir = dirname(lockPath);
  await guardOutput(runDir, "create", () => ensurePrivateDir(runDir));
  const host = options.host ?? thisHost();
  const pidScope = await currentPidScope();
  const self: LockOwner = { host, pid, processStartTime: await processStartTime(pid), startedAt: now.toISOString(), pidScope };
  const probe = options.probe ?? probeProcess;
  const timing: LockTiming = { staleMs: options.staleMs ?? DEFAULT_LOCK_TIMING.staleMs, heartbeatMs: options.heartbeatMs ?? DEFAULT_LOCK_TIMING.heartbeatMs };
  let last: RecordedOwner | null = null;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await guardOutput(lockPath, "write", () => publishExclusive(lockPath, self))) return holdLock(lockPath, self, false, timing, options.what);
    const current = await readLock(lockPath);
    if (current === null) continue; // released meanwhile: try to create it again
    last = current.owner;
    const comparable = current.owner !== null && pidComparable(current.owner, { host, pidScope });
    const facts = {
      owner: current.owner, heartbeatAgeMs: Date.now() - current.mtimeMs, host, pidScope, staleMs: timing.staleMs,
      probe: current.owner && comparable ? await probe(current.owner.pid) : { alive: false, startTime: null },
    };
    // A lock naming this very pid (in this pid namespace) that is not this process's record is an earlier process's.
    const ours = comparable && current.owner!.pid === pid;
    const verdict = ours && current.owner!.processStartTime === self.processStartTime && self.processStartTime !== null ? { kind: "held" as const }
      : ours ? { kind: "stale" as const } : judgeLock(facts);
    if (verdict.kind === "held") throw new RunLockedError(runDir, current.owner, comparable ? undefined : { staleMs: timing.staleMs }, options.remedy);
    if (await guardOutput(lockPath, "write", () => takeOver(lockPath, current, self))) return holdLock(lockPath, self, true, timing, options.what);
    await sleep(RETRY_MS); // another taker is at work: judge again once it is done
  }
  throw new RunLockedError(runDir, last, undefined, options.remedy);
}

function holdLock(path: string, self: LockOwner, tookOver: boolean, timing: LockTiming, what?: string): RunLock {
  const runDir = dirname(path);
  const lost = new AbortController();
  let released = false;
  // Beats and confirmations run one at a time: two of this runner's own would contend for the guard.
  let queue: Promise<unknown> = Promise.resolve();
  const lose = (owner: RecordedOwner | null): never => {
    clearInterval(timer);
    if (!lost.signal.aborted) lost.abort(new LockLostError(runDir, owner, what));
    throw lost.signal.reason;
  };
  /** The lock file as this holder last read it as its own: its inode, size and heartbeat. */
  let known: { ino: number; size: number; mtimeMs: number } | null = null;
  /** A heartbeat younger than this needs no refresh: a beat, and never more than a sixth of the stale limit. */
  const freshMs = Math.min(timing.heartbeatMs, timing.staleMs / 6);
  const check = async (): Promise<void> => {
    if (lost.signal.aborted) throw lost.signal.reason;
    // Unchanged since read as ours, with a heartbeat younger than a beat: still ours, and fresh.
    // A taker always puts a new file in its place (rename, or link after a removal), so another
    // owner is another inode, or at the least another size or mtime than the one this holder read.
    const seen = await stat(path).catch(() => null);
    const unchanged = seen !== null && known !== null && seen.ino === known.ino && seen.size === known.size && seen.mtimeMs === known.mtimeMs;
    if (unchanged && Date.now() - seen.mtimeMs <= freshMs) return;
    const current = await readLock(path);
    if (!current || !sameOwner(current.owner, self)) return lose(current?.owner ?? null);
    known = { ino: current.ino, size: current.size, mtimeMs: current.mtimeMs };
    if (Date.now() - current.mtimeMs <= freshMs) return;
    if (Date.now() - current.mtimeMs <= timing.staleMs / 2) return touch(path);
    const after = await refreshGuarded(path, self);
    if (after !== "ours") return lose(after);
  };
  const confirm = (): Promise<void> => {
    const run = queue.then(check);
    queue = run.catch(() => undefined);
    return run;
  };
  // A beat that cannot read the lock (a passing I/O error) leaves the verdict to the next beat or boundary.
  const timer = setInterval(() => void confirm().catch(() => undefined), timing.heartbeatMs);
  timer.unref();
  return {
    tookOver,
    lost: lost.signal,
    confirm,
    release: async () => {
      clearInterval(timer);
      if (released || lost.signal.aborted) return;
      released = true;
      await queue;
      const current = await readLock(path);
      if (current && sameOwner(current.owner, self)) await guardOutput(path, "remove", () => rm(path, { force: true }));
    },
  };
}

/** Refreshes the heartbeat; a failure is left to the next beat (the lock is still ours). */
async function touch(path: string): Promise<void> {
  const at = new Date();
  await utimes(path, at, at).catch(() => {});
}

/**
 * The heartbeat of a lock that may look stale to a taker, refreshed under the takeover guard:
 * "ours" when it is still this owner's (and now fresh), else the owner found (null: none, or
 * unreadable). While a taker holds the guard this waits for it — it holds it for milliseconds,
 * and a guard left by a dead taker goes stale (`TAKEOVER_GUARD_STALE_MS`).
 */
async function refreshGuarded(path: string, self: LockOwner): Promise<"ours" | RecordedOwner | null> {
  const guard = `${path}.takeover`;
  while (!(await guardOutput(path, "write", () => takeGuard(guard)))) await sleep(RETRY_MS);
  try {
    const current = await readLock(path);
    if (!current || !sameOwner(current.owner, self)) return current?.owner ?? null;
    await touch(path);
    return "ours";
  } finally {
    await rm(guard, { force: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function sameOwner(owner: RecordedOwner | null, self: LockOwner): boolean {
  if (owner === null || !("pidScope" in owner)) return false;
  const [theirs, ours] = [owner.pidScope ?? null, self.pidScope ?? null];
  const sameScope = theirs === null || ours === null ? theirs === ours : theirs.bootId === ours.bootId && theirs.pidNamespace === ours.pidNamespace;
  return owner.host === self.host && owner.pid === self.pid && owner.startedAt === self.startedAt && owner.processStartTime === self.processStartTime && sameScope;
}

/** Publishes `owner` as the lock if there is none; false when a lock exists. */
async function publishExclusive(path: string, owner: LockOwner): Promise<boolean> {
  const tmp = `${path}.${owner.pid}`;
  await writePrivateJson(tmp, owner);
  try {
    await link(tmp, path);
    return true;
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    // A file system without hard links: create exclusively and write (a reader may see it empty: stale, then re-checked).
    if (errnoCode(err) === "EPERM" || errnoCode(err) === "ENOTSUP" || errnoCode(err) === "EOPNOTSUPP") return createExclusive(path, owner);
    throw err;
  } finally {
    await rm(tmp, { force: true });
  }
}

async function createExclusive(path: string, owner: LockOwner): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    throw err;
  }
  try {
    await handle.writeFile(JSON.stringify(owner, null, 2) + "\n");
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}

/**
 * Replaces the stale lock judged from `judged` by ours, unless it changed since (another taker
 * won, or its owner beat): false, and the caller judges again.
 */
async function takeOver(path: string, judged: LockSnapshot, self: LockOwner): Promise<boolean> {
  const guard = `${path}.takeover`;
  if (!(await takeGuard(guard))) return false;
  try {
    const again = await readLock(path);
    if (again === null || again.ino !== judged.ino || again.mtimeMs !== judged.mtimeMs) return false;
    const tmp = `${path}.${self.pid}`;
    await writePrivateJson(tmp, self);
    await rename(tmp, path);
    return true;
  } finally {
    await rm(guard, { force: true });
  }
}

async function takeGuard(guard: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await (await open(guard, "wx", 0o600)).close();
      return true;
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw err;
      const age = await stat(guard).then((s) => Date.now() - s.mtimeMs, () => Infinity);
      if (age <= TAKEOVER_GUARD_STALE_MS) return false;
      await rm(guard, { force: true });
    }
  }
  return false;
}

/** The lock's owner (null when torn or foreign), heartbeat and inode; null when there is no lock. */
async function readLock(path: string): Promise<LockSnapshot | null> {
  let text: string;
  let info;
  try {
    info = await stat(path);
    text = await readFile(path, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw asOutputError(err, path, "read");
  }
  const parsed = parseJsonText(text);
  return { owner: parsed.ok ? readOwnerRecord(parsed.value) : null, mtimeMs: info.mtimeMs, ino: info.ino, size: info.size };
}
