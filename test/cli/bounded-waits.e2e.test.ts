/**
 * Bounded waits through the built CLI: a model stream that sends only keep-alives is ended by the
 * stream idle limit (`--stream-idle`, a task's `limits.streamIdle`) as a retryable provider error,
 * retried, then the task errors naming the limit; a timeout above setTimeout's 2^31−1 ms
 * (`--timeout 1000h`) does not fire at once; `none` is no limit for `--timeout` and
 * `limits.timeout`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { OPEN_POLICY, shellStepsTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

/** The default attempts of the provider retry (provider-retry.ts). */
const ATTEMPTS = 4;

test("anthropic: a stream that sends message_start then only pings is ended after --stream-idle 1s, retried, and the task errors naming the limit", { timeout: 60_000 }, async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  const pings = { kind: "stream" as const, blocks: [{ type: "text" as const, text: "never sent" }], hangAfterFrames: 1, pingEveryMs: 100 };
  for (let k = 0; k < ATTEMPTS; k++) server.reply(pings);
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/real.yaml": "prompt: Say hello.\npolicy: ../policy.yaml\nmodel: { provider: anthropic, name: claude-test }\n",
  });
  const env = cliEnv({ ANTHROPIC_API_KEY: "sk-test-key", ANTHROPIC_BASE_URL: server.baseUrl });
  const run = await runCli(["run", "suite", "--out", "run", "--stream-idle", "1s"], { cwd: root, env });
  assert.equal(run.code, 1, run.stderr);
  const [result] = await readRunResults(join(root, "run"));
  assert.equal(result!.status, "errored");
  assert.equal(result!.error?.code, "provider_stream");
  assert.match(result!.error!.message, /^anthropic: the stream sent no content for 1s \(the stream idle limit: --stream-idle, limits\.streamIdle\)/);
  assert.equal(server.requests.length, ATTEMPTS, "each attempt was ended and retried");
});

test("openai: a stream that sends only keep-alives is ended after the task's limits.streamIdle, retried, and the task errors naming the limit; the task's limit wins over the flag", { timeout: 60_000 }, async (t) => {
  const server = await FakeOpenAIServer.start();
  t.after(() => server.close());
  const keepAlive = { kind: "stream" as const, text: "never sent", hangAfterFrames: 1, keepAliveEveryMs: 100 };
  for (let k = 0; k < ATTEMPTS; k++) server.reply(keepAlive);
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/real.yaml": "prompt: Say hello.\npolicy: ../policy.yaml\nmodel: { provider: openai, name: gpt-test }\nlimits: { streamIdle: 1500ms }\n",
  });
  const env = cliEnv({ OPENAI_API_KEY: "sk-test-key", OPENAI_BASE_URL: server.baseUrl });
  const run = await runCli(["run", "suite", "--out", "run", "--stream-idle", "none"], { cwd: root, env });
  assert.equal(run.code, 1, run.stderr);
  const [result] = await readRunResults(join(root, "run"));
  assert.deepEqual([result!.status, result!.error?.code], ["errored", "provider_stream"]);
  assert.match(result!.error!.message, /^openai: the stream sent no content for 1500ms /);
  assert.equal(server.requests.length, ATTEMPTS);
});

test("--timeout 1000h (above setTimeout's 2^31-1 ms) does not fire at once; none is no limit for --timeout and limits.timeout", { timeout: 120_000 }, async (t) => {
  const root = await tempDir(t);
  const rest = "checks:\n  - { name: ok, run: \"true\" }\n";
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/quick.yaml": shellStepsTask(["sleep 0.3"], { rest }),
    "slow/slow.yaml": shellStepsTask(["sleep 2"], { rest: `limits: { timeout: none }\n${rest}` }),
    "slow-limited/slow.yaml": shellStepsTask(["sleep 2"], { rest: `limits: { timeout: 1s }\n${rest}` }),
    "slow-bare/slow.yaml": shellStepsTask(["sleep 2"], { rest: `limits: { timeout: 1 }\n${rest}` }),
    "slow-flag/slow.yaml": shellStepsTask(["sleep 2"], { rest }),
  });
  for (const timeout of ["1000h", "100000h", "none"]) {
    const run = await runCli(["run", "suite", "--out", `run-${timeout}`, "--sandbox", "off", "--timeout", timeout], { cwd: root, env: cliEnv() });
    assert.equal(run.code, 0, `--timeout ${timeout}: ${run.stdout}\n${run.stderr}`);
    assert.deepEqual((await readRunResults(join(root, `run-${timeout}`))).map((r) => r.status), ["passed"]);
  }
  const none = await runCli(["run", "slow", "--out", "run-slow", "--sandbox", "off", "--timeout", "1s"], { cwd: root, env: cliEnv() });
  assert.equal(none.code, 0, `limits.timeout: none wins over --timeout 1s: ${none.stderr}`);
  // The same task with a limit of 1s is stopped by it: the test above would see it.
  const limited = await runCli(["run", "slow-limited", "--out", "run-limited", "--sandbox", "off"], { cwd: root, env: cliEnv() });
  assert.equal(limited.code, 1);
  assert.deepEqual((await readRunResults(join(root, "run-limited"))).map((r) => [r.status, r.error?.code]), [["errored", "timeout"]]);
  // A bare number is seconds, on the flag as in a task file: `--timeout 1` is `limits.timeout: 1`.
  const bareFile = await runCli(["run", "slow-bare", "--out", "run-bare-file", "--sandbox", "off"], { cwd: root, env: cliEnv() });
  const bareFlag = await runCli(["run", "slow-flag", "--out", "run-bare-flag", "--sandbox", "off", "--timeout", "1"], { cwd: root, env: cliEnv() });
  const timedOut: string[] = [];
  for (const [run, dir] of [[bareFile, "run-bare-file"], [bareFlag, "run-bare-flag"]] as const) {
    assert.equal(run.code, 1, `${dir}: ${run.stdout}\n${run.stderr}`);
    const [result] = await readRunResults(join(root, dir));
    assert.deepEqual([result?.status, result?.error?.code], ["errored", "timeout"], dir);
    timedOut.push(result?.error?.message ?? "");
  }
  assert.equal(timedOut[0], timedOut[1], "the same limit, read the same way");
  const bareLong = await runCli(["run", "suite", "--out", "run-bare-long", "--sandbox", "off", "--timeout", "30", "--stream-idle", "60.5"], { cwd: root, env: cliEnv() });
  assert.equal(bareLong.code, 0, `--timeout 30 --stream-idle 60.5: ${bareLong.stderr}`);

  for (const bad of ["0s", "soon", "", "0", "-1", "2x"]) {
    const refused = await runCli(["run", "suite", "--out", "run-bad", "--timeout", bad], { cwd: root, env: cliEnv() });
    assert.equal(refused.code, 2, bad);
    assert.ok(refused.stderr.includes(`Expected --timeout as a duration like 90s, 10m or 1h, a number of seconds, or none, got "${bad}"`), refused.stderr);
  }
  const badIdle = await runCli(["run", "suite", "--out", "run-bad", "--stream-idle", "0ms"], { cwd: root, env: cliEnv() });
  assert.equal(badIdle.code, 2);
  assert.match(badIdle.stderr, /Expected --stream-idle as a duration like 90s, 10m or 1h, a number of seconds, or none, got "0ms"/);
});
