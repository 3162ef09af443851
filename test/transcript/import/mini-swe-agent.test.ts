import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseMiniSweTrajectory } from "../../../src/transcript/import/mini-swe-agent.js";
import { CorpusFormatError } from "../../../src/transcript/replay-session.js";
import { repoRoot } from "../../support/paths.js";

const text = readFileSync(join(repoRoot, "test", "fixtures", "sessions", "mini-swe-agent", "demo__demo-1.traj.json"), "utf8");

test("a mini-swe-agent trajectory: each assistant message a request billed from litellm's usage; the feedback on a reply without an action is a user turn", () => {
  const s = parseMiniSweTrajectory("demo.traj.json", text);
  assert.equal(s.format, "mini-swe-agent");
  assert.equal(s.cache, "anthropic", "a Claude model: Anthropic's cache rules");
  assert.equal(s.system, "You are a helpful assistant that can interact with a computer.");
  assert.deepEqual(s.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"]);
  assert.deepEqual(s.messages[4], { role: "user", content: [{ type: "text", text: "Please always provide EXACTLY ONE action in triple backticks, found 0 actions." }] });
  assert.deepEqual(s.requests.map((r) => r.logLength), [1, 3, 5]);
  assert.deepEqual(s.requests[1]!.billed, { inputTokens: 1230 - 1152, cacheReadTokens: 1152, cacheWriteTokens: 0, outputTokens: 5 });
  assert.equal(s.requests[0]!.model, "openrouter/anthropic/claude-sonnet-4-5");
  assert.equal(s.prefixTokens, undefined, "the system prompt is in the log: no hidden prefix");
});

test("a tool message whose call is missing is user text; a bad trajectory names the file and field", () => {
  const doc = JSON.parse(text) as { messages: unknown[] };
  doc.messages.splice(3, 0, { role: "tool", tool_call_id: "call_nowhere", content: "stray output" });
  const s = parseMiniSweTrajectory("demo.traj.json", JSON.stringify(doc));
  assert.deepEqual(s.messages[2]!.content[0], { type: "text", text: "stray output" });
  doc.messages[1] = { role: "robot", content: "x" };
  assert.throws(() => parseMiniSweTrajectory("demo.traj.json", JSON.stringify(doc)), (err: unknown) => err instanceof CorpusFormatError && err.message === 'demo.traj.json: field "messages[1].role": expected system, user, assistant or tool, got "robot"');
  assert.throws(() => parseMiniSweTrajectory("demo.traj.json", '{\n  "messages": [\n  oops'), /demo\.traj\.json(:3)?: not JSON/);
});
