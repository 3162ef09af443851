/**
 * The Responses API provider end to end, through the built CLI and the official OpenAI SDK
 * against the local wire-protocol server: a task whose model reasons, calls the shell and answers
 * is recorded with `--cassette` (its reasoning item sent back on the next request, kept in the
 * session, priced by a pricing file with its cached tokens), then replayed with the server
 * stopped and no key: the same outcomes and model messages; the cassette validates against its
 * published schema.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeOpenAIResponsesServer } from "../support/fake-openai-responses-server.js";
import { writeFiles } from "../support/suite-files.js";
import { assertOneCassette, assistantMessages, offlineEnv } from "../support/recorded-provider-run.js";
import { tempDir } from "../support/temp-dir.js";

const KEY = "sk-proj-responses-secret-0123456789abcdef";
const TASK = `prompt: Write out.txt.
policy: ../policy.yaml
model: { provider: openai-responses, name: gpt-4.1-mini }
checks:
  - { name: wrote, run: "test -f out.txt" }
`;

test("a reasoning task over the Responses API records, carries its reasoning, is priced with its cached tokens, and replays offline from its cassette", async (t) => {
  const server = await FakeOpenAIResponsesServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": "version: 1\ndefault: allow\nrules: []\n", "suite/write.yaml": TASK,
    // A local server's models are priced only as a pricing file names them (api.openai.com's would be from the table).
    "pricing.yaml": "version: 1\nmodels:\n  - { provider: openai-responses, model: gpt-4.1-mini, inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 }\n",
  });
  server.reply(
    {
      kind: "stream", reasoning: [{ id: "rs_1", encrypted: "gAAAA-encrypted-reasoning", summary: ["Write the file with the shell."] }],
      calls: [{ callId: "call_1", name: "shell", arguments: { command: "echo done > out.txt" } }],
      usage: { input_tokens: 2000, output_tokens: 120, cached_tokens: 0, reasoning_tokens: 96 },
    },
    { kind: "stream", text: "Wrote out.txt.", usage: { input_tokens: 2200, output_tokens: 8, cached_tokens: 1920 } },
  );
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "suite", "--sandbox", "off", "--pricing", "pricing.yaml", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: cliEnv({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseUrl }) });
  assert.equal(live.code, 0, live.stderr);
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests.length, 2);
  const [first, second] = server.bodies;
  assert.deepEqual([first.store, second.store, first.prompt_cache_key === second.prompt_cache_key], [false, false, true]);
  assert.deepEqual(second.input.find((item: { type?: string }) => item.type === "reasoning"), {
    type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Write the file with the shell." }], encrypted_content: "gAAAA-encrypted-reasoning",
  });

  const [result] = await readRunResults(join(root, "live"));
  assert.equal(result!.status, "passed");
  const stats = result!.stats as Record<string, number>;
  assert.deepEqual([stats.requests, stats.inputTokens, stats.cacheReadTokens, stats.outputTokens], [2, 2000 + 280, 1920, 128]);
  // (2,280 × 2 + 1,920 × 0.5 + 128 × 8) / 1e6 dollars
  assert.equal(result!.cost?.usd?.toFixed(6), ((2280 * 2 + 1920 * 0.5 + 128 * 8) / 1e6).toFixed(6), JSON.stringify(result!.cost));
  const kept = JSON.stringify(await assistantMessages(join(root, "live")));
  assert.match(kept, /"type":"reasoning","provider":"openai-responses","id":"rs_1","data":"gAAAA-encrypted-reasoning"/);

  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(await assistantMessages(join(root, "replay")), await assistantMessages(join(root, "live")));
  assert.equal((await readRunResults(join(root, "replay")))[0]!.status, "passed");

  await assertOneCassette(cassettes, "openai-responses", KEY);
});
