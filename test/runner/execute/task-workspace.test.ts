/**
 * A task's workspace: copied fresh from `workspace.from` (or empty), setup run once and marked
 * done, a failed setup not marked, a half-made workspace replaced; each setup command recorded
 * before and after it runs, so a resume never repeats a finished one and runs the interrupted
 * one again on the workspace as it is. Real folders, real bash.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { loadTaskFile } from "../../../src/runner/tasks/task-file.js";
import { TaskFolder } from "../../../src/runner/run-dir/task-folder.js";
import { freshTaskState, type TaskState } from "../../../src/runner/run-dir/task-state.js";
import type { RunnerEvent } from "../../../src/runner/run-dir/runner-events.js";
import { prepareWorkspace } from "../../../src/runner/execute/task-workspace.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

const runCommand = processCommandRunner({ baseEnv: { PATH: process.env.PATH } });
const AT = "2026-03-04T05:06:07.000Z";
const FRESH: TaskState = freshTaskState("h", AT);
const noSignal = () => new AbortController().signal;
const now = () => new Date(AT);
const opts = (signal = noSignal(), events: RunnerEvent[] = []) => ({ runCommand, signal, now, onEvent: (e: RunnerEvent) => void events.push(e) });

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
  return { root, task, folder, book: folder.stateBook(FRESH), workspace: folder.workspace, setupRuns: async () => (await readFile(setupLog, "utf8").catch(() => "")).split("\n").filter(Boolean) };
}

const listing = async (dir: string) => (await readdir(dir, { recursive: true })).sort();

test("copies workspace.from fresh, runs the setup in it once, and marks the state set up", async (t) => {
  const { task, folder, book, workspace, setupRuns, root } = await suite(t, `workspace:
  from: fixture
  setup:
    - echo ran >> SETUP_LOG
    - test -f README.md && echo built > build.txt
`);
  await writeFiles(root, { "suite/fixture/link-target.txt": "t\n" });
  await symlink("link-target.txt", join(root, "suite/fixture/link"));
  await prepareWorkspace(task, folder, book, opts());
  const ready = book.current;
  assert.deepEqual(ready, {
    ...FRESH, setupDone: true, workspaceCopied: true,
    setup: task.workspace.setup.map((command) => ({ status: "done", command, startedAt: AT, finishedAt: AT, attempt: 1 })),
  });
  assert.deepEqual(await folder.readState(), ready);
  assert.deepEqual(await listing(workspace), ["README.md", "build.txt", "link", "link-target.txt", "src", "src/app.js"]);
  assert.equal(await readlink(join(workspace, "link")), "link-target.txt", "symlinks are copied as they are");
  assert.equal(await readFile(join(workspace, "src/app.js"), "utf8"), "export const x = 1;\n");
  assert.deepEqual(await setupRuns(), ["ran"]);

  await writeFile(join(workspace, "agent-work.txt"), "kept\n");
  await prepareWorkspace(task, folder, book, opts());
  assert.deepEqual(book.current, ready);
  assert.deepEqual(await setupRuns(), ["ran"], "a finished setup is never repeated");
  assert.equal(await readFile(join(workspace, "agent-work.txt"), "utf8"), "kept\n", "nor is the workspace copied again");
});

test("makes an empty workspace when the task names no folder", async (t) => {
  const { task, folder, book, workspace } = await suite(t, "");
  await prepareWorkspace(task, folder, book, opts());
  assert.deepEqual(book.current, { ...FRESH, setupDone: true, workspaceCopied: true });
  assert.deepEqual(await listing(workspace), []);
});

test("a failing setup command is setup_failed with its output tail, and the state stays not set up", async (t) => {
  const { task, folder, book, setupRuns } = await suite(t, `workspace:
  setup:
    - echo ran >> SETUP_LOG
    - 'echo "error: missing dep" >&2; exit 7'
    - echo never >> SETUP_LOG
`);
  await assert.rejects(prepareWorkspace(task, folder, book, opts()), (err: unknown) => {
    assert.ok(err instanceof RhemaError);
    assert.equal(err.code, "setup_failed");
    assert.equal(err.message, 'setup command `echo "error: missing dep" >&2; exit 7` exited 7:\nerror: missing dep\n');
    return true;
  });
  assert.deepEqual(await folder.readState(), {
    ...FRESH, workspaceCopied: true,
    setup: [{ status: "done", command: task.workspace.setup[0]!, startedAt: AT, finishedAt: AT, attempt: 1 },
      { status: "started", command: 'echo "error: missing dep" >&2; exit 7', startedAt: AT, attempt: 1 }],
  });
  assert.deepEqual(await setupRuns(), ["ran"], "the commands after the failing one do not run");
});

test("a half-made workspace from an earlier attempt is replaced, and its setup run again", async (t) => {
  const { task, folder, workspace, setupRuns } = await suite(t, `workspace:
  from: fixture
  setup:
    - echo ran >> SETUP_LOG
`);
  const book = folder.stateBook({ ...FRESH, resumed: 1 });
  await mkdir(join(workspace, "src"), { recursive: true });
  await writeFile(join(workspace, "src", "half-written.js"), "partial");
  await writeFile(join(workspace, "README.md"), "stale\n");
  await prepareWorkspace(task, folder, book, opts());
  assert.equal(book.current.setupDone, true);
  assert.deepEqual(await listing(workspace), ["README.md", "src", "src/app.js"]);
  assert.equal(await readFile(join(workspace, "README.md"), "utf8"), "hello\n");
  assert.deepEqual(await setupRuns(), ["ran"]);
});

test("an interrupt during setup is cancelled, not a setup failure, and leaves the state not set up", async (t) => {
  const { task, folder, book } = await suite(t, `workspace:
  setup:
    - sleep 30
`);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 150);
  await assert.rejects(prepareWorkspace(task, folder, book, opts(controller.signal)), (err: unknown) =>
    err instanceof RhemaError && err.code === "cancelled");
  assert.deepEqual(await folder.readState(), { ...FRESH, workspaceCopied: true, setup: [{ status: "started", command: "sleep 30", startedAt: AT, attempt: 1 }] });
});

test("resumes an interrupted setup: the workspace kept as it is, the interrupted command run again (and said so), then the rest; a finished one never again", async (t) => {
  const { task, folder, workspace, setupRuns } = await suite(t, `workspace:
  from: fixture
  setup:
    - echo one >> SETUP_LOG
    - echo two >> SETUP_LOG
    - echo three >> SETUP_LOG
`);
  const [first, second] = task.workspace.setup as [string, string, string];
  // As a run killed inside the second command leaves it: the copy made, one done, one started.
  const book = folder.stateBook({
    ...FRESH, workspaceCopied: true,
    setup: [{ status: "done", command: first, startedAt: AT, finishedAt: AT, attempt: 1 }, { status: "started", command: second, startedAt: AT, attempt: 1 }],
  });
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, "made-by-setup.txt"), "partial\n");
  const events: RunnerEvent[] = [];
  await prepareWorkspace(task, folder, book, opts(noSignal(), events));
  assert.deepEqual(await setupRuns(), ["two", "three"]);
  assert.deepEqual(await listing(workspace), ["made-by-setup.txt"], "the workspace is not copied again");
  assert.deepEqual(events.filter((e) => e.type === "setup_start"), [
    { type: "setup_start", index: 1, total: 3, command: second, rerun: "interrupted" },
    { type: "setup_start", index: 2, total: 3, command: task.workspace.setup[2], rerun: null },
  ]);
  assert.deepEqual(book.current.setup.map((r) => [r.status, r.attempt]), [["done", 1], ["done", 2], ["done", 1]]);
  assert.equal(book.current.setupDone, true);
});

test("each setup command is on disk as started before it runs", async (t) => {
  const { task, folder, book, setupRuns } = await suite(t, `workspace:
  setup:
    - grep -c '^ *.status....started' ../task-state.json >> SETUP_LOG
    - grep -c '^ *.status....done' ../task-state.json >> SETUP_LOG
`);
  await prepareWorkspace(task, folder, book, opts());
  assert.deepEqual(await setupRuns(), ["1", "1"], "the running command's record, and the finished one's");
});
