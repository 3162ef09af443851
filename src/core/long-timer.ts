/**
 * A timer for any delay. `setTimeout` takes at most 2^31−1 ms (about 24.8 days): a longer
 * delay (`--timeout 1000h`) overflows and fires at once. Every long limit rhema keeps — a task's
 * timeout, a command's, a stream's idle limit — is scheduled through here, in chunks no longer
 * than the most `setTimeout` takes. An infinite delay never fires. No clock of its own: the
 * chunks add up to the delay.
 */

/** The longest delay `setTimeout` takes as given. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  /** Stops the timer; `fn` will not run. Safe to call more than once, and after it fired. */
  clear(): void;
}

/** Runs `fn` once, `delayMs` from now (below 0 or NaN: as soon as possible; Infinity: never). */
export function startLongTimer(fn: () => void, delayMs: number): LongTimer {
  let remainingMs = Number.isNaN(delayMs) ? 0 : Math.max(0, delayMs);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = (): void => {
    if (remainingMs === Infinity) return;
    const chunkMs = Math.min(remainingMs, MAX_TIMER_MS);
    timer = setTimeout(() => {
      remainingMs -= chunkMs;
      if (remainingMs > 0) schedule();
      else fn();
    }, chunkMs);
  };
  schedule();
  return { clear: () => clearTimeout(timer) };
}
