/**
 * Typed errors. What stops a turn or a run is a `RhemaError` with a stable `code` and a
 * message written for the person who must act; what the model can fix goes back to it as a
 * tool result instead and never becomes one of these. The CLI maps every code to an exit code
 * (src/cli/exit-codes.ts, an exhaustive switch): add a code here and the compiler asks there.
 */
import { counted } from "./counted.js";

/** The one union of error codes, grouped by who must act. */
export type ErrorCode =
  // The input (exit 2): the user fixes a file or a flag.
  | "usage"
  | "invalid_input"
  | "invalid_config"
  | "task_invalid"
  | "policy_invalid"
  | "provider_unavailable"
  | "workspace_missing"
  | "prompt_render_failed"
  // A run directory or session that cannot be trusted (exit 2): named, with the way out.
  | "session_invalid"
  | "result_invalid"
  | "manifest_invalid"
  | "state_invalid"
  | "run_locked"
  | "task_changed"
  // The machine (exit 3): rhema's own output or state cannot be written, a required sandbox cannot be
  // made, the machine ran out of a resource for a while (file handles, processes, memory), or another
  // runner took the run directory's lock while this one was stalled.
  | "output_failed"
  | "lock_lost"
  | "commit_failed"
  | "sandbox_unavailable"
  | "machine_limit"
  // A provider refuses the run (a dead or revoked key, a spent quota or balance): the run stops its trials
  // resumably and exits 3; a valid key and the same command continue it.
  | "provider_refused"
  // A task's agent failed (recorded as an errored task; exit 1).
  | "provider"
  | "provider_stream"
  | "timeout"
  | "step_cap"
  | "setup_failed"
  // A replay found no recorded answer for a request (issue 25): the prompt, tools or policy changed.
  | "cassette_miss"
  // A task's structured output (`output:`) was still not valid JSON for its schema after its repairs.
  | "output_invalid"
  // An MCP server of the task (issue 27): it did not start in time (retryable), its tool specs changed
  // since the checkpoint, it crashed a second time, or it offers a tool whose input schema is not valid.
  | "mcp_start"
  | "mcp_changed"
  | "mcp_crashed"
  | "mcp_invalid"
  // A command's wrapper (the bwrap sandbox, the perl reaper) exited before the command started.
  | "sandbox_failed"
  | "cancelled"
  // A task stopped on a budget (recorded as a stopped task, resumable with a larger one; exit 1 unless --stopped-ok).
  | "budget"
  // rhema itself is wrong: a bug, said plainly (an unknown throw is never given a known code).
  | "internal"
  | "turn_in_progress"
  | "nothing_to_retry";

export class RhemaError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Anything the engine refuses or fails with; `code` says which. */
export class CodingAgentError extends RhemaError {}

/** The turn was cancelled through its AbortSignal; the session stays resumable. */
export class CancelledError extends CodingAgentError {
  constructor(message = "the turn was cancelled", options?: { cause?: unknown }) {
    super("cancelled", message, options);
  }
}

/**
 * A task's answer was still not valid against its `output.schema` after its `repairs`: no
 * placeholder is ever accepted. `errors` are the last validation's, in the words the model read.
 */
export class OutputInvalidError extends CodingAgentError {
  readonly errors: string;
  constructor(errors: string, repairs: number) {
    super("output_invalid", `the answer is not valid against output.schema after ${counted(repairs, "repair")}: ${errors}`);
    this.errors = errors;
  }
}

/** Which budget is spent: the task's own, its matrix cell's or the run's, in dollars or in tokens, and what was spent against it. */
export interface SpentBudget {
  scope: "task" | "cell" | "run";
  measure: "cost" | "tokens";
  /** The budget: dollars for `cost`, tokens for `tokens`. */
  limit: number;
  /** What was spent when it was checked, in the same unit (every earlier run of the task included). */
  spent: number;
}

/**
 * A request would start with a budget spent: the turn stops before it, the session committed at
 * its last boundary, so a run with a larger budget continues where this one stopped.
 */
