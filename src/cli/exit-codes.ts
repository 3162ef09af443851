/**
 * Exit codes (DESIGN §5) and how an error reaches the user: a typed error prints its message
 * (which names file:line:column where there is one), never a stack trace.
 */
import { RhemaError } from "../core/errors.js";

export const EXIT_OK = 0;
/** A task failed or errored. */
export const EXIT_TASK_FAILED = 1;
/** Invalid input: tasks, policy, flags, a locked or changed run directory. */
export const EXIT_INVALID_INPUT = 2;
export const EXIT_INTERRUPTED = 130;

export type ExitCode = typeof EXIT_OK | typeof EXIT_TASK_FAILED | typeof EXIT_INVALID_INPUT | typeof EXIT_INTERRUPTED;

/** The exit code and message for an error that ends a command. */
export function describeFailure(err: unknown): { code: ExitCode; message: string } {
  if (err instanceof RhemaError) return { code: EXIT_INVALID_INPUT, message: `rhema: ${err.message}` };
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === "string" && typeof e.path === "string") {
    // Node's messages name the path already ("ENOENT: no such file or directory, open '/x'").
    return { code: EXIT_INVALID_INPUT, message: `rhema: ${e.message.includes(e.path) ? e.message : `${e.path}: ${e.message}`}` };
  }
  // An internal fault: say so plainly; the stack only with RHEMA_DEBUG.
  return { code: EXIT_TASK_FAILED, message: `rhema: internal error: ${err instanceof Error ? err.message : String(err)}` };
}
