/**
 * A process group as a checkpoint records it — host, pid scope, pgid, and the start time of its
 * leader — so that after a crash the resumed run can stop what the dead one left running, and
 * only that: a pid reused by another process (another start time) is never signalled, nor is a
 * group on another host (a run directory restored on a new machine) or in another pid namespace
 * or boot (a resume from another container or `unshare -p` of the same machine, where the same
 * number names some other process group).
 */
import { hostname } from "node:os";
import type { PidScope } from "../core/tool.js";
import { KILL_GRACE_MS, killGroup } from "./group-kill.js";
import { currentPidScope, samePidScope } from "./pid-scope.js";
import { groupRunning, hasProc, processStartTime } from "./process-table.js";

/** Which process group a command ran in. `startTime`: of its leader, clock ticks after boot (/proc/<pid>/stat field 22). */
export interface ProcessGroupIdentity {
  host: string;
  pgid: number;
  startTime: number;
  /** Where `pgid` names the group; absent in checkpoints written before it was recorded (the host alone is judged then). */
  pidScope?: PidScope;
}

/**
 * stopped: it ran here and was stopped; gone: nothing of it runs (or its pid is another
 * process's now); elsewhere: recorded on another host, pid namespace or boot, or here where the
 * scope cannot be told — its numbers are not ours to signal.
 */
export type StopRecordedOutcome = "stopped" | "gone" | "elsewhere";

/** This machine's name, as identities record it. */
export function thisHost(): string {
  return hostname();
}

/**
 * Stops what is left of a recorded group: on this host and in this pid scope, if its leader still runs with the
 * recorded start time, the group and the leader's tree get SIGTERM, then SIGKILL after
 * `graceMs`, and the call waits until they are gone. With the leader gone but members left (a
 * background job outliving its shell), the group is stopped the same way: its id stays reserved
 * while it has members, so no other process can hold it. A pid now held by a process with another
 * start time, or a system without /proc to tell, is never signalled.
 */
export async function stopRecordedGroup(
  identity: ProcessGroupIdentity,
  opts: { graceMs?: number; host?: string; pidScope?: PidScope | null } = {},
): Promise<StopRecordedOutcome> {
  if (identity.host !== (opts.host ?? thisHost())) return "elsewhere";
  if (identity.pidScope !== undefined) {
    const here = opts.pidScope !== undefined ? opts.pidScope : await currentPidScope();
    if (!samePidScope(identity.pidScope, here)) return "elsewhere";
  }
  if (!(await hasProc())) return "gone";
  const startTime = await processStartTime(identity.pgid);
  if (startTime !== null && startTime !== identity.startTime) return "gone";
  if (startTime === null && !(await groupRunning(identity.pgid))) return "gone";
  await killGroup(identity.pgid, opts.graceMs ?? KILL_GRACE_MS);
  return "stopped";
}
