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
 * `chunkDelayMs` spaces the streamed chunks, so a kill can land mid-stream. `reasoningTokens`
 * says the model reasoned that many tokens before the message: they are added to the step's
 * output tokens and reported as their reasoning part, as a reasoning model's are.
 */
export interface ScriptStep {
  say?: string;
  call?: string;
  input?: unknown;
  calls?: ScriptedCall[];
  fail?: { status?: number; message?: string; retryable?: boolean; times?: number };
  chunkDelayMs?: number;
  reasoningTokens?: number;
}

/** One alternative of `scripts`: a script and its weight in the seeded draw (default 1). */
export interface ScriptAlternative {
  script: ScriptStep[];
  /** Above 0; the draw picks the alternative with probability weight ÷ the weights' sum. */
  weight?: number;
}

/**
 * How a trial's alternative is chosen: `draw` (default), a seeded draw weighted by `weight`;
 * `repeat`, alternative (repeat − 1) mod count, so repeat 1 plays the first (weights ignored).
 */
export type ScriptPick = "draw" | "repeat";

/** The scripted model as a task file writes it: `script`, or `scripts` with `pick` (they exclude each other). */
export interface ScriptedModelScripts {
  script?: readonly ScriptStep[];
  scripts?: readonly ScriptAlternative[];
  pick?: ScriptPick;
}
