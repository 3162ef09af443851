/**
 * What a throw inside a task means: the task's errored outcome, or the end of the run. An
 * unknown throw is `internal` (never `provider`); only outages and timeouts are retried.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CodingAgentError, OutputError, ProviderError, RhemaError, SessionFileError } from "../../../src/core/errors.js";
import { classifyTaskFailure, isRetryableErrorCode } from "../../../src/runner/execute/task-failure.js";
import { StateFileError } from "../../../src/runner/run-dir/state-file.js";

const summary = (f: ReturnType<typeof classifyTaskFailure>) => ({ kind: f.kind, code: f.error.code, message: f.error.message });

test("an unknown throw (a bug, a bare errno) is an errored task with code internal, keeping its cause", () => {
  const bug = new TypeError("Cannot read properties of undefined (reading 'decide')");
  const failure = classifyTaskFailure(bug);
  assert.deepEqual(summary(failure), { kind: "errored", code: "internal", message: "Cannot read properties of undefined (reading 'decide')" });
  assert.equal(failure.error.cause, bug);
  assert.deepEqual(summary(classifyTaskFailure("a thrown string")), { kind: "errored", code: "internal", message: "a thrown string" });
});

test("the agent's own failures are the task's outcome, with their codes", () => {
  const provider = new ProviderError("overloaded", { retryable: true, status: 529 });
  assert.deepEqual(summary(classifyTaskFailure(provider)), { kind: "errored", code: "provider", message: "overloaded" });
  assert.deepEqual(summary(classifyTaskFailure(new CodingAgentError("step_cap", "used all 40 steps"))), { kind: "errored", code: "step_cap", message: "used all 40 steps" });
  assert.deepEqual(summary(classifyTaskFailure(new RhemaError("setup_failed", "setup exited 2"))), { kind: "errored", code: "setup_failed", message: "setup exited 2" });
});

test("a timeout that fired is the outcome, whatever the cancel it caused looked like", () => {
  const timeout = new CodingAgentError("timeout", "the task's timeout of 200 ms passed");
  assert.deepEqual(summary(classifyTaskFailure(new RhemaError("cancelled", "interrupted during setup"), timeout)),
    { kind: "errored", code: "timeout", message: "the task's timeout of 200 ms passed" });
});

test("output rhema cannot write stops the run, even wrapped by the agent as a failed commit", () => {
  const full = new OutputError("/runs/r/tasks/s/a/default/1/session.json", "write", "ENOSPC");
  const wrapped = new CodingAgentError("commit_failed", `the commit hook failed at the result boundary: ${full.message}`, { cause: full });
  assert.deepEqual(classifyTaskFailure(wrapped), { kind: "stop", error: full });
  assert.deepEqual(classifyTaskFailure(full, new CodingAgentError("timeout", "passed")), { kind: "stop", error: full }, "a full disk outranks a timeout");
});

test("a checkpoint or state file that cannot be trusted stops the run (exit 2, naming it)", () => {
  for (const err of [new SessionFileError("/r/session.json", "not JSON"), new StateFileError("/r/task-state.json", "state_invalid", "not a rhema task state")]) {
    assert.deepEqual(classifyTaskFailure(err), { kind: "stop", error: err });
  }
});

test("a commit hook that fails for another reason is the task's error, not the run's end", () => {
  const err = new CodingAgentError("commit_failed", "the commit hook failed at the input boundary: boom", { cause: new TypeError("boom") });
  assert.deepEqual(summary(classifyTaskFailure(err)), { kind: "errored", code: "commit_failed", message: err.message });
});

test("--retry-errored retries outages and timeouts only", () => {
  assert.deepEqual(
    ["provider", "provider_stream", "timeout", "internal", "step_cap", "setup_failed", "commit_failed", "invalid_input", "something-newer"].filter(isRetryableErrorCode),
    ["provider", "provider_stream", "timeout"],
  );
});

test("the machine out of file handles, processes or memory stops the run (the task left unfinished), by errno class wherever it is in the cause chain", () => {
  for (const errno of ["EMFILE", "ENFILE", "EAGAIN", "ENOMEM", "ENOBUFS"]) {
    const spawnFailure = Object.assign(new Error(`spawn /bin/sh ${errno}`), { code: errno, syscall: "spawn /bin/sh", path: "/bin/sh" });
    const readdirFailure = Object.assign(new Error(`${errno}: scandir '/w'`), { code: errno, syscall: "scandir", path: "/w" });
    const provider = new ProviderError("anthropic: connection failed", { retryable: true, cause: new Error("fetch failed", { cause: spawnFailure }) });
    for (const err of [spawnFailure, readdirFailure, provider, new RhemaError("setup_failed", "x", { cause: readdirFailure })]) {
      const failure = classifyTaskFailure(err);
      assert.equal(failure.kind, "stop", `${errno}: ${String(err)}`);
      assert.equal(failure.error.code, "machine_limit");
      assert.match(failure.error.message, new RegExp(`\\(${errno}\\)`));
    }
  }
  assert.equal(classifyTaskFailure(Object.assign(new Error("ENOENT"), { code: "ENOENT", syscall: "open" })).error.code, "internal", "another errno stays a bug");
  assert.equal(classifyTaskFailure(Object.assign(new Error("EAGAIN: read"), { code: "EAGAIN", syscall: "read" })).error.code, "internal",
    "EAGAIN from a read is a non-blocking file that would block, not the machine's limit");
});
