/**
 * The commit hook: how a driver makes a turn durable. The engine awaits it at every boundary.
 */
import type { Session } from "./session.js";
import type { Section, TranscriptStats } from "./transcript-types.js";

/**
 * input: the turn's input (or a steering nudge) was pushed.
 * intent: an assistant message is complete; its tool calls have not run yet.
 * started: one call was approved and is about to run (`session.calls` holds its record; for the
 *   shell, with its held process group): from here on it may have had effects.
 * result: one tool result was appended.
 * flush: old sections were compacted into a summary (the sections carry it).
 */
export type Boundary = "input" | "intent" | "started" | "result" | "flush";

export interface Commit {
  boundary: Boundary;
  /** The live session: serialize it before returning, it changes after. */
  session: Session;
  sections: Section[];
  stats: TranscriptStats | null;
}

/**
 * Contract: resolves once the commit is durable; a throw fails the turn and means the boundary is
 * not on disk — the engine undoes what it says (a call recorded as started is discarded, never
 * run), so nothing after the durable point may throw.
 */
export type CommitHook = (commit: Commit) => Promise<void>;
