/**
 * A process group as a checkpoint records it — host, pgid, and the start time of its leader — so
 * that after a crash the resumed run can stop what the dead one left running, and only that: a
 * pid reused by another process (another start time) is never signalled, nor is a group on
 * another host (a run directory restored on a new machine).
 */
import { hostname } from "node:os";
import { KILL_GRACE_MS, killGroup } from "./group-kill.js";
import { groupRunning, hasProc, processStartTime } from "./process-table.js";

/** Which process group a command ran in. `startTime`: of its leader, clock ticks after boot (/proc/<pid>/stat field 22). */
export interface ProcessGroupIdentity {
  host: string;
  pgid: number;
  startTime: number;
}

/** stopped: it ran here and was stopped; gone: nothing of it runs (or its pid is another process's now); other-host: not ours to judge. */
export type StopRecordedOutcome = "stopped" | "gone" | "other-host";

/** This machine's name, as identities record it. */
export function thisHost(): string {
  return hostname();
}

/**
 * Stops what is left of a recorded group: on this host, if its leader still runs with the
 * recorded start time, the group and the leader's tree get SIGTERM, then SIGKILL after
 * `graceMs`, and the call waits until they are gone. With the leader gone but members left (a
 * background job outliving its shell), the group is stopped the same way: its id stays reserved
 * while it has members, so no other process can hold it. A pid now held by a process with another
 * start time, or a system without /proc to tell, is never signalled.
 */
export async function stopRecordedGroup(
  identity: ProcessGroupIdentity,
  opts: { graceMs?: number; host?: string } = {},
): Promise<StopRecordedOutcome> {
  if (identity.host !== (opts.host ?? thisHost())) return "other-host";
  if (!(await hasProc())) return "gone";
  const startTime = await processStartTime(identity.pgid);
  if (startTime !== null && startTime !== identity.startTime) return "gone";
  if (startTime === null && !(await groupRunning(identity.pgid))) return "gone";
  await killGroup(identity.pgid, opts.graceMs ?? KILL_GRACE_MS);
  return "stopped";
}
