/**
 * Notices the model SDKs print with a bare `console.warn`: the Anthropic SDK warns of a
 * deprecated model (`claude-sonnet-4-5`, end-of-life 2026-11-30) on every request — four lines
 * in a one-task run. The edges (cli, action) route them through their own warning output, once
 * per distinct message (so once per model). Nothing here prints: it only swaps the method of
 * the console object an edge hands it.
 */
import { format } from "node:util";

/** The part of a console the SDKs warn through. */
export interface WarnTarget {
  warn(...args: unknown[]): void;
}

/**
 * Replaces `target.warn` so that each distinct message reaches `warn` once, as one line (the
 * SDK's message has several); repeats are dropped. Returns the function that puts the original
 * back.
 */
export function routeSdkWarnings(target: WarnTarget, warn: (message: string) => void): () => void {
  const original = target.warn;
  const seen = new Set<string>();
  target.warn = (...args: unknown[]) => {
    const message = format(...args).replace(/\s*\n\s*/g, " ").trim();
    if (message === "" || seen.has(message)) return;
    seen.add(message);
    warn(message);
  };
  return () => {
    target.warn = original;
  };
}