export class BudgetError extends CodingAgentError {
  readonly budget: SpentBudget;
  constructor(budget: SpentBudget, before: "task" | "worker") {
    const request = before === "worker" ? "the compaction worker's request" : "the next model request";
    super("budget", `${describeSpentBudget(budget)}: stopped before ${request}; the session is committed at its last boundary, and a run with a larger budget continues it`);
    this.budget = budget;
  }
}

/** "the task's cost budget of $0.0100 is spent ($0.0123)", "the run's token budget of 5000 is spent (5210)". */
export function describeSpentBudget(b: SpentBudget): string {
  const amount = (n: number) => (b.measure === "cost" ? formatUsd(n) : String(Math.round(n)));
  return `the ${b.scope}'s ${b.measure === "cost" ? "cost" : "token"} budget of ${amount(b.limit)} is spent (${amount(b.spent)})`;
}

/** Dollars as budgets and reports print them: cents from $1 up, four decimals below. */
export function formatUsd(usd: number): string {
  if (usd === 0) return "$0.00";
  if (usd < 0.0001) return "<$0.0001";
  return `$${usd.toFixed(usd >= 1 ? 2 : 4)}`;
}

/** Dollars as a user writes them (`20`, `0.5`, `$5`) as a number above 0, or null. */
export function parseUsd(text: string): number | null {
  const bare = text.trim().replace(/^\$/, "");
  const n = /^(\d+(\.\d*)?|\.\d+)$/.test(bare) ? Number(bare) : NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** A session file that cannot be read back: names the file and what is wrong with it. */
export class SessionFileError extends RhemaError {
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super("session_invalid", `${path}: ${message}`, options);
    this.path = path;
  }
}

/**
 * A model provider's failure. Providers retry `retryable` errors themselves (bounded) and
 * surface the rest; `status` is the HTTP status when there was one.
 */
export class ProviderError extends RhemaError {
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /**
   * A retryable failure that refuses the run when it does not clear within the bounded retries
   * (a RESOURCE_EXHAUSTED that stays): what the last attempt then throws (`ProviderRefusedError`).
   */
  readonly refusalIfPersistent: ProviderRefusal | undefined;
  constructor(
    message: string,
    opts: {
      retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown; code?: "provider" | "provider_stream" | "provider_refused";
      refusalIfPersistent?: ProviderRefusal;
    },
  ) {
    super(opts.code ?? "provider", message, { cause: opts.cause });
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.refusalIfPersistent = opts.refusalIfPersistent;
  }
}

/** Why a provider refuses the run: the key (`auth`: missing, wrong, revoked, not permitted) or the account's money (`quota`). */
export type RefusalReason = "auth" | "quota";

/** A provider's refusal of the run, as the reports and the one message say it. */
export interface ProviderRefusal {
  /** The provider's registry name (`anthropic`, `openai`). */
  provider: string;
  reason: RefusalReason;
  /** The HTTP status; null for an error frame inside a stream. */
  status: number | null;
  /** The error's kind from the body (`authentication_error`, `insufficient_quota`), when given. */
  kind: string | null;
  /** The body's human message, when given. */
  detail: string | null;
}

/**
 * A failure no retry and no other trial can get past (a dead key, a spent quota): the runner stops
 * the provider's trials resumably and says it once (runner/execute/provider-stops.ts), instead of
 * recording each trial errored. Never retryable.
 */
export class ProviderRefusedError extends ProviderError {
  readonly refusal: ProviderRefusal;
  constructor(refusal: ProviderRefusal, options?: { cause?: unknown }) {
    super(`${refusal.provider}: ${refusalWhat(refusal)}`, { retryable: false, ...(refusal.status !== null ? { status: refusal.status } : {}), code: "provider_refused", cause: options?.cause });
    this.refusal = refusal;
  }
}

