/**
 * The run directory lock's stale limit as the CLI takes it: `RHEMA_LOCK_STALE_MS` (default
 * 30 000; the heartbeat is a sixth of it) — shortened by tests of a stalled runner, lengthened
 * where long pauses are expected.
 */
import { RhemaError } from "../core/errors.js";
import { lockTimingFor, type LockTiming } from "../runner/run-dir/lock-owner.js";

/** The shortest stale limit taken: below it a busy machine's heartbeat would miss it. */
const MIN_LOCK_STALE_MS = 300;

/** The lock's timing, or undefined (the default) when unset; anything but a whole number of ms from 300 up is a usage error quoting it. */
export function lockTimingFromEnv(env: Readonly<Record<string, string | undefined>>): LockTiming | undefined {
  const text = env.RHEMA_LOCK_STALE_MS;
  if (text === undefined || text === "") return undefined;
  const ms = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(ms) || ms < MIN_LOCK_STALE_MS) {
    throw new RhemaError("usage", `Expected RHEMA_LOCK_STALE_MS to be a whole number of milliseconds from ${MIN_LOCK_STALE_MS} up, got "${text}"`);
  }
  return lockTimingFor(ms);
}
