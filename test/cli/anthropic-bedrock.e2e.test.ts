/**
 * Anthropic on Bedrock end to end, through the built CLI and the official Bedrock SDK against the
 * fake Bedrock runtime (AWS event-stream frames, SigV4 with static keys, no metadata endpoint): a
 * task whose first request is throttled (retried) calls the shell and answers; it is recorded with
 * `--cassette`, its cache reads and writes priced by the table's AWS Bedrock prices for the
 * model id with its region prefix, then replayed with the server stopped and no credentials. A
 * 403 AccessDeniedException stops the run with exit 3, naming the AWS variables.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { FakeBedrockServer } from "../support/fake-bedrock-server.js";
import { writeFiles } from "../support/suite-files.js";
import { assertOneCassette, assistantMessages, offlineEnv } from "../support/recorded-provider-run.js";
import { tempDir } from "../support/temp-dir.js";

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKESECRETKEY";
const TASK = `prompt: Write out.txt.
policy: ../policy.yaml
model: { provider: anthropic-bedrock, name: ${MODEL} }
checks:
  - { name: wrote, run: "test -f out.txt" }
`;

/** Static keys, a session token and the region, the endpoint at `server`, and no metadata endpoint to try. */
function awsEnv(server: FakeBedrockServer, sessionToken: string): Record<string, string> {
  return {
    ...offlineEnv(), AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: sessionToken,
    AWS_REGION: server.region, AWS_EC2_METADATA_DISABLED: "true", ANTHROPIC_BEDROCK_BASE_URL: server.baseUrl,
  };
}

async function suite(t: { after(fn: () => unknown): void }): Promise<string> {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": "version: 1\ndefault: allow\nrules: []\n", "suite/write.yaml": TASK });
  return root;
}

test("a Bedrock task is retried past throttling, records, is priced with its cache reads and writes, and replays offline from its cassette", async (t) => {
  const server = await FakeBedrockServer.start({ sessionToken: "fake-session-token" });
  t.after(() => server.close());
  const root = await suite(t);
  server.reply(
    { kind: "aws_error", status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again." },
    {
      kind: "stream", splitBytes: 11, blocks: [{ type: "tool_use", id: "toolu_1", name: "shell", input: { command: "echo done > out.txt" } }],
      usage: { input_tokens: 30, cache_creation_input_tokens: 2000, cache_read_input_tokens: 0, output_tokens: 20 },
    },
    { kind: "stream", blocks: [{ type: "text", text: "Wrote out.txt." }], usage: { input_tokens: 40, cache_read_input_tokens: 2000, cache_creation_input_tokens: 60, output_tokens: 8 } },
  );
  const cassettes = join(root, "cassettes");
  const live = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "live"), "--cassette", cassettes], { cwd: root, env: awsEnv(server, "fake-session-token") });
  assert.equal(live.code, 0, live.stderr);
  assert.deepEqual(server.violations, []);
  assert.deepEqual(server.models, [MODEL, MODEL, MODEL]);
  assert.match(String(server.requests[1]!.headers.authorization), new RegExp(`Credential=${server.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request`));
  assert.equal(server.bodies[2].messages[1].content[0].type, "tool_use");

  const [result] = await readRunResults(join(root, "live"));
  assert.equal(result!.status, "passed");
  const stats = result!.stats as Record<string, number>;
  assert.deepEqual([stats.requests, stats.inputTokens, stats.cacheReadTokens, stats.cacheWriteTokens, stats.outputTokens], [2, 70, 2000, 2060, 28]);
  // AWS Bedrock's regional (us.) prices for Sonnet 4.5, per million: 3.30 input, 0.33 cache read, 4.125 cache write, 16.50 output.
  assert.equal(result!.cost?.usd?.toFixed(7), ((70 * 3.3 + 2000 * 0.33 + 2060 * 4.125 + 28 * 16.5) / 1e6).toFixed(7), JSON.stringify(result!.cost));

  await server.close();
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env: offlineEnv() });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(await assistantMessages(join(root, "replay")), await assistantMessages(join(root, "live")));
  assert.equal((await readRunResults(join(root, "replay")))[0]!.status, "passed");
  await assertOneCassette(cassettes, "anthropic-bedrock", SECRET);
});

test("a 403 AccessDeniedException stops the run once with exit 3, naming the AWS credentials to fix", async (t) => {
  const server = await FakeBedrockServer.start();
  t.after(() => server.close());
  const root = await suite(t);
  server.reply({ kind: "aws_error", status: 403, type: "AccessDeniedException", message: "You don't have access to the model with the specified model ID." });
  const env = awsEnv(server, "");
  delete env.AWS_SESSION_TOKEN;
  const run = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "run")], { cwd: root, env });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(server.requests.length, 1);
  assert.match(run.stderr, /rhema: anthropic-bedrock refused the key \(403 AccessDeniedException: You don't have access to the model with the specified model ID\.\): set a valid AWS_ACCESS_KEY_ID\/AWS_SECRET_ACCESS_KEY and run the same command to resume\n$/);
});
