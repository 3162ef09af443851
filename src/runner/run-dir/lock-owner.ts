/**
 * Who holds a run directory's lock, and whether that holder still runs: the owner record
 * (host, pid, the process's start time, and where that pid means something) and the one pure
 * rule that judges a lock stale.
 *
 * A lock is stale when its heartbeat (the lock file's mtime, refreshed by the holder every
 * `LOCK_HEARTBEAT_MS`) is older than `LOCK_STALE_MS`, or — when the owner's pid is one this
 * process can look at — when that pid is gone or is alive with another start time (the pid was
 * reused). A pid is only meaningful in the pid namespace it was given in, on the boot it was
 * given on: the record carries both (`pidScope`: /proc/sys/kernel/random/boot_id and
 * /proc/self/ns/pid), and a pid from another namespace (a container, `unshare -p`, another
 * machine sharing the folder — all may have the same host name), another boot, or a record that
 * does not say (an older rhema's, a system without /proc) is judged by its heartbeat alone.
 */
import { readFile, readlink } from "node:fs/promises";
import { z } from "zod";
import { errnoCode } from "../../core/errors.js";
import { samePidScope } from "../../process/pid-scope.js";

/** How often the holder refreshes its lock's heartbeat. */
export const LOCK_HEARTBEAT_MS = 5_000;
/** A lock whose heartbeat is older than this is stale, whatever its pid. */
export const LOCK_STALE_MS = 30_000;

/** The lock's two intervals: a heartbeat well inside the stale limit. */
export interface LockTiming {
  staleMs: number;
  heartbeatMs: number;
}

export const DEFAULT_LOCK_TIMING: LockTiming = { staleMs: LOCK_STALE_MS, heartbeatMs: LOCK_HEARTBEAT_MS };

/** The timing for a stale limit of `staleMs` (shortened in tests): the heartbeat at a sixth of it, as by default. */
export function lockTimingFor(staleMs: number): LockTiming {
  return { staleMs, heartbeatMs: Math.max(1, Math.round(staleMs * (LOCK_HEARTBEAT_MS / LOCK_STALE_MS))) };
}

const pidScopeSchema = z.object({
  /** /proc/sys/kernel/random/boot_id: this boot of this machine (or VM). */
  bootId: z.string(),
  /** readlink /proc/self/ns/pid: `pid:[4026531836]`. */
  pidNamespace: z.string(),
});
/** Where a pid means something: one pid namespace on one boot. */
export type PidScope = z.infer<typeof pidScopeSchema>;

export const lockOwnerSchema = z.object({
  host: z.string(),
  pid: z.number().int(),
  /** The owner's start, clock ticks after boot (/proc/<pid>/stat field 22); null without /proc. */
  processStartTime: z.number().int().nullable(),
  startedAt: z.string(),
  /** Where `pid` means something; null where it cannot be told (no /proc); absent in locks of an older rhema. */
  pidScope: pidScopeSchema.nullable().optional(),
});
/** A lock written before hosts and start times were recorded: only its pid (on this host, as then). */
const legacyOwnerSchema = z.object({ pid: z.number().int(), startedAt: z.string() });

export type LockOwner = z.infer<typeof lockOwnerSchema>;
export type RecordedOwner = LockOwner | (z.infer<typeof legacyOwnerSchema> & { host: null; processStartTime: null });

/** The owner in a lock file's text; null when it is torn or foreign (a kill mid-write: stale). */
export function readOwnerRecord(value: unknown): RecordedOwner | null {
  const full = lockOwnerSchema.safeParse(value);
  if (full.success) return full.data;
  const legacy = legacyOwnerSchema.safeParse(value);
  return legacy.success ? { ...legacy.data, host: null, processStartTime: null } : null;
}

/** What this machine says about a pid: whether it runs, and since when (null: unknown). */
export interface ProcessProbe {
  alive: boolean;
  startTime: number | null;
}

export type LockVerdict =
  | { kind: "held" }
  | { kind: "stale"; why: "unreadable" | "heartbeat" | "pid_gone" | "pid_reused" };

export interface LockFacts {
  /** null: the lock's content is torn or foreign. */
  owner: RecordedOwner | null;
  /** ms since the lock's heartbeat (its mtime). */
  heartbeatAgeMs: number;
  host: string;
  /** Where this process's pids mean something (null: cannot be told). */
  pidScope: PidScope | null;
  /** The owner's pid as this machine sees it. */
  probe: ProcessProbe;
  staleMs: number;
}

/** The rule: see the module comment. */
export function judgeLock(facts: LockFacts): LockVerdict {
  if (facts.owner === null) return { kind: "stale", why: "unreadable" };
  if (facts.heartbeatAgeMs > facts.staleMs) return { kind: "stale", why: "heartbeat" };
  if (!pidComparable(facts.owner, facts)) return { kind: "held" };
  if (!facts.probe.alive) return { kind: "stale", why: "pid_gone" };
  const recorded = facts.owner.processStartTime;
  if (recorded !== null && facts.probe.startTime !== null && recorded !== facts.probe.startTime) return { kind: "stale", why: "pid_reused" };
  return { kind: "held" };
}

/**
 * Whether the owner's pid means the same process here: the same host name, and the same pid
 * namespace on the same boot, both known. (A host name alone says nothing: every container of
 * a machine, and every `unshare -p`, may share it.)
 */
export function pidComparable(owner: RecordedOwner, here: { host: string; pidScope: PidScope | null }): boolean {
  if (owner.host !== here.host) return false;
  return samePidScope("pidScope" in owner ? owner.pidScope : null, here.pidScope);
}


/**
 * Whether `pid` runs here, and its start time from /proc (null where there is none, or where
 * the /proc mounted is another pid namespace's — `unshare -p` without `--mount-proc` — so its
 * numbers are not ours). A zombie does not run: a killed rhema whose parent died first waits for
 * PID 1 to reap it (rhema inside its user namespace, killed with the outer one: user-namespace.ts),
 * and it holds nothing meanwhile.
 */
export async function probeProcess(pid: number): Promise<ProcessProbe> {
  const procIsOurs = (await readlink("/proc/self").catch(() => null)) === String(process.pid);
  const stat = procIsOurs ? await readProcStat(pid) : null;
  return { alive: isAlive(pid) && !(stat !== null && (stat.state === "Z" || stat.state === "X")), startTime: stat?.startTime ?? null };
}

/**
 * When process `pid` started, in clock ticks after boot: field 22 of /proc/<pid>/stat (this
 * process's own through /proc/self, right whichever namespace /proc was mounted for). null
 * when the process is gone or there is no /proc. (src/process has its own reader for process
 * groups; this one serves the lock, which the runner's run directory owns.)
 */
export async function processStartTime(pid: number): Promise<number | null> {
  return (await readProcStat(pid))?.startTime ?? null;
}

async function readProcStat(pid: number): Promise<{ state: string; startTime: number | null } | null> {
  const text = await readFile(`/proc/${pid === process.pid ? "self" : pid}/stat`, "utf8").catch(() => null);
  if (text === null) return null;
  // "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split after the last ")".
  // Field 22 of the whole line is the 20th after the comm.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const startTime = Number(fields[19]);
  return { state: fields[0] ?? "", startTime: Number.isSafeInteger(startTime) ? startTime : null };
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === "EPERM";
  }
}
