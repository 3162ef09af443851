/**
 * A task's checks: every one runs, in order, in the workspace; outcomes say which passed; output
 * redacted; each recorded started and done, so a finished one keeps its result after a kill and
 * an interrupted one runs again; the task's timeout stops the running one and skips the rest;
 * the final answer is in the file RHEMA_FINAL_ANSWER names.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { SecretRedactor } from "../../../src/runner/run-dir/secret-redactor.js";
import { DEFAULT_CHECK_TIMEOUT_MS, NOT_RUN_TIMEOUT, runChecks } from "../../../src/runner/execute/task-checks.js";
import type { RunnerEvent } from "../../../src/runner/run-dir/runner-events.js";
import { parseTaskSource, type TaskCheck, type TaskDefinition } from "../../../src/runner/tasks/task-file.js";
import { TaskFolder } from "../../../src/runner/run-dir/task-folder.js";
import { freshTaskState, type TaskState } from "../../../src/runner/run-dir/task-state.js";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "../../support/temp-dir.js";

const SECRET = "tok-0123456789";
const ENV = { PATH: process.env.PATH, CHECK_TOKEN: SECRET };

function taskWith(checks: TaskCheck[]): TaskDefinition {
  return { ...parseTaskSource("prompt: check things\n", "/suites/s/t.yaml"), checks };
}

const AT = "2026-03-04T05:06:07.000Z";

interface CheckRun { signal?: AbortSignal; deadline?: AbortSignal; state?: Partial<TaskState>; finalAnswer?: string }

async function check(t: { after(fn: () => unknown): void }, checks: TaskCheck[], run: CheckRun = {}) {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "t" });
  const workspace = folder.workspace;
  await mkdir(workspace, { recursive: true });
  const book = folder.stateBook({ ...freshTaskState("h", AT), ...run.state });
  const finalAnswerPath = await folder.writeFinalAnswer(run.finalAnswer ?? "");
  // The command runner keeps secrets from commands; allowing this one lets it reach the output.
  const runCommand = processCommandRunner({ baseEnv: ENV, allowEnv: ["CHECK_TOKEN"] });
  const events: RunnerEvent[] = [];
  const ran = await runChecks(taskWith(checks), workspace, {
    runCommand, signal: run.signal ?? new AbortController().signal, deadline: run.deadline ?? null, redactor: new SecretRedactor(ENV),
    book, now: () => new Date(AT), finalAnswerPath, onEvent: (e) => void events.push(e),
  });
  const outcomes = ran.kind === "finished" ? ran.outcomes.map((o) => ({ ...o, durationMs: 0 })) : [];
  return { workspace, folder, book, events, ran, outcomes };
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
  const { ran, book } = await check(t, [{ name: "never", run: "true" }], { signal: controller.signal });
  assert.deepEqual(ran, { kind: "interrupted" });
  assert.deepEqual(book.current.checks, []);
});

test("a task without checks has no outcomes", async (t) => {
  assert.deepEqual((await check(t, [])).outcomes, []);
});

test("the default check timeout is five minutes", () => {
  assert.equal(DEFAULT_CHECK_TIMEOUT_MS, 5 * 60_000);
});

test("finished checks keep their results after a kill; the interrupted one runs again (said so), then the rest", async (t) => {
  const root = await tempDir(t);
  const log = join(root, "check-runs.txt");
  const checks = ["a", "b", "c"].map((name) => ({ name, run: `echo ${name} >> ${log}` }));
  const keptOutcome = { name: "a", command: checks[0]!.run, exitCode: 0, passed: true, durationMs: 12, outputTail: "from the first run", timedOut: false };
  const { outcomes, events, book } = await check(t, checks, { state: { checks: [
    { status: "done", name: "a", startedAt: AT, attempt: 1, outcome: keptOutcome },
    { status: "started", name: "b", startedAt: AT, attempt: 1 },
  ] } });
  assert.deepEqual((await readFile(log, "utf8")).split("\n").filter(Boolean), ["b", "c"], "the finished check did not run again");
  assert.deepEqual(outcomes.map((o) => [o.name, o.outputTail, o.passed]), [["a", "from the first run", true], ["b", "", true], ["c", "", true]]);
  assert.deepEqual(events.filter((e) => e.type === "check_start").map((e) => [e.name, e.rerun]), [["b", "interrupted"], ["c", null]]);
  assert.deepEqual(events.filter((e) => e.type === "check_end").map((e) => [e.name, e.kept]), [["a", true], ["b", false], ["c", false]]);
  assert.deepEqual(book.current.checks.map((r) => [r.name, r.status, r.attempt]), [["a", "done", 1], ["b", "done", 2], ["c", "done", 1]]);
});

test("a check interrupted by the run's signal stays started, so the next run runs it again", async (t) => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const { ran, book, folder } = await check(t, [{ name: "slow", run: "sleep 30" }, { name: "after", run: "true" }], { signal: controller.signal });
  assert.deepEqual(ran, { kind: "interrupted" });
  assert.deepEqual(book.current.checks, [{ status: "started", name: "slow", startedAt: AT, attempt: 1 }]);
  assert.deepEqual(await folder.readState(), book.current);
});

test("the task's timeout kills the running check, reported timed out, and the rest are reported not run", async (t) => {
  const deadline = new AbortController();
  setTimeout(() => deadline.abort(), 300);
  const { ran, outcomes, events, book } = await check(t, [
    { name: "quick", run: "true" },
    { name: "hangs", run: "sleep 30" },
    { name: "later", run: "true" },
  ], { deadline: deadline.signal });
  assert.equal(ran.kind, "finished");
  assert.deepEqual(ran.kind === "finished" && ran.deadline, { check: "hangs", running: true });
  assert.deepEqual(outcomes, [
    { name: "quick", command: "true", exitCode: 0, passed: true, durationMs: 0, outputTail: "", timedOut: false },
    { name: "hangs", command: "sleep 30", exitCode: null, passed: false, durationMs: 0, outputTail: "", timedOut: true },
    { name: "later", command: "true", exitCode: null, passed: false, durationMs: 0, outputTail: "", timedOut: false, notRun: NOT_RUN_TIMEOUT },
  ]);
  assert.deepEqual(events.filter((e) => e.type === "check_end").map((e) => [e.name, e.passed, e.timedOut, e.notRun ?? null]),
    [["quick", true, false, null], ["hangs", false, true, null], ["later", false, false, NOT_RUN_TIMEOUT]]);
  assert.deepEqual(book.current.checks.map((r) => [r.name, r.status]), [["quick", "done"], ["hangs", "started"]], "the stopped check is no result of its own: a retry runs it again");
});

test("RHEMA_FINAL_ANSWER names the file with the agent's final answer, outside the workspace, despite the scrubbed environment", async (t) => {
  const { outcomes, workspace, folder } = await check(t, [
    { name: "answer", run: 'test "$(cat "$RHEMA_FINAL_ANSWER")" = "The answer is 42." && echo "$RHEMA_FINAL_ANSWER"' },
  ], { finalAnswer: "The answer is 42." });
  assert.deepEqual(outcomes.map((o) => [o.passed, o.outputTail]), [[true, `${folder.path("finalAnswer")}\n`]]);
  assert.ok(!folder.path("finalAnswer").startsWith(workspace + "/"));
});

test("a command's own variables reach it through its environment, quotes and all, and bash's line numbers stay the user's", async (t) => {
  const dir = await tempDir(t);
  const runCommand = processCommandRunner({ baseEnv: { PATH: process.env.PATH } });
  const out = await runCommand({ command: "echo \"$A\"; nosuchcommand", env: { A: "it's /x y" }, cwd: dir, timeoutMs: 5000, signal: new AbortController().signal });
  assert.match(out.outputTail, /^it's \/x y\n.*line 1: nosuchcommand/);
});
