/**
 * A task's workspace: copied fresh from `workspace.from` (or empty), setup run once and marked
 * done, a failed setup not marked, a half-made workspace replaced. Real folders, real bash.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { loadTaskFile } from "../../../src/runner/tasks/task-file.js";
import { TaskFolder } from "../../../src/runner/run-dir/task-folder.js";
import type { TaskState } from "../../../src/runner/run-dir/task-state.js";
import { prepareWorkspace } from "../../../src/runner/execute/task-workspace.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

const runCommand = processCommandRunner({ baseEnv: { PATH: process.env.PATH } });
const FRESH: TaskState = { version: 1, contentHash: "h", setupDone: false, resumed: 0, startedAt: "2026-03-04T05:06:07.000Z", activeMs: 0 };
const noSignal = () => new AbortController().signal;

/** A suite folder with a fixture and a task; the setup log lies outside every workspace. */
async function suite(t: { after(fn: () => unknown): void }, workspaceYaml: string) {
  const root = await tempDir(t);
  const setupLog = join(root, "setup-runs.txt");
  await writeFiles(root, {
    "suite/fixture/README.md": "hello\n",
    "suite/fixture/src/app.js": "export const x = 1;\n",
    "suite/task.yaml": `prompt: do it\n${workspaceYaml.replaceAll("SETUP_LOG", setupLog)}`,
  });
  const task = await loadTaskFile(join(root, "suite", "task.yaml"));
  const folder = new TaskFolder(join(root, "run"), task);
  await folder.writeState(FRESH);
  return { root, task, folder, workspace: folder.workspace, setupRuns: async () => (await readFile(setupLog, "utf8").catch(() => "")).split("\n").filter(Boolean) };
}

const listing = async (dir: string) => (await readdir(dir, { recursive: true })).sort();

test("copies workspace.from fresh, runs the setup in it once, and marks the state set up", async (t) => {
  const { task, folder, workspace, setupRuns, root } = await suite(t, `workspace:
  from: fixture
  setup:
    - echo ran >> SETUP_LOG
    - test -f README.md && echo built > build.txt
`);
  await writeFiles(root, { "suite/fixture/link-target.txt": "t\n" });
  await symlink("link-target.txt", join(root, "suite/fixture/link"));
  const ready = await prepareWorkspace(task, folder, FRESH, { runCommand, signal: noSignal() });
  assert.deepEqual(ready, { ...FRESH, setupDone: true });
  assert.deepEqual(await folder.readState(), ready);
  assert.deepEqual(await listing(workspace), ["README.md", "build.txt", "link", "link-target.txt", "src", "src/app.js"]);
  assert.equal(await readlink(join(workspace, "link")), "link-target.txt", "symlinks are copied as they are");
  assert.equal(await readFile(join(workspace, "src/app.js"), "utf8"), "export const x = 1;\n");
  assert.deepEqual(await setupRuns(), ["ran"]);

  await writeFile(join(workspace, "agent-work.txt"), "kept\n");
  const again = await prepareWorkspace(task, folder, ready, { runCommand, signal: noSignal() });
  assert.deepEqual(again, ready);
  assert.deepEqual(await setupRuns(), ["ran"], "a finished setup is never repeated");
  assert.equal(await readFile(join(workspace, "agent-work.txt"), "utf8"), "kept\n", "nor is the workspace copied again");
});

test("makes an empty workspace when the task names no folder", async (t) => {
  const { task, folder, workspace } = await suite(t, "");
  assert.deepEqual(await prepareWorkspace(task, folder, FRESH, { runCommand, signal: noSignal() }), { ...FRESH, setupDone: true });
  assert.deepEqual(await listing(workspace), []);
});

test("a failing setup command is setup_failed with its output tail, and the state stays not set up", async (t) => {
  const { task, folder, setupRuns } = await suite(t, `workspace:
  setup:
    - echo ran >> SETUP_LOG
    - 'echo "error: missing dep" >&2; exit 7'
    - echo never >> SETUP_LOG
`);
  await assert.rejects(prepareWorkspace(task, folder, FRESH, { runCommand, signal: noSignal() }), (err: unknown) => {
    assert.ok(err instanceof RhemaError);
    assert.equal(err.code, "setup_failed");
    assert.equal(err.message, 'setup command `echo "error: missing dep" >&2; exit 7` exited 7:\nerror: missing dep\n');
    return true;
  });
  assert.deepEqual(await folder.readState(), FRESH);
  assert.deepEqual(await setupRuns(), ["ran"], "the commands after the failing one do not run");
});

test("a half-made workspace from an earlier attempt is replaced, and its setup run again", async (t) => {
  const { task, folder, workspace, setupRuns } = await suite(t, `workspace:
  from: fixture
  setup:
    - echo ran >> SETUP_LOG
`);
  await mkdir(join(workspace, "src"), { recursive: true });
  await writeFile(join(workspace, "src", "half-written.js"), "partial");
  await writeFile(join(workspace, "README.md"), "stale\n");
  const ready = await prepareWorkspace(task, folder, { ...FRESH, resumed: 1 }, { runCommand, signal: noSignal() });
  assert.deepEqual(ready, { ...FRESH, resumed: 1, setupDone: true });
  assert.deepEqual(await listing(workspace), ["README.md", "src", "src/app.js"]);
  assert.equal(await readFile(join(workspace, "README.md"), "utf8"), "hello\n");
  assert.deepEqual(await setupRuns(), ["ran"]);
});

test("an interrupt during setup is cancelled, not a setup failure, and leaves the state not set up", async (t) => {
  const { task, folder } = await suite(t, `workspace:
  setup:
    - sleep 30
`);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 150);
  await assert.rejects(prepareWorkspace(task, folder, FRESH, { runCommand, signal: controller.signal }), (err: unknown) =>
    err instanceof RhemaError && err.code === "cancelled");
  assert.deepEqual(await folder.readState(), FRESH);
});
