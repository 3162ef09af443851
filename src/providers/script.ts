/**
 * The script a `scripted` provider plays: one entry per model step, each one assistant
 * message. This is the shape task files use under `model.script`.
 */

export interface ScriptedCall {
  /** Tool name. */
  call: string;
  input?: unknown;
}

/**
 * One assistant message: `say` (text), and/or `call`+`input` (one tool call), or `calls`
 * (several calls in one step). `fail` makes the request fail instead (for tests of retry and
 * error reporting): it fails `times` times (default: always), then the step plays normally.
 * `chunkDelayMs` spaces the streamed chunks, so a kill can land mid-stream.
 */
export interface ScriptStep {
  say?: string;
  call?: string;
  input?: unknown;
  calls?: ScriptedCall[];
  fail?: { status?: number; message?: string; retryable?: boolean; times?: number };
  chunkDelayMs?: number;
}
