import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseClaudeCodeSession, parseClaudeCodeSessions } from "../../../src/transcript/import/claude-code.js";
import { billedSamples } from "../../../src/transcript/import/billed-samples.js";
import { CorpusFormatError, sentMessages } from "../../../src/transcript/replay-session.js";
import { repoRoot } from "../../support/paths.js";

const dir = join(repoRoot, "test", "fixtures", "sessions", "claude-code");
const mainText = readFileSync(join(dir, "main.jsonl"), "utf8");

test("a response written as several assistant lines is one request, billed once with the largest output count", () => {
  const s = parseClaudeCodeSession("main.jsonl", mainText);
  assert.equal(s.format, "claude-code");
  assert.equal(s.cache, "anthropic");
  assert.deepEqual(s.messages[1], {
    role: "assistant",
    content: [{ type: "text", text: "abcd" }, { type: "tool_call", id: "toolu_01", name: "Bash", input: { command: "ls" } }],
  });
  assert.deepEqual(s.requests[0], {
    logLength: 1, atMs: 0, model: "claude-sonnet-4-5-20250929",
    billed: { inputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 2000, outputTokens: 40 },
  });
  assert.equal(s.requests.length, 4, "four responses: the rewound branch and the synthetic error line were no requests of this conversation");
  assert.deepEqual(s.requests.map((r) => r.atMs), [0, 8_000, 28_000, 66_000]);
  assert.equal(s.requests[3]!.model, "claude-opus-4-1-20250805", "the model is per request");
});

test("without request ids (Claude Code on another backend), the lines of a response are grouped by their message id", () => {
  const s = parseClaudeCodeSession("main.jsonl", mainText.replace(/"requestId":"[^"]*",/g, ""));
  assert.equal(s.requests.length, 4);
  assert.equal(s.messages[1]!.content.length, 2);
});

test("lines that are not the conversation are skipped and counted by kind, the torn last line among them", () => {
  const s = parseClaudeCodeSession("main.jsonl", mainText);
  assert.deepEqual(s.skipped, {
    "file-history-snapshot": 1, "off the conversation's chain": 2, progress: 1, "queue-operation": 1, summary: 1,
    "synthetic assistant line": 1, "system turn_duration": 1, "thinking block": 1, "torn last line": 1,
  });
  const texts = s.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])));
  assert.ok(!texts.includes("a prompt later edited"), "the rewound branch is not in the log");
});

test("a tool result whose call is not in the log is user text", () => {
  const s = parseClaudeCodeSession("main.jsonl", mainText);
  assert.deepEqual(s.messages[2], {
    role: "user",
    content: [{ type: "tool_result", callId: "toolu_01", content: "a.txt b.txt" }, { type: "text", text: "orphan output" }],
  });
});

test("after a compaction boundary, requests carry the harness's summary and what follows, not the whole log", () => {
  const s = parseClaudeCodeSession("main.jsonl", mainText);
  const last = s.requests[3]!;
  assert.equal(last.logLength, 7);
  assert.deepEqual(last.sent?.from, 6);
  const sent = sentMessages(s, last);
  assert.deepEqual(sent.map((m) => m.content[0]), [
    { type: "text", text: "This session is being continued from a previous conversation. Summary: the parser was fixed." },
    { type: "text", text: "run the tests" },
  ]);
  assert.equal(sent.length, 2, "the summary and the prompt after it are one user turn each in the sent view");
  assert.ok(!s.messages.some((m) => m.content.some((b) => b.type === "text" && b.text.startsWith("This session is being continued"))), "the full log holds no summary");
  const samples = billedSamples(s);
  assert.equal(samples.length, 4);
  assert.deepEqual(samples[3]!.messages, sent);
  assert.equal(samples[3]!.prefixTokens, s.prefixTokens);
  assert.deepEqual(samples[3]!.billed, { inputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 2040, outputTokens: 9 });
});

test("the hidden prefix is the first bill's prompt less the estimate of what the log shows it, never below 0", () => {
  const s = parseClaudeCodeSession("main.jsonl", mainText);
  // Billed 3 + 0 + 2000; the log shows "hello": ceil(5 / 4) = 2 tokens + 4 of framing.
  assert.equal(s.prefixTokens, 2003 - 6);
  const tiny = mainText.replace(/"cache_creation_input_tokens":2000/g, '"cache_creation_input_tokens":0').replace(/"input_tokens":3,/g, '"input_tokens":1,');
  assert.equal(parseClaudeCodeSession("tiny.jsonl", tiny).prefixTokens, 0);
});

test("a subagent file is a session of its own; subagents written inline in the main file are sessions apart", () => {
  const sub = parseClaudeCodeSession("agent-a1.jsonl", readFileSync(join(dir, "main", "subagents", "agent-a1.jsonl"), "utf8"));
  assert.equal(sub.requests.length, 1);
  assert.equal(sub.messages[0]!.content[0]!.type === "text" && sub.messages[0]!.content[0]!.text, "Search for parse()");
  // The same lines inline, as 1.0.x wrote them: two parallel subagents interleaved in the main file.
  const a = readFileSync(join(dir, "main", "subagents", "agent-a1.jsonl"), "utf8").trim().split("\n");
  const b = readFileSync(join(dir, "agent-b2.jsonl"), "utf8").trim().split("\n");
  const main = mainText.split("\n").slice(0, 6);
  const sessions = parseClaudeCodeSessions("inline.jsonl", [...main.slice(0, 3), a[0], b[0], ...main.slice(3), b[1], a[1]].join("\n"));
  assert.deepEqual(sessions.map((x) => [x.name, x.requests.length]), [["inline.jsonl", 1], ["inline.jsonl › sidechain 1", 1], ["inline.jsonl › sidechain 2", 1]]);
  assert.deepEqual(sessions.map((x) => x.requests[0]!.billed?.cacheWriteTokens), [2000, 1500, 1600]);
});

test("a torn line that is not the last is an error naming the file, the line and what is wrong", () => {
  const lines = mainText.split("\n");
  lines[3] = lines[3]!.slice(0, 40);
  assert.throws(() => parseClaudeCodeSession("main.jsonl", lines.join("\n")), (err: unknown) => err instanceof CorpusFormatError && /^main\.jsonl:4: not JSON/.test(err.message));
  const bad = mainText.split("\n");
  bad[17] = JSON.stringify({ ...JSON.parse(bad[17]!), message: 7 });
  assert.throws(() => parseClaudeCodeSession("main.jsonl", bad.join("\n")), (err: unknown) => err instanceof CorpusFormatError && err.message === 'main.jsonl:18: field "message": expected an object, got 7');
});
