/**
 * What a throw inside a task means, decided in one pure place:
 *
 *   errored   the task's outcome (the agent failed: provider, timeout, step cap, setup, or a
 *             bug — `internal`), written to result.json; the run goes on
 *   stop      the run cannot go on (its own output cannot be written; a checkpoint or state
 *             file it cannot trust; the machine ran out of file handles, processes or memory):
 *             rethrown, so the CLI names it and exits 3 or 2, the task keeps no result, and the
 *             same command continues it once the cause is fixed
 *
 * The machine's limits are told by errno class (EMFILE, ENFILE, EAGAIN, ENOMEM, ENOBUFS anywhere
 * in the cause chain: from spawn, open, readdir, a copy, a provider's socket), never by the step
 * that met them. Any other unknown throw (a TypeError, a bare errno) is `internal`, never
 * `provider`: only outages and timeouts are what `--retry-errored` retries.
 */
import { OutputError, RhemaError, assertNever, errorMessage, findCause, machineLimitOf, type ErrorCode } from "../../core/errors.js";

export type TaskFailure = { kind: "errored"; error: RhemaError } | { kind: "stop"; error: RhemaError };

/**
 * `err` as thrown by the task's setup or turn. `timeoutReason` is the task's own abort reason
 * when its timeout fired (a setup stopped by it surfaces as a plain cancel: the timeout is the
 * truth).
 */
export function classifyTaskFailure(err: unknown, timeoutReason?: unknown): TaskFailure {
  const output = findCause(err, (e): e is OutputError => e instanceof OutputError);
  if (output) return { kind: "stop", error: output };
  // What aborted the task: its timeout (its outcome), or a lock the run lost (the run's end).
  if (timeoutReason instanceof RhemaError) return { kind: failureKind(timeoutReason.code) === "stop" ? "stop" : "errored", error: timeoutReason };
  const limit = machineLimitOf(err);
  if (limit) return { kind: "stop", error: limit };
  if (!(err instanceof RhemaError)) return { kind: "errored", error: new RhemaError("internal", errorMessage(err), { cause: err }) };
  return { kind: failureKind(err.code), error: err };
}

/** Whether an error with this code, thrown inside a task, is the task's outcome or stops the run. */
export function failureKind(code: ErrorCode): TaskFailure["kind"] {
  switch (code) {
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
    case "cancelled":
    case "commit_failed":
    case "internal":
    case "turn_in_progress":
    case "nothing_to_retry":
    case "invalid_input":
    case "invalid_config":
    case "workspace_missing":
    case "prompt_render_failed":
      return "errored";
    case "output_failed":
    case "lock_lost":
    case "sandbox_unavailable":
    case "machine_limit":
    case "session_invalid":
    case "result_invalid":
    case "manifest_invalid":
    case "state_invalid":
    case "usage":
    case "task_invalid":
    case "policy_invalid":
    case "provider_unavailable":
    case "run_locked":
    case "task_changed":
    case "provider_refused":
      return "stop";
    default:
      return assertNever(code);
  }
}

/** Whether `--retry-errored` continues a task errored with this (recorded) code: outages and timeouts only. */
export function isRetryableErrorCode(code: string): boolean {
  return code === "provider" || code === "provider_stream" || code === "timeout" || code === "mcp_start";
}
