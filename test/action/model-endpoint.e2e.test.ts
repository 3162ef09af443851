/**
 * `provider`, `model` and `base-url` reach the model through the same runner as
 * `rhema run --provider --model --base-url`: both edges send their request to a local fake
 * Anthropic server named only by the flag (no ANTHROPIC_BASE_URL). The action's run also
 * measures its start-up cost: process start → first model request. A key the endpoint refuses is
 * one annotation and one summary block, the step failed, no task errored.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { cliEnv, runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { prepareJob, startStep, workflowCommands } from "./action-harness.js";
import { readFile } from "node:fs/promises";

const SUITE = {
  "policy.yaml": OPEN_POLICY,
  "suite/hello.yaml": `prompt: Say hello.
policy: ../policy.yaml
checks:
  - { name: always, run: "true" }
`,
};

test("the action's provider/model/base-url inputs send the model request to that endpoint", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "Hello." }] });
  const job = await prepareJob(await tempDir(t, "rhema-endpoint-"));
  await writeFiles(job.workspace, SUITE);
  const started = Date.now();
  const step = await startStep(job, {
    inputs: { tasks: "suite", provider: "anthropic", model: "claude-test", "base-url": server.baseUrl, resume: "false" },
    env: { ANTHROPIC_API_KEY: "sk-ant-test-key-123", DB_PASS: "hu7", BUILD_ID: "zq4", CONFIG_SECRET: 'quo"te\\back' },
  });
  let firstRequestMs: number | null = null;
  const poll = setInterval(() => {
    if (firstRequestMs === null && server.requests.length > 0) firstRequestMs = Date.now() - started;
  }, 5);
  const result = await step.finished;
  clearInterval(poll);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.equal(server.requests.length, 1);
  assert.equal(server.bodies[0].model, "claude-test");
  assert.match(result.stdout, /::add-mask::sk-ant-test-key-123/);
  // The runner's redaction rule: a short value is masked when its name says secret, not otherwise.
  assert.match(result.stdout, /::add-mask::hu7$/m);
  assert.doesNotMatch(result.stdout, /::add-mask::zq4/);
  // Every form the runner redacts is masked too: a secret JSON-escaped, as a program prints its configuration.
  assert.ok(result.stdout.split("\n").includes(`::add-mask::${JSON.stringify('quo"te\\back').slice(1, -1)}`), result.stdout);
  console.log(`# action start-up: process start → first model request ${firstRequestMs} ms (Node 24, bundle)`);
});

test("rhema run --base-url sends the model request to that endpoint", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "Hello." }] });
  const root = await tempDir(t, "rhema-endpoint-");
  await writeFiles(root, SUITE);
  const env = cliEnv({ ANTHROPIC_API_KEY: "sk-test-key" });
  delete env.ANTHROPIC_BASE_URL;
  const run = await runCli(["run", "suite", "--out", join(root, "run"), "--provider", "anthropic", "--model", "claude-test", "--base-url", server.baseUrl], { cwd: root, env });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests.length, 1);
});

test("a key the provider refuses: the action says it in one error annotation and one summary block, fails the step, and records no task errored", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply(...Array.from({ length: 3 }, () => ({ kind: "http_error" as const, status: 401, type: "authentication_error", message: "invalid x-api-key" })));
  const job = await prepareJob(await tempDir(t, "rhema-endpoint-"));
  await writeFiles(job.workspace, { ...SUITE, "suite/again.yaml": SUITE["suite/hello.yaml"], "suite/more.yaml": SUITE["suite/hello.yaml"] });
  const step = await startStep(job, {
    inputs: { tasks: "suite", provider: "anthropic", model: "claude-test", "base-url": server.baseUrl, resume: "false", concurrency: "1" },
    env: { ANTHROPIC_API_KEY: "sk-ant-revoked-key-456" },
  });
  const result = await step.finished;
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.equal(server.requests.length, 1);
  const said = "anthropic refused the key (401 authentication_error: invalid x-api-key): set a valid ANTHROPIC_API_KEY and run the same command to resume";
  const errors = workflowCommands(result.stdout, "error");
  assert.deepEqual(errors.filter((l) => l.includes("refused")).length, 2, errors.join("\n")); // the annotation, and the step's failure
  assert.ok(errors.some((l) => l.startsWith("::error title=rhema%3A anthropic refused the run::") && l.endsWith(said)), errors.join("\n"));
  assert.equal(result.outputs.errored, "0");
  const summary = await readFile(join(job.runnerDir, "summary.md"), "utf8");
  assert.equal(summary.split("The run could not continue").length - 1, 1, summary);
});