/** "refused the key (401 authentication_error: invalid x-api-key)": what the provider said, in a line. */
export function refusalWhat(r: ProviderRefusal): string {
  const said = [r.status !== null ? String(r.status) : null, r.kind].filter((x) => x !== null).join(" ");
  const full = said && r.detail ? `${said}: ${r.detail}` : said || r.detail || "";
  return `${r.reason === "auth" ? "refused the key" : "refused the run: its quota or credit is spent"}${full ? ` (${full})` : ""}`;
}

/** Thrown by a tool for input the model can correct; the engine turns it into an error result. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

/** What rhema was doing to its own output or state when the file system refused. */
export type OutputOperation = "write" | "append to" | "create" | "copy into" | "remove" | "read";

const ERRNO_TEXT: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EISDIR: "is a folder",
  ENOTDIR: "a part of the path is a file, not a folder",
  EEXIST: "a file is in the way where a folder should be",
  ENOENT: "no such file or folder",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
  EIO: "input/output error",
  ENOMEM: "out of memory",
  EBUSY: "resource busy",
  EAGAIN: "resource temporarily unavailable (too many processes, or no memory for one)",
  ENOBUFS: "no buffer space available",
  ENXIO: "a FIFO with no reader, or a device that is not there",
};

/** EAGAIN writing a report into a FIFO (opened non-blocking) is the FIFO, not a limit of the machine. */
const WRITE_ERRNO_TEXT: Readonly<Record<string, string>> = { EAGAIN: "the reader stopped reading (the FIFO stayed full)" };
const WRITE_ERRNO_REMEDY: Readonly<Record<string, string>> = { EAGAIN: "keep the FIFO's reader reading, or choose another report path" };

const ERRNO_REMEDY: Readonly<Record<string, string>> = {
  ENOSPC: "free some space",
  EDQUOT: "free some space or raise the quota",
  EACCES: "fix the permissions, or choose another --out or report path",
  EPERM: "fix the permissions, or choose another --out or report path",
  EROFS: "choose another --out or report path on a writable file system",
  EISDIR: "remove the folder, or choose another --out or report path",
  ENOTDIR: "choose another --out or report path",
  EEXIST: "remove the file, or choose another --out or report path",
  EMFILE: "raise the open-file limit (ulimit -n) or lower --concurrency",
  ENFILE: "raise the open-file limit (ulimit -n) or lower --concurrency",
  EAGAIN: "raise the process limit (ulimit -u) or free memory, or lower --concurrency",
  ENOMEM: "free some memory or lower --concurrency",
  ENOBUFS: "free some memory or lower --concurrency",
  ENXIO: "start the FIFO's reader first, or choose another report path",
};

/** Errno codes that say the machine is in the way (space, permissions, limits), never the input's content. */
const MACHINE_ERRNOS = new Set(["ENOSPC", "EDQUOT", "EACCES", "EPERM", "EROFS", "EMFILE", "ENFILE", "EIO", "ENOMEM", "EBUSY"]);

/**
 * The errno code (`ENOSPC`, …) of a Node file-system error; null for anything else. Node's
 * SystemErrors (`ERR_FS_EISDIR` from `rm`) carry the errno in `info.code`.
 */
export function errnoCode(err: unknown): string | null {
  const e = err as { code?: unknown; info?: { code?: unknown } } | null;
  for (const code of [e?.code, e?.info?.code]) if (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) return code;
  return null;
}

/** Whether an errno code is about the machine (no space, no permission, no file handles). */
export function isMachineErrno(code: string): boolean {
  return MACHINE_ERRNOS.has(code);
}

/**
 * Errno codes of a resource the machine ran out of for a while — file handles (EMFILE: the
 * process's, ENFILE: the system's), processes or memory to fork (EAGAIN), memory (ENOMEM,
 * ENOBUFS) — from spawn, open, readdir, copy or a socket. Never the task's doing: a task that meets
 * one is left unfinished, and the run ends (exit 3) so that the same command continues it.
 */
const MACHINE_LIMIT_ERRNOS = new Set(["EMFILE", "ENFILE", "EAGAIN", "ENOMEM", "ENOBUFS"]);

