/**
 * Questions about other processes, for killing a command's tree: does a process (or any member
 * of a process group) still run, which processes descend from one, and when one started. A
 * zombie does not run: it is dead and only waits for its reaper (PID 1 for orphans, which may take
 * its time), and no signal can do more to it. Reads /proc where there is one, else trusts kill(pid, 0) and `ps`.
 * A /proc read that fails for the machine's limits (EMFILE, ENOMEM) throws: it says nothing about
 * the process, and an answer made up from it would leave processes running or spare a reused pid.
 */
import { execFile } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { errnoCode } from "../core/errors.js";

/**
 * Errnos that mean a /proc entry is not there to read (the process went, or is not ours to
 * read). Any other failure — out of file handles or memory above all — is thrown: an answer
 * made up from it ("gone", "no such process") would leave a command's processes running.
 */
const ABSENT = new Set(["ENOENT", "ESRCH", "EACCES", "EPERM", "EINVAL"]);

/** `path` read, or null when it is absent (`ABSENT`); other failures are thrown. */
async function readProcFile(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (err) {
    if (ABSENT.has(errnoCode(err) ?? "")) return null;
    throw err;
  }
}

/** The pids under /proc (none where there is no /proc). */
async function procPids(): Promise<string[]> {
  try {
    return (await readdir("/proc")).filter((n) => /^\d+$/.test(n));
  } catch (err) {
    if (ABSENT.has(errnoCode(err) ?? "")) return [];
    throw err;
  }
}

/** How many /proc files are read at once: a full table read all at once would itself use up the file handles. */
const READ_AT_ONCE = 16;

/** `read` over `items`, at most READ_AT_ONCE at a time, in order. */
async function readEach<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += READ_AT_ONCE) out.push(...(await Promise.all(items.slice(i, i + READ_AT_ONCE).map(read))));
  return out;
}

/** Whether a process (or, negative, a process group) exists, zombies included. */
export function exists(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

interface ProcStat { pid: number; state: string; ppid: number; pgrp: number; startTime: number }

/** Fields of /proc/<pid>/stat, or null when gone or unreadable (see `ABSENT`). */
async function procStat(pid: number | string): Promise<ProcStat | null> {
  const text = (await readProcFile(`/proc/${pid}/stat`))?.toString("utf8") ?? null;
  if (text === null) return null;
  // "pid (comm) state ppid pgrp ..." — comm may hold spaces and parentheses: split after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Field 22 of the whole line (starttime, clock ticks after boot) is the 20th after the comm.
  return { pid: Number(pid), state: fields[0] ?? "", ppid: Number(fields[1]), pgrp: Number(fields[2]), startTime: Number(fields[19]) };
}

/**
 * When process `pid` started, in clock ticks after boot (field 22 of /proc/<pid>/stat): with
 * the pid, it tells a process from a later one that reused its pid. null when the process is gone
 * or there is no /proc.
 */
export async function processStartTime(pid: number): Promise<number | null> {
  const stat = await procStat(pid);
  return stat === null || !Number.isSafeInteger(stat.startTime) ? null : stat.startTime;
}

/** Whether this system has a /proc to read processes from. */
export async function hasProc(): Promise<boolean> {
  return (await procStat("self")) !== null;
}

const dead = (state: string): boolean => state === "Z" || state === "X";

/** Whether the process runs (exists and is not a zombie). */
export async function isRunning(pid: number): Promise<boolean> {
  if (!exists(pid)) return false;
  const stat = await procStat(pid);
  return stat === null ? exists(pid) && !(await hasProc()) : !dead(stat.state);
}

/** Whether any member of process group `pgid` runs. */
export async function groupRunning(pgid: number): Promise<boolean> {
  if (!exists(-pgid)) return false;
  if (!(await hasProc())) return true;
  const stats = await allProcStats();
  return stats.some((s) => s.pgrp === pgid && !dead(s.state));
}

/** Every descendant of `pid`, from /proc or `ps`; [] when neither answers. */
export async function descendantPids(pid: number): Promise<number[]> {
  const rows = (await hasProc()) ? (await allProcStats()).map((s) => [s.pid, s.ppid] as const) : await psRows();
  const children = new Map<number, number[]>();
  for (const [p, pp] of rows) children.set(pp, [...(children.get(pp) ?? []), p]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      found.push(c);
      queue.push(c);
    }
  }
  return found;
}

/**
 * The processes (other than this one) whose environment holds `entry` (`NAME=value`) exactly:
 * what a command started, found wherever it went — reparented to init, in a session of its own —
 * unless it cleared its environment. Only processes whose environ this user may read are seen;
 * [] without /proc.
 */
export async function pidsWithEnvironmentEntry(entry: string): Promise<number[]> {
  const names = (await procPids()).filter((n) => Number(n) !== process.pid);
  const needle = Buffer.from(`\0${entry}\0`);
  const found = await readEach(names, async (name) => {
    const environ = await readProcFile(`/proc/${name}/environ`);
    if (environ === null || environ.length === 0) return null;
    // Each entry ends with a NUL; a leading one makes the first entry match like the rest.
    return Buffer.concat([Buffer.from([0]), environ]).includes(needle) ? Number(name) : null;
  });
  return found.filter((pid): pid is number => pid !== null);
}

async function allProcStats(): Promise<ProcStat[]> {
  const stats = await readEach(await procPids(), (n) => procStat(n));
  return stats.filter((s): s is ProcStat => s !== null);
}

async function psRows(): Promise<Array<readonly [number, number]>> {
  const table = await new Promise<string>((resolveTable) => {
    execFile("ps", ["-A", "-o", "pid=,ppid="], (err, stdout) => resolveTable(err ? "" : stdout));
  });
  return table.split("\n").flatMap((row) => {
    const [p, pp] = row.trim().split(/\s+/).map(Number);
    return p === undefined || pp === undefined || Number.isNaN(p) || Number.isNaN(pp) ? [] : [[p, pp] as const];
  });
}
