/**
 * The run directory's lock: one runner per directory. The lock file holds the owner's pid; a
 * lock whose owner is gone (a killed runner) is taken over, never a dead end.
 */
import { open, readFile, rm, rename } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../core/errors.js";
import { ensurePrivateDir, writePrivateJson } from "../../store/private-files.js";

export const LOCK_FILE = "rhema.lock";

export class RunLockedError extends RhemaError {
  constructor(runDir: string, pid: number) {
    super("run_locked", `${runDir} is in use by another rhema run (pid ${pid}); wait for it, or pass another --out`);
  }
}

export interface RunLock {
  /** Whether a stale lock (of a dead process) was taken over. */
  tookOver: boolean;
  release(): Promise<void>;
}

interface LockContent { pid: number; startedAt: string }

export async function acquireRunLock(runDir: string, pid: number, now: Date = new Date()): Promise<RunLock> {
  await ensurePrivateDir(runDir);
  const path = join(runDir, LOCK_FILE);
  const content: LockContent = { pid, startedAt: now.toISOString() };
  if (await createExclusive(path, content)) return lockAt(path, false);
  const owner = await readOwner(path);
  if (owner !== null && owner !== pid && isAlive(owner)) throw new RunLockedError(runDir, owner);
  // Stale: replace it atomically, then make sure no other taker won the race.
  const tmp = `${path}.${pid}`;
  await writePrivateJson(tmp, content);
  await rename(tmp, path);
  if ((await readOwner(path)) !== pid) throw new RunLockedError(runDir, (await readOwner(path)) ?? -1);
  return lockAt(path, true);
}

function lockAt(path: string, tookOver: boolean): RunLock {
  return { tookOver, release: () => rm(path, { force: true }) };
}

async function createExclusive(path: string, content: LockContent): Promise<boolean> {
  try {
    const handle = await open(path, "wx", 0o600);
    try {
      await handle.writeFile(JSON.stringify(content) + "\n");
      await handle.sync();
    } finally {
      await handle.close();
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

async function readOwner(path: string): Promise<number | null> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as Partial<LockContent>;
    return typeof value.pid === "number" ? value.pid : null;
  } catch {
    return null; // torn or vanished: treated as stale
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
