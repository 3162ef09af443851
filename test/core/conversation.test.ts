import { test } from "node:test";
import assert from "node:assert/strict";
import {
  INTERRUPTED_RESULT,
  conversationState,
  pushToolResult,
  pushUserContent,
  reviveUnansweredCalls,
} from "../../src/core/conversation.js";
import type { Message } from "../../src/core/messages.js";

const call = (id: string) => ({ type: "tool_call" as const, id, name: "t", input: {} });
const result = (callId: string, content = "ok") => ({ type: "tool_result" as const, callId, content });

test("merges user content into a trailing user message so roles alternate", () => {
  const messages: Message[] = [{ role: "user", content: [result("c1")] }];
  pushUserContent(messages, [{ type: "text", text: "nudge" }]);
  assert.deepEqual(messages, [{ role: "user", content: [result("c1"), { type: "text", text: "nudge" }] }]);
});

test("keeps tool results ahead of text in the user message", () => {
  const messages: Message[] = [
    { role: "assistant", content: [call("c1"), call("c2")] },
    { role: "user", content: [result("c1"), { type: "text", text: "nudge" }] },
  ];
  pushToolResult(messages, result("c2"));
  assert.deepEqual(messages[1]!.content, [result("c1"), result("c2"), { type: "text", text: "nudge" }]);
});

test("revive closes every unanswered call in call order and reports them", () => {
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    { role: "assistant", content: [call("c1"), call("c2"), call("c3")] },
    { role: "user", content: [result("c2")] },
  ];
  const revived = reviveUnansweredCalls(messages);
  assert.deepEqual(revived.map((c) => c.id), ["c1", "c3"]);
  assert.deepEqual(messages[2]!.content, [
    { type: "tool_result", callId: "c1", content: INTERRUPTED_RESULT, isError: true },
    result("c2"),
    { type: "tool_result", callId: "c3", content: INTERRUPTED_RESULT, isError: true },
  ]);
});

test("revive adds a user message after a trailing assistant message with calls", () => {
  const messages: Message[] = [{ role: "assistant", content: [call("c1")] }];
  reviveUnansweredCalls(messages);
  assert.deepEqual(messages[1], { role: "user", content: [{ type: "tool_result", callId: "c1", content: INTERRUPTED_RESULT, isError: true }] });
  assert.deepEqual(reviveUnansweredCalls(messages), [], "a closed round stays as it is");
});

test("reads where a conversation stands from its last message", () => {
  assert.deepEqual(conversationState([]), { kind: "empty" });
  assert.deepEqual(conversationState([{ role: "user", content: [] }]), { kind: "awaiting_model" });
  assert.deepEqual(conversationState([{ role: "assistant", content: [{ type: "text", text: "done" }] }]), { kind: "ended" });
  assert.equal(conversationState([{ role: "assistant", content: [call("c1")] }]).kind, "calls_open");
});
