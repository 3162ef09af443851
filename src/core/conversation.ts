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

export const INTERRUPTED_RESULT = "interrupted: this call may or may not have completed";

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
 * Closes every unanswered tool call with a synthetic error result, so the model sees a closed
 * round; returns the calls it closed. A committed call is never run again behind the model's
 * back: whether it ran is unknown, and the result says so.
 */
export function reviveUnansweredCalls(messages: Message[], note: string = INTERRUPTED_RESULT): ToolCallBlock[] {
  const answered = new Set<string>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_result") answered.add(b.callId);
  const revived: ToolCallBlock[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant") continue;
    const open = toolCallsOf(message).filter((c) => !answered.has(c.id));
    if (open.length === 0) continue;
    let next = messages[i + 1];
    if (next?.role !== "user") {
      next = { role: "user", content: [] };
      messages.splice(i + 1, 0, next);
    }
    const results = open.map((c): ToolResultBlock => ({ type: "tool_result", callId: c.id, content: note, isError: true }));
    next.content = orderResults(message, [...next.content, ...results]);
    revived.push(...open);
  }
  return revived;
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
