/** task-state.json: written and read back whole; missing is null; anything else is a clear error. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { TASK_STATE_FILE, readTaskState, writeTaskState, type TaskState } from "../../../src/runner/run-dir/task-state.js";
import { tempDir } from "../../support/temp-dir.js";

const STATE: TaskState = { version: 1, contentHash: "ab12", setupDone: true, resumed: 2, startedAt: "2026-03-04T05:06:07.000Z", activeMs: 0 };

test("reads back the state it wrote, 0600", async (t) => {
  const taskDir = join(await tempDir(t), "tasks", "s", "a");
  await writeTaskState(taskDir, STATE);
  assert.deepEqual(await readTaskState(taskDir), STATE);
  assert.equal((await stat(join(taskDir, TASK_STATE_FILE))).mode & 0o777, 0o600);
});

test("a folder without a state file has no state", async (t) => {
  assert.equal(await readTaskState(await tempDir(t)), null);
  assert.equal(await readTaskState(join(await tempDir(t), "not-made")), null);
});

for (const [what, text] of [
  ["not JSON", "{torn"],
  ["another version", JSON.stringify({ ...STATE, version: 2 })],
  ["an unknown key", JSON.stringify({ ...STATE, extra: 1 })],
  ["a negative resume count", JSON.stringify({ ...STATE, resumed: -1 })],
] as const) {
  test(`a state file with ${what} is an error naming the file`, async (t) => {
    const taskDir = await tempDir(t);
    const path = join(taskDir, TASK_STATE_FILE);
    await writeFile(path, text);
    await assert.rejects(readTaskState(taskDir), (err: unknown) =>
      err instanceof RhemaError && err.code === "session_invalid" && err.message.startsWith(`${path}: not a rhema task state`) && /remove the task's folder/.test(err.message));
  });
}

test("a state written before activeMs existed reads with activeMs 0", async (t) => {
  const dir = await tempDir(t);
  const { activeMs: _omitted, ...older } = STATE;
  await writeFile(join(dir, TASK_STATE_FILE), JSON.stringify(older));
  assert.deepEqual(await readTaskState(dir), { ...older, activeMs: 0 });
});
