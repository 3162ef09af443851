/** task-state.json: written and read back whole; missing is null; anything else is a clear error. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { RhemaError } from "../../../src/core/errors.js";
import { StateFileError } from "../../../src/runner/run-dir/state-file.js";
import { TaskFolder } from "../../../src/runner/run-dir/task-folder.js";
import { checkFinished, checkStarted, freshTaskState, setupFinished, setupStarted, type TaskState } from "../../../src/runner/run-dir/task-state.js";
import { tempDir } from "../../support/temp-dir.js";

const STATE: TaskState = {
  version: 1, contentHash: "ab12", setupDone: true, resumed: 2, startedAt: "2026-03-04T05:06:07.000Z", activeMs: 0,
  workspaceCopied: true, layer: { base: "0123456789abcdef01234567", mechanism: "overlay" }, gitCommit: "0123456789abcdef0123456789abcdef01234567", changesBase: { tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904" }, changes: null, setup: [{ status: "done", command: "npm ci", startedAt: "2026-03-04T05:06:08.000Z", finishedAt: "2026-03-04T05:06:09.000Z", attempt: 1 }],
  checks: [{ status: "started", name: "unit", startedAt: "2026-03-04T05:06:10.000Z", attempt: 2 }], interruptedSpent: null,
};

async function folderIn(t: { after(fn: () => unknown): void }): Promise<TaskFolder> {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "a" });
  await mkdir(folder.dir, { recursive: true });
  return folder;
}

test("reads back the state it wrote, 0600", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "a" });
  await folder.writeState(STATE);
  assert.deepEqual(await folder.readState(), STATE);
  assert.equal((await stat(folder.path("state"))).mode & 0o777, 0o600);
});

test("a folder without a state file has no state", async (t) => {
  assert.equal(await (await folderIn(t)).readState(), null);
  assert.equal(await new TaskFolder(await tempDir(t), { suite: "not", id: "made" }).readState(), null);
});

for (const [what, text] of [
  ["not JSON", "{torn"],
  ["nothing in it", ""],
  ["another version", JSON.stringify({ ...STATE, version: 2 })],
  ["an unknown key", JSON.stringify({ ...STATE, extra: 1 })],
  ["a negative resume count", JSON.stringify({ ...STATE, resumed: -1 })],
] as const) {
  test(`a state file with ${what} is state_invalid, naming the file and the way out`, async (t) => {
    const folder = await folderIn(t);
    const path = folder.path("state");
    await writeFile(path, text);
    await assert.rejects(folder.readState(), (err: unknown) =>
      err instanceof StateFileError && err.code === "state_invalid" && err.path === path &&
      err.message.startsWith(`${path}: not a rhema task state (`) && /remove the task's folder/.test(err.message));
  });
}

test("a state path that is a folder is state_invalid, not a nameless errno", async (t) => {
  const folder = await folderIn(t);
  await mkdir(folder.path("state"));
  await assert.rejects(folder.readState(), (err: unknown) =>
    err instanceof RhemaError && err.code === "state_invalid" && err.message.startsWith(`${folder.path("state")}: cannot read (EISDIR`));
});

test("a state written before activeMs and the step records existed reads with their defaults", async (t) => {
  const folder = await folderIn(t);
  const { activeMs: _a, workspaceCopied: _w, setup: _s, checks: _c, ...older } = STATE;
  await writeFile(folder.path("state"), JSON.stringify(older));
  assert.deepEqual(await folder.readState(), { ...older, activeMs: 0, workspaceCopied: false, setup: [], checks: [] });
});

test("a setup record with an unknown status is state_invalid", async (t) => {
  const folder = await folderIn(t);
  await writeFile(folder.path("state"), JSON.stringify({ ...STATE, setup: [{ ...STATE.setup[0], status: "maybe" }] }));
  await assert.rejects(folder.readState(), (err: unknown) => err instanceof StateFileError && /setup\.0\.status/.test(err.message));
});

test("step records: a started one counts its attempt on; done keeps when it started; a stray finish changes nothing", () => {
  const fresh = freshTaskState("h", "t0");
  const once = setupStarted(fresh, 0, "npm ci", "t1");
  const again = setupStarted(once, 0, "npm ci", "t2");
  assert.deepEqual(again.setup, [{ status: "started", command: "npm ci", startedAt: "t2", attempt: 2 }]);
  assert.deepEqual(setupFinished(again, 0, "t3").setup, [{ status: "done", command: "npm ci", startedAt: "t2", finishedAt: "t3", attempt: 2 }]);
  assert.equal(setupFinished(fresh, 0, "t3"), fresh);
  const outcome = { name: "unit", command: "true", exitCode: 0, passed: true, durationMs: 4, outputTail: "", timedOut: false };
  const checked = checkFinished(checkStarted(fresh, 0, "unit", "t4"), 0, outcome);
  assert.deepEqual(checked.checks, [{ status: "done", name: "unit", startedAt: "t4", attempt: 1, outcome }]);
  assert.equal(checkFinished(checked, 0, outcome), checked, "a done check is not finished twice");
});
