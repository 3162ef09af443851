/** A request as a cassette keys it: volatile parts made stable and named, secrets redacted, the same hash for the same request, and a miss's first difference. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ModelRequest } from "../../src/core/provider.js";
import { firstDifference, keyRequest, stableJson, type VolatileParts } from "../../src/providers/cassette-request.js";

const WHO = { provider: "anthropic", model: "claude-sonnet-4-5" };
const noRedaction = (text: string) => text;

function request(run: string, over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: `You work in ${run}/tasks/s/t/default/1/workspace. Today is 2026-12-03.`,
    tools: [{ name: "shell", description: "Runs a command.", inputSchema: { type: "object" } }],
    messages: [
      { role: "user", content: [{ type: "text", text: "Fix the test." }] },
      { role: "assistant", content: [{ type: "tool_call", id: "call_1", name: "shell", input: { command: `ls ${run}/tasks/s/t/default/1/workspace` } }] },
      { role: "user", content: [{ type: "tool_result", callId: "call_1", content: `ok 1 - adds (12.5ms)\nwrote /tmp/rhema-x81Kz/out.txt at 2026-12-03T14:02:11.532Z\n[exit code 0]` }] },
    ],
    cacheBreakpoints: [2],
    ...over,
  };
}

const volatile = (run: string): VolatileParts => ({
  literals: [
    { name: "workspace path", value: `${run}/tasks/s/t/default/1/workspace`, placeholder: "<workspace>" },
    { name: "run path", value: run, placeholder: "<run>" },
  ],
});

test("two runs of the same task in other folders, on other days, key the same; what was made stable is named", () => {
  const a = keyRequest(request("/home/ci/runs/a"), WHO, volatile("/home/ci/runs/a"), noRedaction);
  const b = keyRequest(request("/tmp/r2", { system: "You work in /tmp/r2/tasks/s/t/default/1/workspace. Today is 2027-01-09." }), WHO, volatile("/tmp/r2"), noRedaction);
  assert.equal(a.hash, b.hash);
  assert.match(a.hash, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(a.normalised, ["date", "duration", "temp path", "timestamp", "workspace path"]);
  const result = (a.request.messages[2] as { content: Array<{ content: string }> }).content[0]!.content;
  assert.equal(result, "ok 1 - adds (<duration>)\nwrote <tmp> at <timestamp>\n[exit code 0]");
  assert.equal(a.request.system, "You work in <workspace>. Today is <date>.");
});

test("durations and temp paths are made stable only in tool results: the model's own words and the prompt keep them", () => {
  const req = request("/r", { messages: [{ role: "user", content: [{ type: "text", text: "Wait 5 s, then read /tmp/x." }] }] });
  const keyed = keyRequest(req, WHO, volatile("/r"), noRedaction);
  assert.deepEqual(keyed.request.messages, [{ role: "user", content: [{ type: "text", text: "Wait 5 s, then read /tmp/x." }] }]);
});

test("a changed tool description, message, model or output cap changes the hash, and the first difference names it", () => {
  const base = keyRequest(request("/r"), WHO, volatile("/r"), noRedaction);
  const tools = keyRequest(request("/r", { tools: [{ name: "shell", description: "Runs a bash command.", inputSchema: { type: "object" } }] }), WHO, volatile("/r"), noRedaction);
  assert.notEqual(tools.hash, base.hash);
  assert.deepEqual(firstDifference(base.request, tools.request), { path: "tools[0].description", recorded: "Runs a command.", requested: "Runs a bash command." });
  const model = keyRequest(request("/r"), { ...WHO, model: "claude-opus-4-5" }, volatile("/r"), noRedaction);
  assert.equal(firstDifference(base.request, model.request)?.path, "model");
  const longer = request("/r");
  longer.messages.push({ role: "assistant", content: [{ type: "text", text: "Done." }] });
  const more = keyRequest(longer, WHO, volatile("/r"), noRedaction);
  assert.deepEqual(firstDifference(base.request, more.request), { path: "messages", recorded: "3 entries", requested: "4 entries" });
  const capped = keyRequest(request("/r", { maxOutputTokens: 512 }), WHO, volatile("/r"), noRedaction);
  assert.deepEqual(firstDifference(base.request, capped.request), { path: "maxOutputTokens", recorded: "(absent)", requested: "512" });
  assert.equal(firstDifference(base.request, keyRequest(request("/r"), WHO, volatile("/r"), noRedaction).request), null);
});

test("secrets are redacted before the hash: the request recorded and the request replayed meet whatever the key was", () => {
  const withKey = (key: string) => request("/r", { messages: [{ role: "user", content: [{ type: "tool_result", callId: "c", content: `TOKEN=${key}` }] }] });
  const redact = (text: string) => text.replaceAll(/sk-[A-Za-z0-9]+/g, "[redacted]");
  const a = keyRequest(withKey("sk-live111"), WHO, volatile("/r"), redact);
  const b = keyRequest(withKey("sk-other222"), WHO, volatile("/r"), redact);
  assert.equal(a.hash, b.hash);
  assert.doesNotMatch(stableJson(a.request), /sk-live111/);
});

test("the hash does not depend on the order fields were built in", () => {
  const one = keyRequest(request("/r"), WHO, volatile("/r"), noRedaction);
  const reordered = request("/r");
  reordered.tools = [{ inputSchema: { type: "object" }, description: "Runs a command.", name: "shell" }];
  assert.equal(keyRequest(reordered, WHO, volatile("/r"), noRedaction).hash, one.hash);
});

test("in tool results, test runners' durations are made stable in the forms they print: after a key (TAP's duration_ms), as time's 0m0.003s, with a unit", () => {
  const output = (n: string) => `ok 1 - adds\n  ---\n  duration_ms: ${n}\n  ...\n# duration_ms ${n}\nreal\t0m0.${n.replace(".", "").slice(0, 3)}s\nTime: ${n} s\n{"elapsed":${n}}`;
  const keyed = (n: string) => keyRequest(request("/r", { messages: [{ role: "user", content: [{ type: "tool_result", callId: "c", content: output(n) }] }] }), WHO, volatile("/r"), noRedaction);
  const [a, b] = [keyed("2.188884"), keyed("15.62")];
  assert.equal(a.hash, b.hash);
  const text = (a.request.messages[0] as { content: Array<{ content: string }> }).content[0]!.content;
  assert.equal(text, "ok 1 - adds\n  ---\n  duration_ms: <duration>\n  ...\n# duration_ms <duration>\nreal\t<duration>\nTime: <duration>\n{\"elapsed\":<duration>}");
  // A count that is not a duration stays: the test's number and its plan.
  assert.match(text, /^ok 1 - adds/);
});

test("a miss between long texts shows where they part, on one line, with what was left out said", () => {
  const long = (n: string) => `${"line of test output\n".repeat(40)}checksum ${n}\n${"more output\n".repeat(40)}`;
  const tool = (n: string) => keyRequest(request("/r", { messages: [{ role: "user", content: [{ type: "tool_result", callId: "c", content: long(n) }] }] }), WHO, volatile("/r"), noRedaction);
  const diff = firstDifference(tool("1111").request, tool("2222").request, 80)!;
  assert.equal(diff.path, "messages[0].content[0].content");
  assert.match(diff.recorded, /^…\(from character \d+\) .*checksum 1111\\nmore output.* …\(\d+ characters\)$/);
  assert.match(diff.requested, /checksum 2222/);
  assert.ok(!diff.recorded.includes("\n"), "one line");
  assert.ok(diff.recorded.length < 160, diff.recorded);
});
