import { test } from "node:test";
import assert from "node:assert/strict";
import type { Message } from "../../src/core/messages.js";
import { estimateTextTokens } from "../../src/core/token-estimate.js";
import { cutMiddle, elideMessages, fairShares, summaryTargetTokens } from "../../src/transcript/elider.js";

const messages: Message[] = [
  { role: "user", content: [{ type: "text", text: "Fix the failing test in src/add.js." }] },
  { role: "assistant", content: [{ type: "text", text: "Reading it." }, { type: "tool_call", id: "a", name: "read_file", input: { path: "src/add.js" } }] },
  { role: "user", content: [{ type: "tool_result", callId: "a", content: "x".repeat(20_000) + "THE END" }] },
  { role: "assistant", content: [{ type: "tool_call", id: "b", name: "shell", input: { command: "npm test" } }] },
  { role: "user", content: [{ type: "tool_result", callId: "b", content: "1 failing", isError: true }] },
];

test("the elider keeps every message in order and cuts long outputs to head and tail", () => {
  const text = elideMessages(messages, 400);
  const lines = text.split("\n");
  assert.deepEqual(lines.map((l) => l.split(":")[0]), ["User", "Assistant", "Call read_file", "Result", "Call shell", "Result (error)"]);
  assert.match(lines[0]!, /Fix the failing test in src\/add\.js\./);
  assert.match(lines[3]!, /chars cut/);
  assert.match(lines[3]!, /THE END$/, "the tail of an output is kept");
  assert.ok(estimateTextTokens(text) <= 450, `about the target: ${estimateTextTokens(text)} tokens`);
});

test("the elider is deterministic", () => {
  assert.equal(elideMessages(messages, 300), elideMessages(messages, 300));
});

test("earlier summaries being merged are cut within the same target", () => {
  const text = elideMessages(messages, 300, ["e".repeat(40_000)]);
  assert.ok(text.startsWith("Earlier summary: eee"));
  assert.ok(estimateTextTokens(text) <= 350);
});

test("when even one short line per item would not fit, the middle items go and a line says how many", () => {
  const many: Message[] = Array.from({ length: 400 }, (_, k) => ({ role: "user", content: [{ type: "text", text: `note ${k} ${"z".repeat(200)}` }] }));
  const text = elideMessages(many, 200);
  assert.match(text, /\[\d+ earlier items cut\]/);
  assert.match(text, /note 399/, "the newest items stay");
  assert.ok(estimateTextTokens(text) <= 260);
});

test("fair shares leave short texts whole and split the rest", () => {
  assert.deepEqual(fairShares([10, 1000, 1000], 210), [10, 100, 100]);
  assert.equal(cutMiddle("abc", 10), "abc");
  assert.equal(summaryTargetTokens(100_000), 4_000);
  assert.equal(summaryTargetTokens(1_000), 200);
  assert.equal(summaryTargetTokens(20_000), 2_000);
});
