import { test } from "node:test";
import assert from "node:assert/strict";
import { CorpusFormatError, chainSessions, parseCorpusSession, sessionFromLog } from "../../src/transcript/replay-session.js";

const row = (r: Record<string, unknown>) => JSON.stringify({ tool_name: null, tool_args: null, tool_result: null, ...r });
const corpus = [
  row({ role: "system", content: "You are a helpful assistant." }),
  row({ role: "user", content: "Please solve this issue: fix it." }),
  row({ role: "assistant", content: "THOUGHT: look.\n```bash\nls -la\n```", tool_name: "bash", tool_args: "{'command': 'ls -la'}" }),
  row({ role: "tool", content: "<returncode>0</returncode>", tool_name: "bash" }),
  row({ role: "assistant", content: "THOUGHT: done.\n```bash\necho 'it''s done'\n```", tool_name: "bash", tool_args: "{'command': \"echo 'it''s done'\"}" }),
].join("\n");

test("a corpus session becomes the log the model saw, one request per assistant step, at its recorded times", () => {
  const s = parseCorpusSession("demo.jsonl", corpus, { "1": 10.5, "2": 20 });
  assert.equal(s.system, "You are a helpful assistant.");
  assert.deepEqual(s.requests, [{ logLength: 1, atMs: 10_500 }, { logLength: 3, atMs: 20_000 }]);
  assert.deepEqual(s.messages[1], {
    role: "assistant",
    content: [{ type: "text", text: "THOUGHT: look.\n```bash\nls -la\n```" }, { type: "tool_call", id: "call_1", name: "bash", input: { command: "ls -la" } }],
  });
  assert.deepEqual(s.messages[2], { role: "user", content: [{ type: "tool_result", callId: "call_1", content: "<returncode>0</returncode>" }] });
  // The last step's call got no result: its text stays, the unanswered call goes.
  assert.deepEqual(s.messages[3]!.content.map((b) => b.type), ["text"]);
});

test("a call's tool_args may be an object, JSON text or a Python-literal dict: the command is the same", () => {
  const forms: unknown[] = [{ command: "ls -la" }, JSON.stringify({ command: "ls -la" }), "{'command': 'ls -la'}"];
  for (const tool_args of forms) {
    const s = parseCorpusSession("demo.jsonl", [
      row({ role: "user", content: "fix it" }),
      row({ role: "assistant", content: "look", tool_name: "bash", tool_args }),
      row({ role: "tool", content: "a b" }),
    ].join("\n"), null);
    assert.deepEqual(s.messages[1]!.content[1], { type: "tool_call", id: "call_1", name: "bash", input: { command: "ls -la" } }, JSON.stringify(tool_args));
  }
});

test("steps without times are 15 s apart", () => {
  const s = parseCorpusSession("demo.jsonl", corpus, null);
  assert.deepEqual(s.requests.map((r) => r.atMs), [0, 15_000]);
});

test("a bad corpus line is named by file and line", () => {
  assert.throws(() => parseCorpusSession("bad.jsonl", `${row({ role: "user", content: "x" })}\n{oops`, null), (err: unknown) => err instanceof CorpusFormatError && /^bad\.jsonl:2: not JSON/.test(err.message));
  assert.throws(() => parseCorpusSession("bad.jsonl", row({ role: "robot", content: "x" }), null), /bad\.jsonl:1: field "role"/);
});

test("a tool message that follows no call (the harness's feedback on a reply without an action) is the user's turn", () => {
  const s = parseCorpusSession("feedback.jsonl", [
    row({ role: "user", content: "fix it" }),
    row({ role: "assistant", content: "I think the bug is in parse." }),
    row({ role: "tool", content: "Please always provide EXACTLY ONE action in triple backticks." }),
    row({ role: "assistant", content: "look", tool_name: "bash", tool_args: { command: "ls" } }),
    row({ role: "tool", content: "a b" }),
  ].join("\n"), null);
  assert.deepEqual(s.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"]);
  assert.deepEqual(s.messages[2], { role: "user", content: [{ type: "text", text: "Please always provide EXACTLY ONE action in triple backticks." }] });
  assert.deepEqual(s.requests.map((r) => r.logLength), [1, 3]);
});

test("chained sessions: the first one's system and task, then each task as a user message, times continuing after a gap", () => {
  const a = parseCorpusSession("a", corpus, { "1": 100, "2": 110 });
  const b = parseCorpusSession("b", corpus, { "1": 5, "2": 9 });
  const chain = chainSessions([a, b], 15_000);
  assert.equal(chain.system, a.system);
  assert.deepEqual(chain.requests.map((r) => r.atMs), [0, 10_000, 25_000, 29_000]);
  const second = chain.requests[2]!;
  const last = chain.messages[second.logLength - 1]!;
  assert.equal(last.role, "user");
  assert.ok(last.content.some((c) => c.type === "text" && c.text.startsWith("Please solve this issue")), "the second task follows the first session");
  const ids = chain.messages.flatMap((m) => m.content.flatMap((c) => (c.type === "tool_call" ? [c.id] : [])));
  assert.equal(new Set(ids).size, ids.length, "call ids stay unique across sessions");
});

test("a rhema log replays with one request per assistant message", () => {
  const s = parseCorpusSession("a", corpus, null);
  const log = sessionFromLog("x", "sys", s.messages, [0, 40]);
  assert.deepEqual(log.requests, [{ logLength: 1, atMs: 0 }, { logLength: 3, atMs: 40 }]);
});
