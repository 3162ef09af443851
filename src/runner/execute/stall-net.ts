/**
 * The net under a run: when the process's event loop empties while the run is unfinished, a
 * promise is waiting for something that can never happen (an event listened for too late) —
 * and Node would exit 0 with no result, no reports and the lock left: a green CI job. The edge
 * hands in its process as the source of `beforeExit`. The first time, the run is told (`stall`):
 * each task still running is recorded errored (`internal`, `STALLED_MESSAGE`), the reports are
 * written and the lock released, and the run ends as any run does (exit 1). Should the loop
 * empty again with the run still unfinished, `giveUp` ends the process at once (exit 1). The
 * edge installs it; this module installs nothing of its own accord.
 */
import { RhemaError } from "../../core/errors.js";

export const STALLED_MESSAGE =
  "rhema stopped making progress: this task waited for an event that can never come (a bug in rhema), " +
  "and the process had nothing else left to do";

/** Where `beforeExit` comes from: the edge passes `process`. */
export interface ExitSource {
  on(event: "beforeExit", listener: () => void): unknown;
}

export interface StallHandlers {
  /** Whether the run (the command) has finished: then `beforeExit` is the normal end. */
  finished(): boolean;
  /** The first empty loop: abort the run's `stalled` signal with this reason. */
  stall(reason: RhemaError): void;
  /** The loop emptied again, the run still unfinished: exit 1 now, saying `message`. */
  giveUp(message: string): void;
}

/** Listens for `beforeExit` on `source` and acts as the module comment says. */
export function installStallNet(source: ExitSource, handlers: StallHandlers): void {
  let stalled = false;
  source.on("beforeExit", () => {
    if (handlers.finished()) return;
    if (!stalled) {
      stalled = true;
      handlers.stall(new RhemaError("internal", STALLED_MESSAGE));
      return;
    }
    handlers.giveUp(`${STALLED_MESSAGE}; its results and reports may be incomplete, and its run directory may still be locked`);
  });
}

/**
 * The net as an edge uses it: `stalled` aborts at the first empty loop, `giveUp` (which must exit
 * the process) at the second; call `finish()` once the command has returned.
 */
export function stallNetFor(source: ExitSource, giveUp: (message: string) => void): { stalled: AbortSignal; finish(): void } {
  const stall = new AbortController();
  let finished = false;
  installStallNet(source, { finished: () => finished, stall: (reason) => stall.abort(reason), giveUp });
  return { stalled: stall.signal, finish: () => void (finished = true) };
}

/** `work`'s value, or "stalled" once `stalled` aborts first. */
export async function untilStalled<T>(work: Promise<T>, stalled: AbortSignal | undefined): Promise<T | "stalled"> {
  if (!stalled) return work;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<"stalled">((r) => {
    onAbort = () => r("stalled");
    if (stalled.aborted) r("stalled");
    else stalled.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    stalled.removeEventListener("abort", onAbort!);
  }
}
