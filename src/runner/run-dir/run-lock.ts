/**
 * The run directory's lock: one runner per directory. The lock file (its path given by
 * `RunDir`) holds the owner's pid; a lock whose owner is gone (a killed runner) is taken over,
 * never a dead end. Taking the lock is a run's first write: a run directory rhema cannot
 * write is an `OutputError` here, before any task starts.
 */
import { open, readFile, rm, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { RhemaError, errnoCode } from "../../core/errors.js";
import { ensurePrivateDir, writePrivateJson } from "../../store/private-files.js";
import { asOutputError, guardOutput } from "./output-guard.js";
import { parseJsonText } from "./state-file.js";

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

const lockSchema = z.object({ pid: z.number().int(), startedAt: z.string() });
type LockContent = z.infer<typeof lockSchema>;

/** Takes the lock at `lockPath` (in the run directory, which is made 0700 if missing). */
export async function acquireRunLock(lockPath: string, pid: number, now: Date = new Date()): Promise<RunLock> {
  const runDir = dirname(lockPath);
  await guardOutput(runDir, "create", () => ensurePrivateDir(runDir));
  const content: LockContent = { pid, startedAt: now.toISOString() };
  if (await guardOutput(lockPath, "write", () => createExclusive(lockPath, content))) return lockAt(lockPath, false);
  const owner = await readOwner(lockPath);
  if (owner !== null && owner !== pid && isAlive(owner)) throw new RunLockedError(runDir, owner);
  // Stale: replace it atomically, then make sure no other taker won the race.
  const tmp = `${lockPath}.${pid}`;
  await guardOutput(lockPath, "write", async () => {
    await writePrivateJson(tmp, content);
    await rename(tmp, lockPath);
  });
  const winner = await readOwner(lockPath);
  if (winner !== pid) throw new RunLockedError(runDir, winner ?? -1);
  return lockAt(lockPath, true);
}

function lockAt(path: string, tookOver: boolean): RunLock {
  return { tookOver, release: () => guardOutput(path, "remove", () => rm(path, { force: true })) };
}

async function createExclusive(path: string, content: LockContent): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (err) {
    if (errnoCode(err) === "EEXIST") return false;
    throw err;
  }
  try {
    await handle.writeFile(JSON.stringify(content) + "\n");
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}

/** The owner's pid; null when the lock vanished or is torn (a kill mid-write): stale. */
async function readOwner(path: string): Promise<number | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw asOutputError(err, path, "read");
  }
  const parsed = parseJsonText(text);
  const checked = parsed.ok ? lockSchema.safeParse(parsed.value) : null;
  return checked?.success ? checked.data.pid : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === "EPERM";
  }
}
