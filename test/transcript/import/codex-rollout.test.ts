import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCodexRollout } from "../../../src/transcript/import/codex-rollout.js";
import { sentMessages } from "../../../src/transcript/replay-session.js";
import { repoRoot } from "../../support/paths.js";

const file = join(repoRoot, "test", "fixtures", "sessions", "codex", "rollout-2026-01-05T11-00-00-019a0000-0000-7000-8000-000000000001.jsonl");
const text = readFileSync(file, "utf8");

test("a Codex rollout: one request per response, billed by the first token count after it that has figures (cached tokens inside input), openai's cache", () => {
  const s = parseCodexRollout("rollout.jsonl", text);
  assert.equal(s.format, "codex");
  assert.equal(s.cache, "openai");
  assert.deepEqual(s.requests.map((r) => r.billed), [
    { inputTokens: 3000, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 50 },
    { inputTokens: 3100 - 2944, cacheReadTokens: 2944, cacheWriteTokens: 0, outputTokens: 80 },
    { inputTokens: 3150 - 3072, cacheReadTokens: 3072, cacheWriteTokens: 0, outputTokens: 20 },
    { inputTokens: 1200, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10 },
  ]);
  assert.deepEqual(s.requests.map((r) => r.model), ["gpt-5.1-codex", "gpt-5.1-codex", "gpt-5.1-codex", "gpt-5.1-codex"]);
  assert.deepEqual(s.requests.map((r) => r.atMs), [0, 3_000, 6_000, 301_000]);
});

test("reasoning and calls are the response's blocks; outputs are their results", () => {
  const s = parseCodexRollout("rollout.jsonl", text);
  assert.deepEqual(s.messages[1], {
    role: "assistant",
    content: [{ type: "text", text: "**Looking around**" }, { type: "tool_call", id: "call_1", name: "shell", input: { command: ["bash", "-lc", "ls"] } }],
  });
  assert.deepEqual(s.messages[2], { role: "user", content: [{ type: "tool_result", callId: "call_1", content: '{"output":"a.py\\n","metadata":{"exit_code":0}}' }] });
  assert.deepEqual(s.messages[3]!.content, [{ type: "tool_call", id: "call_2", name: "apply_patch", input: { input: "*** Begin Patch\n*** End Patch" } }]);
});

test("after `compacted`, requests carry its summary and what follows", () => {
  const s = parseCodexRollout("rollout.jsonl", text);
  const sent = sentMessages(s, s.requests[3]!);
  assert.deepEqual(sent, [
    { role: "user", content: [{ type: "text", text: "Summary: fixed the bug in a.py." }] },
    { role: "user", content: [{ type: "text", text: "and add a test" }] },
  ]);
});

test("event messages that repeat items, unknown line types and the torn last line are skipped and counted", () => {
  const s = parseCodexRollout("rollout.jsonl", text);
  assert.deepEqual(s.skipped, {
    "event_msg agent_reasoning": 1, "event_msg token_count": 3, "event_msg user_message": 1,
    future_kind: 1, "response_item ghost_snapshot": 1, "torn last line": 1,
  });
});
