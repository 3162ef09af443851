/**
 * Anthropic on Vertex AI end to end, through the built CLI and the official Vertex SDK against the
 * fake Anthropic server in its Vertex form (`:streamRawPredict`, a Bearer token). No Google token
 * endpoint is reached: GOOGLE_APPLICATION_CREDENTIALS names an `external_account` credentials file
 * (what Workload Identity Federation writes in CI) whose STS `token_url` is the fake, so the real
 * auth library exchanges the file's subject token there. A task throttled once (429
 * RESOURCE_EXHAUSTED, retried) calls the shell and answers; it is recorded with `--cassette`, its
 * cache reads and writes priced by the table's Google prices for the Vertex model id, then
 * replayed with the server stopped and no credentials. A 403 PERMISSION_DENIED stops the run with
 * exit 3.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { writeFiles } from "../support/suite-files.js";
import { assertOneCassette, assistantMessages, offlineEnv } from "../support/recorded-provider-run.js";
import { tempDir } from "../support/temp-dir.js";
import { writeExternalAccountFile } from "../support/vertex-credentials.js";

const MODEL = "claude-sonnet-4-5@20250929";
const VERTEX = { project: "rhema-e2e", region: "us-east5", token: "ya29.e2e-access-token", subjectToken: "e2e-oidc-subject-token" };
const TASK = `prompt: Write out.txt.
policy: ../policy.yaml
model: { provider: anthropic-vertex, name: "${MODEL}" }
checks:
  - { name: wrote, run: "test -f out.txt" }
`;

async function setUp(t: { after(fn: () => unknown): void }) {
  const server = await FakeAnthropicServer.startVertex(VERTEX);
  t.after(() => server.close());
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": "version: 1\ndefault: allow\nrules: []\n", "suite/write.yaml": TASK });
  const { file } = writeExternalAccountFile(root, server.tokenUrl, VERTEX.subjectToken);
  const env = {
    ...offlineEnv(), GOOGLE_APPLICATION_CREDENTIALS: file, CLOUD_ML_REGION: VERTEX.region, ANTHROPIC_VERTEX_PROJECT_ID: VERTEX.project,
    ANTHROPIC_VERTEX_BASE_URL: server.baseUrl,
  };
  return { server, root, env };
}

test("a Vertex task gets its token from the credentials file's STS, is retried past RESOURCE_EXHAUSTED, records, is priced with its cache reads and writes, and replays offline", async (t) => {
  const { server, root, env } = await setUp(t);
  server.reply(
    { kind: "google_error", status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model" },
    {
      kind: "stream", splitBytes: 9, blocks: [{ type: "tool_use", id: "toolu_1", name: "shell", input: { command: "echo done > out.txt" } }],
      usage: { input_tokens: 30, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, output_tokens: 20 },
    },
    { kind: "stream", blocks: [{ type: "text", text: "Wrote out.txt." }], usage: { input_tokens: 40, cache_read_input_tokens: 2000, cache_creation_input_tokens: 60, output_tokens: 8 } },
  );
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env });
  assert.equal(live.code, 0, live.stderr);
  assert.deepEqual(server.violations, []);
  const predict = server.requests.filter((r) => r.path.endsWith(":streamRawPredict"));
  assert.equal(predict.length, 3);
  assert.equal(server.requests[0]!.path, "/v1/token", "the token is exchanged first, at the file's token_url");
  for (const r of predict) assert.equal(r.headers.authorization, `Bearer ${VERTEX.token}`);

  const [result] = await readRunResults(join(root, "live"));
  assert.equal(result!.status, "passed");
  const stats = result!.stats as Record<string, number>;
  assert.deepEqual([stats.requests, stats.inputTokens, stats.cacheReadTokens, stats.cacheWriteTokens, stats.outputTokens], [2, 70, 2000, 2060, 28]);
  // Google's Vertex prices for Sonnet 4.5 (under 200k tokens), per million: 3 input, 0.30 cache read, 3.75 cache write, 15 output.
  assert.equal(result!.cost?.usd?.toFixed(7), ((70 * 3 + 2000 * 0.3 + 2060 * 3.75 + 28 * 15) / 1e6).toFixed(7), JSON.stringify(result!.cost));

  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(await assistantMessages(join(root, "replay")), await assistantMessages(join(root, "live")));
  await assertOneCassette(cassettes, "anthropic-vertex", VERTEX.token);
});

test("a 403 PERMISSION_DENIED stops the run once with exit 3, naming the credentials file to fix", async (t) => {
  const { server, root, env } = await setUp(t);
  server.reply({ kind: "google_error", status: 403, googleStatus: "PERMISSION_DENIED", message: "Permission 'aiplatform.endpoints.predict' denied on resource" });
  const run = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "run")], { cwd: root, env });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(server.requests.filter((r) => r.path.endsWith(":streamRawPredict")).length, 1);
  assert.match(run.stderr, /rhema: anthropic-vertex refused the key \(403 PERMISSION_DENIED: Permission 'aiplatform\.endpoints\.predict' denied on resource\): set a valid GOOGLE_APPLICATION_CREDENTIALS and run the same command to resume\n$/);
});
