/**
 * Edits of a message list that keep it well formed: roles alternate (consecutive user content
 * is merged into one message, so every provider accepts the list), and every tool call is
 * answered by a result in the user message right after it. All functions edit in place and
 * touch only the tail, so committed history stays byte-stable.
 */
import {
  toolCallsOf,
  type ContentBlock,
  type Message,
  type ToolCallBlock,
  type ToolResultBlock,
} from "./messages.js";
import { callStateOf } from "./call-states.js";
import { assertNever } from "./errors.js";
import type { Session, StartedCall, WorkspaceFingerprint } from "./session.js";

export const INTERRUPTED_RESULT = "interrupted: this call may or may not have completed";
/** The result of each call of a reply cut at the output limit: none of them runs. */
export const CUT_REPLY_RESULT =
  "not run: your reply was cut at the output limit before it finished, so this call's input may be incomplete; issue the call again (in a shorter reply if needed)";

/** Appends user content, merged into the last message when that is already a user message. */
export function pushUserContent(messages: Message[], blocks: ContentBlock[]): void {
  const last = messages[messages.length - 1];
  if (last?.role === "user") last.content.push(...blocks);
  else messages.push({ role: "user", content: [...blocks] });
}

/**
 * Appends a tool result to the user message after the last assistant message, keeping results
 * ahead of any other content (the wire formats want results first).
 */
export function pushToolResult(messages: Message[], result: ToolResultBlock): void {
  const last = messages[messages.length - 1];
  if (last?.role !== "user") {
    messages.push({ role: "user", content: [result] });
    return;
  }
  const firstOther = last.content.findIndex((b) => b.type !== "tool_result");
  if (firstOther === -1) last.content.push(result);
  else last.content.splice(firstOther, 0, result);
}

/**
 * Closes the given unanswered tool calls (id → the result text), each with a synthetic error
 * result in the user message after its call, so the model sees a closed round; returns the
 * calls it closed. Calls not in `notes` (or already answered) are left as they are.
 */
export function reviveUnansweredCalls(messages: Message[], notes: ReadonlyMap<string, string>): ToolCallBlock[] {
  const answered = new Set<string>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_result") answered.add(b.callId);
  const revived: ToolCallBlock[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const open = toolCallsOf(message).filter((c) => !answered.has(c.id) && notes.has(c.id));
    if (open.length === 0) continue;
    let next = messages[i + 1];
    if (next?.role !== "user") {
      next = { role: "user", content: [] };
      messages.splice(i + 1, 0, next);
    }
    const results = open.map((c): ToolResultBlock => ({ type: "tool_result", callId: c.id, content: notes.get(c.id)!, isError: true }));
    next.content = orderResults(message, [...next.content, ...results]);
    revived.push(...open);
  }
  return revived;
}

/**
 * What a history entering a turn needs before the model can be asked again, read off the calls'
 * states. `interrupted`: calls `started` (or `pending` in an older round) — they get a synthetic
 * result and never run again. `unstarted`: `pending` calls of the last assistant message — they
 * never ran, so they are approved and run now, in order. Completed and errored calls are answered.
 */
export interface RevivePlan {
  interrupted: Array<{ call: ToolCallBlock; started: StartedCall | undefined }>;
  unstarted: ToolCallBlock[];
}

export function planRevive(messages: readonly Message[], session: Pick<Session, "calls">): RevivePlan {
  let lastAssistant = -1;
  for (let i = 0; i < messages.length; i++) if (messages[i]!.role === "assistant") lastAssistant = i;
  const plan: RevivePlan = { interrupted: [], unstarted: [] };
  for (const [i, message] of messages.entries()) {
    if (message.role !== "assistant") continue;
    for (const call of toolCallsOf(message)) {
      const record = callStateOf(session, call.id);
      switch (record.state) {
        case "completed":
        case "error":
          break;
        case "started":
          plan.interrupted.push({ call, started: record });
          break;
        case "pending":
          if (i === lastAssistant) plan.unstarted.push(call);
          else plan.interrupted.push({ call, started: undefined });
          break;
        default:
          assertNever(record);
      }
    }
  }
  return plan;
}

