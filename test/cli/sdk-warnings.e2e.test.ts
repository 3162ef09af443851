/**
 * The Anthropic SDK warns of a deprecated model with a bare console.warn on every request; the
 * built CLI turns that into one `rhema: warning:` line per model. Against a local server
 * speaking the Messages API, with models the SDK lists as deprecated
 * (node_modules/@anthropic-ai/sdk/internal/data/deprecated-models.js).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { cliEnv, runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const task = (model: string) => `prompt: Append the tags.
policy: ../policy.yaml
model: { provider: anthropic, name: ${model} }
checks:
  - { name: always, run: "true" }
`;

const shellCall = (n: number) => ({ kind: "stream" as const, blocks: [{ type: "tool_use" as const, id: `toolu_${n}`, name: "shell", input: { command: `echo t-${n} >> tags.txt` } }] });

test("a deprecated model's SDK warning, printed on every request, is one rhema warning per model", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a-sonnet.yaml": task("claude-sonnet-4-5"), "suite/b-opus.yaml": task("claude-opus-4-5") });
  // a-sonnet: four requests (three shell calls, then the answer); b-opus: one. One task at a time: the replies are one queue.
  server.reply(shellCall(1), shellCall(2), shellCall(3), { kind: "stream", blocks: [{ type: "text", text: "Done." }] });
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "Done." }] });
  const env = cliEnv({ ANTHROPIC_API_KEY: "sk-test-key", ANTHROPIC_BASE_URL: server.baseUrl });
  const run = await runCli(["run", "suite", "--out", join(root, "run"), "--concurrency", "1"], { cwd: root, env });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests.length, 5);
  const deprecations = run.stderr.split("\n").filter((line) => /deprecated/i.test(line));
  assert.deepEqual(deprecations.map((line) => line.replace(/ will reach end-of-life.*/, "")), [
    "rhema: warning: The model 'claude-sonnet-4-5' is deprecated and",
    "rhema: warning: The model 'claude-opus-4-5' is deprecated and",
  ], run.stderr);
  assert.match(deprecations[0]!, /end-of-life on November 30th, 2026 Please migrate to a newer model\./);
  assert.doesNotMatch(run.stderr, /^Please migrate/m, "the SDK's second line is part of the one warning");
});
