/** A task's checks: every one runs, in order, in the workspace; outcomes say which passed; output redacted. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { SecretRedactor } from "../../../src/runner/execute/secret-redactor.js";
import { runChecks } from "../../../src/runner/execute/task-checks.js";
import { parseTaskSource, type TaskCheck, type TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { tempDir } from "../../support/temp-dir.js";

const SECRET = "tok-0123456789";
const ENV = { PATH: process.env.PATH, CHECK_TOKEN: SECRET };

function taskWith(checks: TaskCheck[]): TaskDefinition {
  return { ...parseTaskSource("prompt: check things\n", "/suites/s/t.yaml"), checks };
}

async function check(t: { after(fn: () => unknown): void }, checks: TaskCheck[], signal = new AbortController().signal) {
  const workspace = await tempDir(t);
  // The command runner keeps secrets from commands; allowing this one lets it reach the output.
  const runCommand = processCommandRunner({ baseEnv: ENV, allowEnv: ["CHECK_TOKEN"] });
  const outcomes = await runChecks(taskWith(checks), workspace, { runCommand, signal, redactor: new SecretRedactor(ENV) });
  return { workspace, outcomes: outcomes.map((o) => ({ ...o, durationMs: 0 })) };
}

test("runs every check in order in the workspace and reports each outcome", async (t) => {
  const { outcomes } = await check(t, [
    { name: "first", run: "echo one > order.txt" },
    { name: "fails", run: "echo two >> order.txt; echo broken; exit 4" },
    { name: "still runs", run: "echo three >> order.txt; cat order.txt" },
  ]);
  assert.deepEqual(outcomes, [
    { name: "first", command: "echo one > order.txt", exitCode: 0, passed: true, durationMs: 0, outputTail: "", timedOut: false },
    { name: "fails", command: "echo two >> order.txt; echo broken; exit 4", exitCode: 4, passed: false, durationMs: 0, outputTail: "broken\n", timedOut: false },
    { name: "still runs", command: "echo three >> order.txt; cat order.txt", exitCode: 0, passed: true, durationMs: 0, outputTail: "one\ntwo\nthree\n", timedOut: false },
  ]);
});

test("a check past its timeout fails with no exit code", async (t) => {
  const { outcomes } = await check(t, [{ name: "slow", run: "sleep 30", timeoutMs: 200 }]);
  assert.deepEqual(outcomes, [{ name: "slow", command: "sleep 30", exitCode: null, passed: false, durationMs: 0, outputTail: "", timedOut: true }]);
});

test("redacts secrets in a check's output", async (t) => {
  const { outcomes } = await check(t, [{ name: "leaks", run: 'echo "token is $CHECK_TOKEN"' }]);
  assert.equal(outcomes[0]!.outputTail, "token is [redacted:CHECK_TOKEN]\n");
});

test("once the run's signal is aborted no further check starts", async (t) => {
  const controller = new AbortController();
  controller.abort();
  const { outcomes } = await check(t, [{ name: "never", run: "true" }], controller.signal);
  assert.deepEqual(outcomes, []);
});

test("a task without checks has no outcomes", async (t) => {
  assert.deepEqual((await check(t, [])).outcomes, []);
});
