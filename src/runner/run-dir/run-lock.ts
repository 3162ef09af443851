/**
 * The run directory's lock: one runner per directory, and never a dead end. The lock file (its
 * path given by `RunDir`) records its owner — host, pid, the process's start time — and its
 * mtime is the owner's heartbeat, refreshed every `LOCK_HEARTBEAT_MS` while the lock is held.
 * A stale lock (lock-owner.ts: heartbeat older than `LOCK_STALE_MS`, or on this host a pid that
 * is gone or now another process) is taken over; a live one is refused.
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
import { ensurePrivateDir, writePrivateJson } from "../../store/private-files.js";
import {
  LOCK_HEARTBEAT_MS, LOCK_STALE_MS, judgeLock, probeProcess, processStartTime, readOwnerRecord, thisHost,
  type LockOwner, type ProcessProbe, type RecordedOwner,
} from "./lock-owner.js";
import { asOutputError, guardOutput } from "./output-guard.js";
import { parseJsonText } from "./state-file.js";

export class RunLockedError extends RhemaError {
  /** `owner`: the lock's owner record, or just its pid. */
  constructor(runDir: string, owner: RecordedOwner | number | null) {
    const record = typeof owner === "number" ? { pid: owner, host: null } : owner;
    const who = record === null ? "" : ` (pid ${record.pid})${record.host !== null ? ` on ${record.host}` : ""}`;
    super("run_locked", `${runDir} is in use by another rhema run${who}; wait for it, or pass another --out`);
  }
}

export interface RunLock {
  /** Whether a stale lock (of a dead or vanished runner) was taken over. */
  tookOver: boolean;
  /** Stops the heartbeat and removes the lock, if it is still this runner's. */
  release(): Promise<void>;
}

export interface RunLockOptions {
  /** Default: this machine's name. */
  host?: string;
  heartbeatMs?: number;
  staleMs?: number;
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
}

/** Takes the lock at `lockPath` (in the run directory, which is made 0700 if missing). */
export async function acquireRunLock(lockPath: string, pid: number, now: Date = new Date(), options: RunLockOptions = {}): Promise<RunLock> {
  const runDir = dirname(lockPath);
  await guardOutput(runDir, "create", () => ensurePrivateDir(runDir));
  const host = options.host ?? thisHost();
  const self: LockOwner = { host, pid, processStartTime: await processStartTime(pid), startedAt: now.toISOString() };
  const probe = options.probe ?? probeProcess;
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  let last: RecordedOwner | null = null;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await guardOutput(lockPath, "write", () => publishExclusive(lockPath, self))) return holdLock(lockPath, self, false, options);
    const current = await readLock(lockPath);
    if (current === null) continue; // released meanwhile: try to create it again
    last = current.owner;
    const facts = { owner: current.owner, heartbeatAgeMs: Date.now() - current.mtimeMs, host, staleMs, probe: current.owner ? await probe(current.owner.pid) : { alive: false, startTime: null } };
    // A lock naming this very pid that is not in this format's record of us is an earlier process's.
    const ours = current.owner !== null && current.owner.pid === pid && (current.owner.host === host || current.owner.host === null);
    const verdict = ours && current.owner!.processStartTime === self.processStartTime && self.processStartTime !== null ? { kind: "held" as const }
      : ours ? { kind: "stale" as const } : judgeLock(facts);
    if (verdict.kind === "held") throw new RunLockedError(runDir, current.owner);
    if (await guardOutput(lockPath, "write", () => takeOver(lockPath, current, self))) return holdLock(lockPath, self, true, options);
    await new Promise((r) => setTimeout(r, RETRY_MS)); // another taker is at work: judge again once it is done
  }
  throw new RunLockedError(runDir, last);
}

function holdLock(path: string, self: LockOwner, tookOver: boolean, options: RunLockOptions): RunLock {
  let held = true;
  const beat = async (): Promise<void> => {
    const current = await readLock(path).catch(() => null);
    if (!current || !sameOwner(current.owner, self)) {
      held = false; // taken over by another (our heartbeat stopped too long): never touch theirs
      clearInterval(timer);
      return;
    }
    const at = new Date();
    await utimes(path, at, at).catch(() => {});
  };
  const timer = setInterval(() => void beat(), options.heartbeatMs ?? LOCK_HEARTBEAT_MS);
  timer.unref();
  return {
    tookOver,
    release: async () => {
      clearInterval(timer);
      if (!held) return;
      held = false;
      const current = await readLock(path);
      if (current && sameOwner(current.owner, self)) await guardOutput(path, "remove", () => rm(path, { force: true }));
    },
  };
}

function sameOwner(owner: RecordedOwner | null, self: LockOwner): boolean {
  return owner !== null && owner.host === self.host && owner.pid === self.pid && owner.startedAt === self.startedAt && owner.processStartTime === self.processStartTime;
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
  return { owner: parsed.ok ? readOwnerRecord(parsed.value) : null, mtimeMs: info.mtimeMs, ino: info.ino };
}
