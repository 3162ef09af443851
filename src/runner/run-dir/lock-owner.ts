/**
 * Who holds a run directory's lock, and whether that holder still runs: the owner record
 * (host, pid, the process's start time) and the one pure rule that judges a lock stale.
 *
 * A lock is stale when its heartbeat (the lock file's mtime, refreshed by the holder every
 * `LOCK_HEARTBEAT_MS`) is older than `LOCK_STALE_MS`, or — on the same host — when its pid is
 * gone or is alive with another start time (the pid was reused: a run directory restored into a
 * new container, where low pids such as 1 are always alive). Another host's pid means nothing
 * here, so only the heartbeat judges it.
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { z } from "zod";
import { errnoCode } from "../../core/errors.js";

/** How often the holder refreshes its lock's heartbeat. */
export const LOCK_HEARTBEAT_MS = 5_000;
/** A lock whose heartbeat is older than this is stale, whatever its pid. */
export const LOCK_STALE_MS = 30_000;

export const lockOwnerSchema = z.object({
  host: z.string(),
  pid: z.number().int(),
  /** The owner's start, clock ticks after boot (/proc/<pid>/stat field 22); null without /proc. */
  processStartTime: z.number().int().nullable(),
  startedAt: z.string(),
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
  /** The owner's pid as this machine sees it. */
  probe: ProcessProbe;
  staleMs: number;
}

/** The rule: see the module comment. */
export function judgeLock(facts: LockFacts): LockVerdict {
  if (facts.owner === null) return { kind: "stale", why: "unreadable" };
  if (facts.heartbeatAgeMs > facts.staleMs) return { kind: "stale", why: "heartbeat" };
  const sameHost = facts.owner.host === null || facts.owner.host === facts.host;
  if (!sameHost) return { kind: "held" };
  if (!facts.probe.alive) return { kind: "stale", why: "pid_gone" };
  const recorded = facts.owner.processStartTime;
  if (recorded !== null && facts.probe.startTime !== null && recorded !== facts.probe.startTime) return { kind: "stale", why: "pid_reused" };
  return { kind: "held" };
}

/** This machine's name, as locks record it. */
export function thisHost(): string {
  return hostname();
}

/** Whether `pid` runs here, and its start time from /proc (null where there is none). */
export async function probeProcess(pid: number): Promise<ProcessProbe> {
  return { alive: isAlive(pid), startTime: await processStartTime(pid) };
}

/**
 * When process `pid` started, in clock ticks after boot: field 22 of /proc/<pid>/stat. null
 * when the process is gone or there is no /proc. (src/process has its own reader for process
 * groups; this one serves the lock, which the runner's run directory owns.)
 */
export async function processStartTime(pid: number): Promise<number | null> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (text === null) return null;
  // "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split after the last ")".
  // Field 22 of the whole line is the 20th after the comm.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const startTime = Number(fields[19]);
  return Number.isSafeInteger(startTime) ? startTime : null;
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
