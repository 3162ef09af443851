/**
 * Typed errors. What stops a turn or a run is a `RhemaError` with a stable `code` and a
 * message written for the person who must act; what the model can fix goes back to it as a
 * tool result instead and never becomes one of these.
 */

export type ErrorCode =
  | "workspace_missing"
  | "prompt_render_failed"
  | "invalid_config"
  | "session_invalid"
  | "session_io"
  | "step_cap"
  | "cancelled"
  | "timeout"
  | "provider"
  | "provider_stream"
  | "commit_failed"
  | "turn_in_progress"
  | "nothing_to_retry"
  | "invalid_input"
  | "policy_invalid"
  | "task_invalid"
  | "result_invalid"
  | "usage"
  | "run_locked"
  | "task_changed"
  | "setup_failed"
  | "provider_unavailable";

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
  constructor(
    message: string,
    opts: { retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown; code?: "provider" | "provider_stream" },
  ) {
    super(opts.code ?? "provider", message, { cause: opts.cause });
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Thrown by a tool for input the model can correct; the engine turns it into an error result. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
