/**
 * The denials a task's conversation holds, for its result: read off the denied calls' state
 * records (`{state: "error", denial}`, written by the step loop from the approval's `Decision`),
 * never off the text the model read. A version-1 session got its denials from that text once,
 * when it was loaded (src/core/session-v1.ts), so a resumed old task reports what it did.
 */
import { toolCallsOf, type Message } from "../../core/messages.js";
import type { Session } from "../../core/session.js";
import type { PolicyDenial } from "../run-dir/task-result.js";

/** Each denied call in the order of its result, with its tool's name ("?" when its call is gone). */
export function policyDenials(session: { messages: readonly Message[]; calls?: Session["calls"] }): PolicyDenial[] {
  const { messages, calls = {} } = session;
  const toolOf = new Map(messages.flatMap(toolCallsOf).map((c) => [c.id, c.name]));
  const out: PolicyDenial[] = [];
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type !== "tool_result") continue;
      const record = calls[b.callId];
      if (record?.state === "error" && record.denial) out.push({ tool: toolOf.get(b.callId) ?? "?", rule: record.denial.rule, reason: record.denial.reason });
    }
  }
  return out;
}
