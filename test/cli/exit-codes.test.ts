/** How an error that ends a command reaches the user: its exit code and one message, no stack. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EXIT_CANNOT_CONTINUE, EXIT_INTERRUPTED, EXIT_INVALID_INPUT, EXIT_TASK_FAILED, describeFailure, exitCodeFor } from "../../src/cli/exit-codes.js";
import { CancelledError, OutputError, RhemaError, type ErrorCode } from "../../src/core/errors.js";
import { RunLockedError } from "../../src/runner/run-dir/run-lock.js";
import { TaskFileError } from "../../src/runner/tasks/task-file.js";
import { tempDir } from "../support/temp-dir.js";

test("a typed error is invalid input (exit 2) with its own message", () => {
  assert.deepEqual(describeFailure(new RhemaError("usage", "Expected --concurrency to be a whole number from 1 and up, got 0")),
    { code: EXIT_INVALID_INPUT, message: "rhema: Expected --concurrency to be a whole number from 1 and up, got 0" });
  assert.deepEqual(describeFailure(new RunLockedError("/runs/r", 42)),
    { code: 2, message: "rhema: /runs/r is in use by another rhema run (pid 42); wait for it, or pass another --out" });
  assert.deepEqual(describeFailure(new TaskFileError([{ file: "/s/t.yaml", line: 3, column: 5, field: "limits.timeout", message: "bad" }])),
    { code: 2, message: "rhema: /s/t.yaml:3:5: limits.timeout: bad" });
  assert.deepEqual(describeFailure(new RhemaError("manifest_invalid", "/runs/r/manifest.json: not a rhema run manifest")),
    { code: 2, message: "rhema: /runs/r/manifest.json: not a rhema run manifest" });
});

test("output rhema cannot write is exit 3, naming the path, the operation and what to do", () => {
  assert.deepEqual(describeFailure(new OutputError("/x/junit.xml", "write", "ENOSPC")), {
    code: EXIT_CANNOT_CONTINUE,
    message: "rhema: cannot write /x/junit.xml: no space left on device (ENOSPC); free some space, then run the same command to continue",
  });
  assert.deepEqual(describeFailure(new OutputError("/runs/r/tasks/s/a/default/1/events.jsonl", "append to", "EACCES")), {
    code: 3,
    message: "rhema: cannot append to /runs/r/tasks/s/a/default/1/events.jsonl: permission denied (EACCES); fix the permissions, or choose another --out or report path, then run the same command to continue",
  });
  assert.deepEqual(describeFailure(new OutputError("/x", "write", "EWHATEVER")), { code: 3, message: "rhema: cannot write /x: EWHATEVER (EWHATEVER); run the same command to continue" });
});

test("a cancellation that reaches the top is an interrupt (130)", () => {
  assert.deepEqual(describeFailure(new CancelledError()), { code: EXIT_INTERRUPTED, message: "rhema: the turn was cancelled" });
});

test("each error code has its exit code: input 2, the machine 3, a task's failure or a bug 1, a cancel 130", () => {
  const expected: Record<ErrorCode, number> = {
    usage: 2, invalid_input: 2, invalid_config: 2, task_invalid: 2, policy_invalid: 2, provider_unavailable: 2, workspace_missing: 2,
    prompt_render_failed: 2, session_invalid: 2, result_invalid: 2, manifest_invalid: 2, state_invalid: 2, run_locked: 2, task_changed: 2,
    output_failed: 3, lock_lost: 3, commit_failed: 3, sandbox_unavailable: 3, machine_limit: 3, provider_refused: 3,
    provider: 1, provider_stream: 1, timeout: 1, step_cap: 1, setup_failed: 1, cassette_miss: 1, mcp_start: 1, mcp_changed: 1, mcp_crashed: 1, mcp_invalid: 1, output_invalid: 1, sandbox_failed: 1, budget: 1, internal: 1, turn_in_progress: 1, nothing_to_retry: 1,
    cancelled: 130,
  };
  assert.deepEqual(Object.fromEntries(Object.keys(expected).map((code) => [code, exitCodeFor(code as ErrorCode)])), expected);
});

test("a file-system error is invalid input naming the path; a full disk is the machine's (exit 3)", async (t) => {
  const dir = await tempDir(t);
  const missing = join(dir, "nope.yaml");
  const err = await readFile(missing).catch((e: unknown) => e);
  assert.deepEqual(describeFailure(err), { code: EXIT_INVALID_INPUT, message: `rhema: ENOENT: no such file or directory, open '${missing}'` });
  const full = await writeFile("/dev/full", "x").catch((e: unknown) => e);
  assert.equal((full as { code?: string }).code, "ENOSPC");
  assert.deepEqual(describeFailure(full), { code: EXIT_CANNOT_CONTINUE, message: "rhema: cannot write: no space left on device (ENOSPC); free some space, then run the same command to continue" });
  const readOnly = Object.assign(new Error("EROFS: read-only file system, open '/ro/x'"), { code: "EROFS", path: "/ro/x" });
  assert.deepEqual(describeFailure(readOnly), { code: 3, message: "rhema: cannot write /ro/x: read-only file system (EROFS); choose another --out or report path on a writable file system, then run the same command to continue" });
});

test("the machine running out of file handles, processes or memory is exit 3 naming the errno, wherever it is in the cause chain", () => {
  for (const errno of ["EMFILE", "ENFILE", "EAGAIN", "ENOMEM", "ENOBUFS"]) {
    const spawnFailure = Object.assign(new Error(`spawn /bin/sh ${errno}`), { code: errno, syscall: "spawn /bin/sh", path: "/bin/sh" });
    const described = describeFailure(spawnFailure);
    assert.equal(described.code, EXIT_CANNOT_CONTINUE, errno);
    assert.match(described.message, new RegExp(`^rhema: the machine ran out of a resource \\(spawn /bin/sh\\): .*\\(${errno}\\); .*run the same command to continue$`));
    // Labelled a bug by whoever caught it, or wrapped as a provider's connection failure: still the machine's.
    assert.equal(describeFailure(new RhemaError("internal", "boom", { cause: spawnFailure })).code, EXIT_CANNOT_CONTINUE, errno);
    assert.equal(describeFailure(new Error("fetch failed", { cause: spawnFailure })).code, EXIT_CANNOT_CONTINUE, errno);
  }
  assert.deepEqual(describeFailure(Object.assign(new Error("EMFILE: too many open files, open '/w/a'"), { code: "EMFILE", syscall: "open", path: "/w/a" })), {
    code: 3, message: "rhema: the machine ran out of a resource (open /w/a): too many open files (EMFILE); raise the open-file limit (ulimit -n) or lower --concurrency, then run the same command to continue",
  });
});

test("anything else is an internal error (exit 1), said plainly, without a stack", () => {
  const bug = new TypeError("cannot read properties of undefined (reading 'id')");
  assert.deepEqual(describeFailure(bug), { code: EXIT_TASK_FAILED, message: "rhema: internal error: cannot read properties of undefined (reading 'id')" });
  assert.deepEqual(describeFailure(new RhemaError("internal", "a result of s/x cannot go into the folder of s/y")),
    { code: 1, message: "rhema: internal error: a result of s/x cannot go into the folder of s/y" });
  assert.deepEqual(describeFailure(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })),
    { code: 1, message: "rhema: internal error: socket hang up" }, "an errno error without a path is not the user's input");
  assert.deepEqual(describeFailure("a thrown string"), { code: 1, message: "rhema: internal error: a thrown string" });
  assert.deepEqual(describeFailure(null), { code: 1, message: "rhema: internal error: null" });
  assert.deepEqual(describeFailure(undefined), { code: 1, message: "rhema: internal error: undefined" });
});
