/**
 * Tool-call states in the session (`session.calls`): the step loop records each change here, at
 * the boundary that makes it durable, and a resume reads them (conversation.ts `planRevive`).
 *
 *   intent    every call of the assistant message → pending (a cut reply's → error at once)
 *   started   the call → started, with its process group and workspace fingerprint
 *   result    the call → completed, or error when its result is one (a denial carries its `Denial`)
 *
 * Records are replaced, never edited, so the checkpoint store finds what changed by identity.
 */
import type { Denial } from "./approval.js";
import type { Message, ToolCallBlock, ToolResultBlock } from "./messages.js";
import type { CallRecord, Session, StartedCall } from "./session.js";

/** Marks `calls` pending: they are in the intent about to be committed. */
export function recordPending(session: Session, calls: readonly ToolCallBlock[]): void {
  if (calls.length === 0) return;
  const next = { ...session.calls };
  for (const call of calls) next[call.id] = { state: "pending" };
  session.calls = next;
}

export function recordStarted(session: Session, callId: string, record: Omit<StartedCall, "state">): void {
  session.calls = { ...session.calls, [callId]: { state: "started", ...record } };
}

/** The state `result` leaves its call in: completed, or error (with the denial when one denied it). */
export function recordAnswer(session: Session, result: ToolResultBlock, at: Date, denial?: Denial): void {
  const record: CallRecord = result.isError
    ? { state: "error", at: at.toISOString(), ...(denial ? { denial } : {}) }
    : { state: "completed", at: at.toISOString() };
  session.calls = { ...session.calls, [result.callId]: record };
}

/** The call's record; a call without one is pending (never started: see `withCallStates`). */
export function callStateOf(session: Pick<Session, "calls">, callId: string): CallRecord {
  return session.calls?.[callId] ?? { state: "pending" };
}

/**
 * `session` with a record for every call that has none, read off its messages: answered →
 * completed or error (as its result says), else pending. Rhema writes a record for each call;
 * this is for sessions built by hand. Edits `session.calls` in place and returns the session.
 */
export function withCallStates(session: Session): Session {
  const missing = inferCallStates(session.messages, {}, () => undefined);
  const known = session.calls ?? {};
  const added = Object.entries(missing).filter(([id]) => !(id in known));
  if (added.length > 0) session.calls = { ...known, ...Object.fromEntries(added) };
  return session;
}

/**
 * Every call of `messages` with the state its messages and `started` records say: answered →
 * completed, or error with `denialOf(result)`; a started record → started; else pending.
 */
export function inferCallStates(
  messages: readonly Message[],
  started: Readonly<Record<string, Omit<StartedCall, "state">>>,
  denialOf: (result: ToolResultBlock) => Denial | undefined,
): Record<string, CallRecord> {
  const results = new Map<string, ToolResultBlock>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_result") results.set(b.callId, b);
  const calls: Record<string, CallRecord> = {};
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type !== "tool_call") continue;
      const result = results.get(b.id);
      const record = started[b.id];
      if (result) {
        const denial = result.isError ? denialOf(result) : undefined;
        calls[b.id] = result.isError ? { state: "error", ...(denial ? { denial } : {}) } : { state: "completed" };
      } else calls[b.id] = record ? { state: "started", ...record } : { state: "pending" };
    }
  }
  return calls;
}
