/** How an error that ends a command reaches the user: its exit code and one message, no stack. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { EXIT_INVALID_INPUT, EXIT_TASK_FAILED, describeFailure } from "../../src/cli/exit-codes.js";
import { CancelledError, RhemaError } from "../../src/core/errors.js";
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
  assert.deepEqual(describeFailure(new CancelledError()), { code: 2, message: "rhema: the turn was cancelled" });
});

test("a file-system error is invalid input naming the path", async (t) => {
  const missing = join(await tempDir(t), "nope.yaml");
  const err = await readFile(missing).catch((e: unknown) => e);
  assert.deepEqual(describeFailure(err), { code: EXIT_INVALID_INPUT, message: `rhema: ENOENT: no such file or directory, open '${missing}'` });
});

test("anything else is an internal error (exit 1), said plainly, without a stack", () => {
  const bug = new TypeError("cannot read properties of undefined (reading 'id')");
  assert.deepEqual(describeFailure(bug), { code: EXIT_TASK_FAILED, message: "rhema: internal error: cannot read properties of undefined (reading 'id')" });
  assert.deepEqual(describeFailure(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })),
    { code: 1, message: "rhema: internal error: socket hang up" }, "an errno error without a path is not the user's input");
  assert.deepEqual(describeFailure("a thrown string"), { code: 1, message: "rhema: internal error: a thrown string" });
  assert.deepEqual(describeFailure(null), { code: 1, message: "rhema: internal error: null" });
  assert.deepEqual(describeFailure(undefined), { code: 1, message: "rhema: internal error: undefined" });
});
