import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CHANGES_SHOWN,
  INTERRUPTED_RESULT,
  interruptedText,
  planRevive,
  workspaceChanges,
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
  const revived = reviveUnansweredCalls(messages, new Map([["c1", INTERRUPTED_RESULT], ["c2", "x"], ["c3", INTERRUPTED_RESULT]]));
  assert.deepEqual(revived.map((c) => c.id), ["c1", "c3"]);
  assert.deepEqual(messages[2]!.content, [
    { type: "tool_result", callId: "c1", content: INTERRUPTED_RESULT, isError: true },
    result("c2"),
    { type: "tool_result", callId: "c3", content: INTERRUPTED_RESULT, isError: true },
  ]);
});

test("revive adds a user message after a trailing assistant message with calls", () => {
  const messages: Message[] = [{ role: "assistant", content: [call("c1")] }];
  const notes = new Map([["c1", INTERRUPTED_RESULT]]);
  reviveUnansweredCalls(messages, notes);
  assert.deepEqual(messages[1], { role: "user", content: [{ type: "tool_result", callId: "c1", content: INTERRUPTED_RESULT, isError: true }] });
  assert.deepEqual(reviveUnansweredCalls(messages, notes), [], "a closed round stays as it is");
});

test("reads where a conversation stands from its last message", () => {
  assert.deepEqual(conversationState([]), { kind: "empty" });
  assert.deepEqual(conversationState([{ role: "user", content: [] }]), { kind: "awaiting_model" });
  assert.deepEqual(conversationState([{ role: "assistant", content: [{ type: "text", text: "done" }] }]), { kind: "ended" });
  assert.equal(conversationState([{ role: "assistant", content: [call("c1")] }]).kind, "calls_open");
});

test("revive plans read the call states: a pending call of the last reply runs now; a started one, or a pending one of an older round, is interrupted", () => {
  const messages: Message[] = [
    { role: "assistant", content: [call("old")] },
    { role: "user", content: [{ type: "text", text: "more" }] },
    { role: "assistant", content: [call("c1"), call("c2"), call("c3")] },
    { role: "user", content: [result("c1")] },
  ];
  const started = { state: "started" as const, at: "2026-01-01T00:00:00Z", host: "h", pgid: 42, startTime: 7 };
  const plan = planRevive(messages, { calls: { old: { state: "pending" }, c1: { state: "completed" }, c2: started, c3: { state: "pending" } } });
  assert.deepEqual(plan, {
    interrupted: [{ call: call("old"), started: undefined }, { call: call("c2"), started }],
    unstarted: [call("c3")],
  });
});

test("workspace changes since a call began are listed sorted, capped, with what kind of change", () => {
  const before = { files: { "src/a.js": [10, 1] as [number, number], "tmp/x": [1, 1] as [number, number], "same.txt": [3, 3] as [number, number] }, capped: false };
  const after = { files: { "src/a.js": [11, 2] as [number, number], "out.txt": [5, 9] as [number, number], "same.txt": [3, 3] as [number, number] }, capped: false };
  const changes = workspaceChanges(before, after);
  assert.deepEqual(changes, { modified: ["src/a.js"], created: ["out.txt"], deleted: ["tmp/x"], capped: false });
  assert.equal(interruptedText({ stopped: true, changes }),
    `${INTERRUPTED_RESULT}; it was still running when the run resumed; stopped; since it started: created out.txt, modified src/a.js, deleted tmp/x`);
  assert.equal(interruptedText({ stopped: false, changes: workspaceChanges(before, before) }), `${INTERRUPTED_RESULT}; since it started: no file changed`);
  const many = { files: Object.fromEntries(Array.from({ length: CHANGES_SHOWN + 5 }, (_, i) => [`f${String(i).padStart(2, "0")}`, [1, 1] as [number, number]])), capped: false };
  const text = interruptedText({ stopped: false, changes: workspaceChanges({ files: {}, capped: false }, many) });
  assert.ok(text.endsWith(`created f${String(CHANGES_SHOWN - 1).padStart(2, "0")}, and 5 more`), text);
  const capped = workspaceChanges({ ...before, capped: true }, after);
  assert.deepEqual(capped, { modified: ["src/a.js"], created: [], deleted: [], capped: true });
  assert.match(interruptedText({ stopped: false, changes: capped }), /more files than the fingerprint covers/);
});
