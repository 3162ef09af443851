/**
 * Exit codes (docs/design.md §5) and how an error reaches the user: every error code maps to one exit
 * code (an exhaustive switch: a new code must be placed here), and a typed error prints its
 * message (which names file:line:column, or the path and operation), never a stack trace.
 */
import { OutputError, RhemaError, assertNever, describeOutputErrno, errnoCode, errorMessage, machineLimitOf, type ErrorCode } from "../core/errors.js";

export const EXIT_OK = 0;
/** A task failed, errored or stopped on a budget (unless --stopped-ok). */
export const EXIT_TASK_FAILED = 1;
/** Invalid input: tasks, policy, flags, a file the user named that cannot be read, a locked or changed run directory. */
export const EXIT_INVALID_INPUT = 2;
/**
 * The run could not continue: the machine, or a provider that refuses the run. rhema's own output
 * or state cannot be written (disk full, permissions), a required sandbox cannot be made, the
 * machine ran out of file handles, processes or memory (EMFILE, ENFILE, EAGAIN, ENOMEM), or a
 * provider refused the key or the quota (401/403, `insufficient_quota`, a billing error): the
 * tasks that met it are left unfinished, and the same command continues them once it is fixed.
 */
export const EXIT_CANNOT_CONTINUE = 3;
export const EXIT_INTERRUPTED = 130;

export type ExitCode =
  | typeof EXIT_OK | typeof EXIT_TASK_FAILED | typeof EXIT_INVALID_INPUT | typeof EXIT_CANNOT_CONTINUE | typeof EXIT_INTERRUPTED;

/** The exit codes as `rhema run --help` lists them. */
export const EXIT_CODES_HELP = [
  "Exit codes:",
  "  0    all tasks passed",
  "  1    a task failed (a check), errored (provider, timeout, step cap, a bug) or stopped on a budget",
  "       (unless --stopped-ok)",
  "  2    invalid input (tasks, policy, flags, a file named that cannot be read; nothing was written)",
  "  3    the run could not continue: the machine, or a provider that refuses the run. rhema's own",
  "       output or state cannot be written (disk full, permissions, a report path that is a",
  "       folder), --sandbox bwrap cannot be made here, or the machine ran out of file handles,",
  "       processes or memory (EMFILE, ENFILE, EAGAIN, ENOMEM: the tasks that met it are left",
  "       unfinished); fix it and run the same command to continue.",
  "       Also: this run was stalled (paused, stopped, suspended) past the lock's stale limit and",
  "       another run took its run directory: it stopped before running anything more, naming that",
  "       run, which carries on with the tasks. Or a provider refused the key or the quota (401/403,",
  "       insufficient_quota, billing): its trials are left unfinished, said once; set a valid key",
  "       (or add credit) and run the same command to continue them (no --retry-errored needed)",
  "  130  interrupted (checkpoints and reports are written; the same command continues)",
].join("\n");

/** The exit code of a command ended by an error with this code. */
export function exitCodeFor(code: ErrorCode): ExitCode {
  switch (code) {
    case "usage":
    case "invalid_input":
    case "invalid_config":
    case "task_invalid":
    case "policy_invalid":
    case "provider_unavailable":
    case "workspace_missing":
    case "prompt_render_failed":
    case "session_invalid":
    case "result_invalid":
    case "manifest_invalid":
    case "state_invalid":
    case "run_locked":
    case "task_changed":
      return EXIT_INVALID_INPUT;
    case "output_failed":
    case "lock_lost":
    case "commit_failed":
    case "sandbox_unavailable":
    case "machine_limit":
    case "provider_refused":
      return EXIT_CANNOT_CONTINUE;
    case "cancelled":
      return EXIT_INTERRUPTED;
    case "provider":
    case "provider_stream":
    case "timeout":
    case "step_cap":
    case "setup_failed":
    case "cassette_miss":
    case "mcp_start":
    case "mcp_changed":
    case "mcp_crashed":
    case "mcp_invalid":
    case "output_invalid":
    case "sandbox_failed":
    case "budget":
    case "internal":
    case "turn_in_progress":
    case "nothing_to_retry":
      return EXIT_TASK_FAILED;
    default:
      return assertNever(code);
  }
}

/** Errno codes that can only be the machine's, wherever they come from. */
const MACHINE_ONLY = new Set(["ENOSPC", "EDQUOT", "EROFS", "EMFILE", "ENFILE"]);

/** The exit code and message for an error that ends a command. */
export function describeFailure(err: unknown): { code: ExitCode; message: string } {
  // Out of file handles, processes or memory: the machine's, whatever was being done (a bug's
  // label on it included).
  const limit = err instanceof RhemaError && err.code !== "internal" ? null : machineLimitOf(err);
  if (limit) return { code: EXIT_CANNOT_CONTINUE, message: `rhema: ${limit.message}` };
  if (err instanceof RhemaError) {
    const code = exitCodeFor(err.code);
    const internal = err.code === "internal" || err.code === "turn_in_progress" || err.code === "nothing_to_retry";
    return { code, message: `rhema: ${internal ? "internal error: " : ""}${err.message}` };
  }
  const errno = errnoCode(err);
  const path = (err as { path?: unknown } | null)?.path;
  // Not wrapped by rhema's own writes (those are OutputErrors), so most likely a file the user
  // named; but a full disk or a read-only file system is the machine's, whoever's file it is.
  if (errno !== null && MACHINE_ONLY.has(errno)) {
    const message = typeof path === "string" ? new OutputError(path, "write", errno).message : `cannot write: ${describeOutputErrno(errno)}`;
    return { code: EXIT_CANNOT_CONTINUE, message: `rhema: ${message}` };
  }
  if (errno !== null && typeof path === "string") {
    const message = errorMessage(err);
    // Node's messages name the path already ("ENOENT: no such file or directory, open '/x'").
    return { code: EXIT_INVALID_INPUT, message: `rhema: ${message.includes(path) ? message : `${path}: ${message}`}` };
  }
  // An internal fault: say so plainly; the stack only with RHEMA_DEBUG.
  return { code: EXIT_TASK_FAILED, message: `rhema: internal error: ${errorMessage(err)}` };
}
