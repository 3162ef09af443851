/**
 * The Gemini provider end to end, through the built CLI and the official `@google/genai` SDK
 * against the local wire-protocol server: a task whose thinking model calls the shell (no call id,
 * a thought signature the server requires back) and answers is recorded with `--cassette`
 * (priced by a pricing file with its implicitly cached and thinking tokens, the signature kept in
 * the session; `bench replay` of the run takes the registry's cache rules), then replayed with the server stopped and no key: the same outcomes and model
 * messages; the cassette validates against its published schema.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunDirSessions } from "../../src/runner/run-dir/recorded-sessions.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { FakeGeminiServer } from "../support/fake-gemini-server.js";
import { writeFiles } from "../support/suite-files.js";
import { assertOneCassette, assistantMessages, offlineEnv } from "../support/recorded-provider-run.js";
import { tempDir } from "../support/temp-dir.js";

const KEY = "AIzaSy-gemini-secret-0123456789abcdef";
const TASK = `prompt: Write out.txt.
policy: ../policy.yaml
model: { provider: gemini, name: gemini-2.5-flash }
checks:
  - { name: wrote, run: "test -f out.txt" }
`;

/** No key and no endpoint of any provider, the SDK's own variables included. */

test("a Gemini task records, sends its thought signature back, is priced with its cached and thinking tokens, and replays offline from its cassette", async (t) => {
  const server = await FakeGeminiServer.start();
  server.requireSignatures = true;
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": "version: 1\ndefault: allow\nrules: []\n", "suite/write.yaml": TASK,
    // A local server's models are priced only as a pricing file names them (Google's host's would be from the table).
    "pricing.yaml": "version: 1\nmodels:\n  - { provider: gemini, model: gemini-2.5-flash, inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.03 }\n",
  });
  server.reply(
    {
      kind: "stream", signature: "Cq0CAdHtim9-signature", calls: [{ name: "shell", args: { command: "echo done > out.txt" } }],
      usage: { promptTokenCount: 2000, candidatesTokenCount: 24, thoughtsTokenCount: 96 },
    },
    { kind: "stream", text: "Wrote out.txt.", usage: { promptTokenCount: 2200, candidatesTokenCount: 8, cachedContentTokenCount: 1920 } },
  );
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "suite", "--sandbox", "off", "--pricing", "pricing.yaml", "--out", join(root, "live"), "--cassette", cassettes], {
    cwd: root, env: { ...offlineEnv(), GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: server.baseUrl },
  });
  assert.equal(live.code, 0, live.stderr);
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[0]!.headers["x-goog-api-key"], KEY);
  const second = server.bodies[1];
  assert.deepEqual(second.contents[1], { role: "model", parts: [{ functionCall: { name: "shell", args: { command: "echo done > out.txt" } }, thoughtSignature: "Cq0CAdHtim9-signature" }] });
  assert.equal(second.contents[2].parts[0].functionResponse.name, "shell");

  const [result] = await readRunResults(join(root, "live"));
  assert.equal(result!.status, "passed");
  const stats = result!.stats as Record<string, number>;
  assert.deepEqual([stats.requests, stats.inputTokens, stats.cacheReadTokens, stats.outputTokens, stats.reasoningTokens], [2, 2000 + 280, 1920, 128, 96]);
  // (2,280 × 0.3 + 1,920 × 0.03 + 128 × 2.5) / 1e6 dollars
  assert.equal(result!.cost?.usd?.toFixed(7), ((2280 * 0.3 + 1920 * 0.03 + 128 * 2.5) / 1e6).toFixed(7), JSON.stringify(result!.cost));
  const kept = JSON.stringify(await assistantMessages(join(root, "live")));
  assert.match(kept, /"type":"reasoning","provider":"gemini","id":"","data":"Cq0CAdHtim9-signature"/);
  // `bench replay` of the run simulates its cache with the rules `--cassette-usage simulate` uses: the registry's.
  const [recorded] = await readRunDirSessions(join(root, "live"));
  assert.equal(recorded!.session.cache, "openai");

  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(await assistantMessages(join(root, "replay")), await assistantMessages(join(root, "live")));
  assert.equal((await readRunResults(join(root, "replay")))[0]!.status, "passed");

  await assertOneCassette(cassettes, "gemini", KEY);
});