/** What changed in the workspace between two fingerprints, each list sorted by path. */
export interface WorkspaceChanges {
  modified: string[];
  created: string[];
  deleted: string[];
  /** One of the fingerprints hit its cap: created and deleted files are not known. */
  capped: boolean;
}

export function workspaceChanges(before: WorkspaceFingerprint, after: WorkspaceFingerprint): WorkspaceChanges {
  const capped = before.capped || after.capped;
  const changes: WorkspaceChanges = { modified: [], created: [], deleted: [], capped };
  for (const [path, [size, mtimeMs]] of Object.entries(after.files)) {
    const was = before.files[path];
    if (!was) {
      if (!capped) changes.created.push(path);
    } else if (was[0] !== size || was[1] !== mtimeMs) changes.modified.push(path);
  }
  if (!capped) for (const path of Object.keys(before.files)) if (!(path in after.files)) changes.deleted.push(path);
  for (const list of [changes.modified, changes.created, changes.deleted]) list.sort();
  return changes;
}

/** How many changed paths a revive text names before it says how many more there are. */
export const CHANGES_SHOWN = 20;

/**
 * The synthetic result of a started call that has no result: it may or may not have
 * completed; `stopped` when its process group was still alive and was stopped; `changes`
 * (when its fingerprint was taken) names the files that changed since it began.
 */
export function interruptedText(opts: { stopped: boolean; changes?: WorkspaceChanges }): string {
  let text = INTERRUPTED_RESULT;
  if (opts.stopped) text += "; it was still running when the run resumed; stopped";
  if (opts.changes) text += `; since it started: ${changesText(opts.changes)}`;
  return text;
}

function changesText(changes: WorkspaceChanges): string {
  const entries = [
    ...changes.modified.map((path) => ({ path, verb: "modified" })),
    ...changes.created.map((path) => ({ path, verb: "created" })),
    ...changes.deleted.map((path) => ({ path, verb: "deleted" })),
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const shown = entries.slice(0, CHANGES_SHOWN).map((e) => `${e.verb} ${e.path}`);
  let text = shown.length === 0 ? "no file changed" : shown.join(", ");
  if (entries.length > CHANGES_SHOWN) text += `, and ${entries.length - CHANGES_SHOWN} more`;
  if (changes.capped) text += " (the workspace has more files than the fingerprint covers: created and deleted files are not known)";
  return text;
}

/** Results in the order of the calls they answer, then the other blocks as they were. */
function orderResults(assistant: Message, blocks: ContentBlock[]): ContentBlock[] {
  const order = new Map(toolCallsOf(assistant).map((c, k) => [c.id, k]));
  const results = blocks.filter((b): b is ToolResultBlock => b.type === "tool_result");
  const others = blocks.filter((b) => b.type !== "tool_result");
  results.sort((a, b) => (order.get(a.callId) ?? Infinity) - (order.get(b.callId) ?? Infinity));
  return [...results, ...others];
}

/** Where a conversation stands, read off its last message. */
export type ConversationState =
  | { kind: "empty" }
  /** The model answered without asking for tools: the turn is over. */
  | { kind: "ended" }
  /** The last assistant message asked for tools not all answered yet. */
  | { kind: "calls_open"; open: ToolCallBlock[] }
  /** Input or results wait for the model's answer. */
  | { kind: "awaiting_model" };

export function conversationState(messages: readonly Message[]): ConversationState {
  const last = messages[messages.length - 1];
  if (!last) return { kind: "empty" };
  if (last.role === "user") return { kind: "awaiting_model" };
  const calls = toolCallsOf(last);
  return calls.length === 0 ? { kind: "ended" } : { kind: "calls_open", open: calls };
}
