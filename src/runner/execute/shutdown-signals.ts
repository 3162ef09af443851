/**
 * How a run answers SIGINT and SIGTERM, for both edges (the CLI and the Action): the first
 * signal starts the graceful shutdown (tools stopped, checkpoints and reports written); the
 * second is noted and ignored, so GitHub's cancel — SIGINT, then SIGTERM 7.5 s later — cannot
 * cut that shutdown short; a third stops at once (a person pressing Ctrl-C again and again
 * means it, and the checkpoints on disk are already resumable). The edge hands in its process
 * as the signal source: this module installs nothing of its own accord.
 */
import { assertNever } from "../../core/errors.js";

/** What the n-th signal (1-based) does. */
type SignalAction = "shutdown" | "ignore" | "force";

/** Signals after the first that are noted and ignored before one forces the exit. */
const IGNORED_SIGNALS = 1;

const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM"] as const;
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

/** The one rule, pure: the first signal shuts down, the next `IGNORED_SIGNALS` are ignored, then exit. */
export function signalAction(count: number): SignalAction {
  if (count <= 1) return "shutdown";
  return count <= 1 + IGNORED_SIGNALS ? "ignore" : "force";
}

/** Where signals come from: the edge passes `process`. */
export interface SignalSource {
  on(signal: ShutdownSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface ShutdownHandlers {
  /** The first signal: abort the run so it checkpoints and writes its reports. */
  shutdown(signal: ShutdownSignal): void;
  /** A line for the person or the job log about each signal's effect. */
  note(message: string): void;
  /** The last straw: exit now. */
  force(signal: ShutdownSignal): void;
}

/** Listens for SIGINT and SIGTERM on `source` (counted together) and acts by `signalAction`. */
export function installShutdownSignals(source: SignalSource, handlers: ShutdownHandlers): void {
  let count = 0;
  const onSignal = (signal: ShutdownSignal): void => {
    count += 1;
    const action = signalAction(count);
    switch (action) {
      case "shutdown":
        handlers.note(`${signal}: checkpointing and writing reports (a third signal stops at once)`);
        handlers.shutdown(signal);
        return;
      case "ignore":
        handlers.note(`${signal} during shutdown: still writing checkpoints and reports (one more signal stops at once)`);
        return;
      case "force":
        handlers.note(`${signal} again: stopping at once; the checkpoints on disk resume the run`);
        handlers.force(signal);
        return;
      default:
        assertNever(action);
    }
  };
  for (const signal of SHUTDOWN_SIGNALS) {
    source.on(signal, () => onSignal(signal));
    // signal-exit (write-file-atomic's temp-file cleanup) re-raises a signal when it counts no
    // listener but its own — and it counts its subscribers twice, so one listener of ours reads
    // as none and a SIGTERM mid-write would kill the shutdown. A second one keeps it honest.
    source.on(signal, () => {});
  }
}