/** Whether an errno code says the machine ran out of a resource for a while (see `MachineLimitError`). */
export function isMachineLimitErrno(code: string): boolean {
  return MACHINE_LIMIT_ERRNOS.has(code);
}

/**
 * The machine ran out of a resource (file handles, processes, memory) while rhema worked: not the
 * task's outcome nor a bug. Names the errno, what was being done (`spawn /bin/sh`, `open`) and
 * what to do; the task that met it has no result, so the same command continues it.
 */
export class MachineLimitError extends RhemaError {
  /** The errno code, e.g. `EMFILE`. */
  readonly errno: string;
  constructor(errno: string, doing: string | null, options?: { cause?: unknown }) {
    super("machine_limit", `the machine ran out of a resource${doing ? ` (${doing})` : ""}: ${describeOutputErrno(errno)}`, options);
    this.errno = errno;
  }
}

/**
 * Whether one error (not its causes) is a machine limit. EAGAIN from a `read` or `write` is a
 * non-blocking file that would block (a FIFO, a device), not a limit: it is left to its caller.
 */
function isMachineLimitFailure(e: unknown): boolean {
  const errno = errnoCode(e);
  if (errno === null || !isMachineLimitErrno(errno)) return false;
  const syscall = (e as { syscall?: unknown }).syscall;
  return !(errno === "EAGAIN" && (syscall === "read" || syscall === "write"));
}

/**
 * `err` as a `MachineLimitError` when it or an error in its cause chain carries a machine-limit
 * errno (a provider's connection error that a `socket` EMFILE caused included); null otherwise.
 */
export function machineLimitOf(err: unknown): MachineLimitError | null {
  const found = findCause(err, (e): e is object => e instanceof MachineLimitError || isMachineLimitFailure(e));
  if (found === null) return null;
  if (found instanceof MachineLimitError) return found;
  const syscall = (found as { syscall?: unknown }).syscall;
  const path = (found as { path?: unknown }).path;
  const doing = typeof syscall === "string" ? `${syscall}${typeof path === "string" && !syscall.includes(path) ? ` ${path}` : ""}` : null;
  return new MachineLimitError(errnoCode(found)!, doing, { cause: err });
}

/**
 * rhema could not write (or read back) its own output or state — the run directory, a report
 * path such as --junit. Names the path, the operation and what to do; nothing the run finished
 * is lost, so the same command continues once the cause is fixed.
 */
export class OutputError extends RhemaError {
  readonly path: string;
  readonly operation: OutputOperation;
  /** The errno code, e.g. `ENOSPC`. */
  readonly errno: string;
  constructor(path: string, operation: OutputOperation, errno: string, options?: { cause?: unknown }) {
    super("output_failed", `cannot ${operation} ${path}: ${describeOutputErrno(errno, operation)}`, options);
    this.path = path;
    this.operation = operation;
    this.errno = errno;
  }
}

/** What an errno means for rhema's output and what to do: "no space left on device (ENOSPC); free some space, then …". */
export function describeOutputErrno(errno: string, operation?: OutputOperation): string {
  const writing = operation === "write" || operation === "append to";
  const text = (writing ? WRITE_ERRNO_TEXT[errno] : undefined) ?? ERRNO_TEXT[errno] ?? errno;
  const remedy = (writing ? WRITE_ERRNO_REMEDY[errno] : undefined) ?? ERRNO_REMEDY[errno];
  return `${text} (${errno}); ${remedy ? `${remedy}, then ` : ""}run the same command to continue`;
}

/** The first error in `err`'s cause chain that `match` accepts (the error itself included). */
export function findCause<T>(err: unknown, match: (e: unknown) => e is T): T | null {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e !== undefined && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    if (match(e)) return e;
    seen.add(e);
  }
  return null;
}

export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Throws `err` as a `MachineLimitError` when it (or a cause) is one (see `machineLimitOf`); else returns. */
export function throwIfMachineLimit(err: unknown): void {
  const limit = machineLimitOf(err);
  if (limit) throw limit;
}
