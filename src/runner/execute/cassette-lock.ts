/**
 * One recorder per cassette folder (issue 25): a run that writes cassettes (`--cassette-mode
 * record` or `record-missing`) and `rhema cassette prune` hold `DIR/.rhema-recording.lock` — the
 * run directory's lock (run-lock.ts: owner, heartbeat, takeover of a dead or paused holder, across
 * pid namespaces) on another file — so two runs never append to, or replace, the same trial's
 * cassette at once. A recorder confirms the lock before each exchange it writes; a replay that
 * only reads takes no lock.
 */
import { join } from "node:path";
import { acquireRunLock, type RunLock } from "../run-dir/run-lock.js";
import type { LockTiming } from "../run-dir/lock-owner.js";

export const CASSETTE_LOCK_FILE = ".rhema-recording.lock";

/** Takes `dir`'s recorder lock (making `dir` 0700 if missing); refused with `run_locked` while another holds it. */
export function lockCassetteFolder(dir: string, pid: number, timing?: LockTiming): Promise<RunLock> {
  return acquireRunLock(join(dir, CASSETTE_LOCK_FILE), pid, new Date(), {
    ...timing, remedy: "wait for it to finish, or record into another --cassette folder", what: "the cassette folder's recording lock",
  });
}
