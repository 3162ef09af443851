/**
 * Reading sessions of version 1 (before call states): upgraded to the current version by a
 * pure function, their states inferred exactly as version 1 decided on resume — a call with a
 * result is answered, one with a `started` record started (never run again), the rest pending —
 * and their denials read back off the result text the one way version 1 did (`legacyDenial`).
 * Nothing else reads that text: a version-2 session carries its denials as data.
 */
import type { Denial } from "./approval.js";
import { inferCallStates } from "./call-states.js";
import type { ToolResultBlock } from "./messages.js";
import { SESSION_VERSION, parseStoredSession, type Session, type SessionV1 } from "./session.js";

/** Checks and reads a session value of any version this rhema reads; `source` names it in errors. */
export function parseSession(value: unknown, source: string): Session {
  return upgradeSession(parseStoredSession(value, source));
}

/** The current form of a stored session: a version-1 one upgraded, a current one as it is. */
export function upgradeSession(stored: Session | SessionV1): Session {
  if (stored.version === SESSION_VERSION) return stored;
  const { version: _v1, calls: started, ...rest } = stored;
  const calls = inferCallStates(rest.messages, started ?? {}, legacyDenial);
  return { ...rest, version: SESSION_VERSION, ...(Object.keys(calls).length > 0 ? { calls } : {}) };
}

/**
 * Version 1's reading of a denial: an error result whose text is "denied by RULE: REASON", the
 * rule up to the first ": ", and a rule beginning with the word "default" taken for the policy's
 * default. Kept as it was (its misreadings included) so an old session reports what it did.
 */
export function legacyDenial(result: ToolResultBlock): Denial | undefined {
  if (typeof result.content !== "string" || !result.isError) return undefined;
  const match = /^denied by (.+?)(?:: ([\s\S]*))?$/.exec(result.content);
  if (!match) return undefined;
  return { rule: /^default\b/.test(match[1]!) ? null : match[1]!, reason: match[2] ?? "" };
}
