/**
 * Stopping a process group and its tree: SIGTERM to the group and to every descendant of its
 * leader (a snapshot taken first, so processes that left the group with setsid are caught), then
 * SIGKILL to what is left after a grace period, with tree-kill as a backstop, and a bounded wait
 * until none of them runs. Shared by a command's own timeout and cancel (process-group.ts) and by
 * the reaping of a group recorded before a crash (process-identity.ts).
 */
import treeKill from "tree-kill";
import { descendantPids, groupRunning, isRunning } from "./process-table.js";

/** Between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;
/** After the last signal: how long to wait for processes to vanish. */
export const SETTLE_MS = 2000;
const POLL_MS = 25;

/**
 * SIGTERM to group `pgid` (led by process `pgid`) and the snapshot of its tree; SIGKILL to what is
 * left after `graceMs`. Never throws: where /proc cannot be read (the machine out of file handles)
 * the group is signalled all the same, and the waits run their full length.
 */
export async function killGroup(pgid: number, graceMs: number): Promise<void> {
  const tree = await descendantPids(pgid).catch(() => [] as number[]);
  const gone = async (): Promise<boolean> =>
    !(await groupRunning(pgid)) && (await Promise.all(tree.map(isRunning))).every((running) => !running);
  const goneOrUnknown = (): Promise<boolean> => gone().catch(() => false);
  signalAll([-pgid, ...tree], "SIGTERM");
  if (await pollUntil(goneOrUnknown, graceMs)) return;
  signalAll([-pgid, ...tree], "SIGKILL");
  treeKill(pgid, "SIGKILL", () => {});
  await pollUntil(goneOrUnknown, SETTLE_MS);
}

/** Sends `signal` to each target (a pid, or a negative pgid); one already gone is skipped. */
export function signalAll(targets: readonly number[], signal: NodeJS.Signals): void {
  for (const target of targets) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}

/** Polls `done` until it holds (true) or `limitMs` passes (false). */
export async function pollUntil(done: () => Promise<boolean>, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!(await done())) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return true;
}
