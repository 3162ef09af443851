/**
 * `transcript.cacheTtl` end to end: the built CLI runs tasks against the fake Anthropic server,
 * which checks every request as the API would (at most four marks, no 1-hour mark after a
 * 5-minute one), and the marks on the wire carry the TTL the task asked for.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const task = (prompt: string, transcript: string) => `prompt: ${prompt}
policy: ../policy.yaml
model: { provider: anthropic, name: claude-test }
${transcript}checks:
  - { name: always, run: "true" }
`;

/** Every `cache_control` of a request body, in wire order: system, then each message's blocks. */
function marks(body: any): unknown[] {
  const blocks = [...(body.tools ?? []), ...(body.system ?? []), ...body.messages.flatMap((m: any) => m.content)];
  return blocks.filter((b: any) => b.cache_control !== undefined).map((b: any) => b.cache_control);
}

test("a task with transcript.cacheTtl 1h sends every mark with ttl 1h; one without sends 5-minute marks", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/hour.yaml": task("Say hour.", "transcript: { cacheTtl: 1h }\n"),
    "suite/plain.yaml": task("Say plain.", ""),
    "suite/auto.yaml": task("Say auto.", "transcript: { cacheTtl: auto }\n"),
  });
  for (let i = 0; i < 3; i++) server.reply({ kind: "stream", blocks: [{ type: "text", text: "Done." }] });
  const out = join(root, "run");
  const r = await runCli(["run", "suite", "--out", out, "--concurrency", "1"], { cwd: root, env: cliEnv({ ANTHROPIC_API_KEY: "sk-test-key", ANTHROPIC_BASE_URL: server.baseUrl }) });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(server.violations, []);
  const byPrompt = new Map(server.bodies.map((b: any) => [JSON.stringify(b.messages[0].content), b]));
  const sent = (prompt: string) => [...byPrompt].find(([k]) => k.includes(prompt))![1];
  assert.deepEqual(marks(sent("Say hour.")), [{ type: "ephemeral", ttl: "1h" }, { type: "ephemeral", ttl: "1h" }]);
  assert.deepEqual(marks(sent("Say plain.")), [{ type: "ephemeral" }, { type: "ephemeral" }]);
  assert.deepEqual(marks(sent("Say auto.")), [{ type: "ephemeral" }, { type: "ephemeral" }], "auto's first request has no gap to go by");
  const stats = Object.fromEntries((await readRunResults(out)).map((res) => [res.id, res.stats?.oneHourRequests]));
  assert.deepEqual(stats, { auto: 0, hour: 1, plain: 0 });
});
