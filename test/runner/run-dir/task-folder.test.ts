/**
 * A task's folder: its layout, its result and state read back validated (a bad file named), a
 * name that would climb out refused, and a write the file system refuses an OutputError naming
 * the file and the operation.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { OutputError, RhemaError } from "../../../src/core/errors.js";
import { newSession } from "../../../src/core/session.js";
import { SecretRedactor } from "../../../src/runner/run-dir/secret-redactor.js";
import { TaskFolder } from "../../../src/runner/run-dir/task-folder.js";
import { TaskResultFileError } from "../../../src/runner/run-dir/task-result.js";
import { freshTaskState } from "../../../src/runner/run-dir/task-state.js";
import { tempDir } from "../../support/temp-dir.js";
import { sampleResult } from "../sample-results.js";

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

test("lays out a trial in tasks/<suite>/<id>/<variant|default>/<n>/ with its workspace and files, relative paths /-separated", () => {
  const layout = (folder: TaskFolder) => ({
    dir: folder.dir, workspace: folder.workspace, files: (["session", "journal", "state", "events", "result"] as const).map((f) => folder.path(f)), transcript: folder.relativePath("events"),
  });
  const files = ["session.json", "session.journal.jsonl", "task-state.json", "events.jsonl", "result.json"];
  assert.deepEqual(layout(new TaskFolder("/runs/r", { suite: "arith", id: "fix-add", variant: null, repeat: 3 })), {
    dir: "/runs/r/tasks/arith/fix-add/default/3",
    workspace: "/runs/r/tasks/arith/fix-add/default/3/workspace",
    files: files.map((f) => `/runs/r/tasks/arith/fix-add/default/3/${f}`),
    transcript: "tasks/arith/fix-add/default/3/events.jsonl",
  });
  assert.equal(new TaskFolder("/runs/r", { suite: "arith", id: "fix-add", variant: "model=sonnet", repeat: 1 }).dir, "/runs/r/tasks/arith/fix-add/model=sonnet/1");
  // A run directory made before trials (layout 1): one folder per task, read by reports, merge and replay.
  assert.deepEqual(layout(new TaskFolder("/runs/r", { suite: "arith", id: "fix-add" })), {
    dir: "/runs/r/tasks/arith/fix-add",
    workspace: "/runs/r/tasks/arith/fix-add/workspace",
    files: files.map((f) => `/runs/r/tasks/arith/fix-add/${f}`),
    transcript: "tasks/arith/fix-add/events.jsonl",
  });
});

for (const name of ["", ".", "..", "a/b", "..\\up"]) {
  test(`refuses ${JSON.stringify(name)} as a suite or id: it would not be one folder`, () => {
    assert.throws(() => new TaskFolder("/runs/r", { suite: name, id: "x" }), (err: unknown) => err instanceof RhemaError && err.code === "invalid_input" && err.message.includes(`got "${name}"`));
    assert.throws(() => new TaskFolder("/runs/r", { suite: "s", id: name }), RhemaError);
  });
}

test("a written result reads back whole, 0600 in 0700 folders; no result yet is null", async (t) => {
  const runDir = await tempDir(t);
  const folder = new TaskFolder(runDir, { suite: "arithmetic", id: "fix-add", variant: null, repeat: 1 });
  assert.equal(await folder.readResult(), null);
  const result = { ...sampleResult("arithmetic", "fix-add", "failed", 2), trial: { repeat: 1, variant: null } };
  const path = await folder.writeResult(result);
  assert.equal(path, join(runDir, "tasks/arithmetic/fix-add/default/1/result.json"));
  assert.deepStrictEqual(await folder.readResult(), result);
  assert.equal(await modeOf(path), 0o600);
  assert.equal(await modeOf(folder.dir), 0o700);
  assert.equal(await modeOf(join(runDir, "tasks")), 0o700);
  await folder.removeResult();
  assert.equal(await folder.readResult(), null);
});

test("a corrupt result, or another task's, is an error naming the file", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  await mkdir(folder.dir, { recursive: true });
  await writeFile(folder.path("result"), '{"version": 1, "suite": ');
  await assert.rejects(folder.readResult(), (err: unknown) =>
    err instanceof TaskResultFileError && err.path === folder.path("result") && err.message.startsWith(`${folder.path("result")}: not valid JSON`));
  await writeFile(folder.path("result"), JSON.stringify(sampleResult("other", "x", "passed")));
  await assert.rejects(folder.readResult(), (err: unknown) => err instanceof TaskResultFileError && /holds other\/x, not s\/x/.test(err.message));
  await assert.rejects(folder.writeResult(sampleResult("other", "x", "passed")), (err: unknown) => err instanceof RhemaError && err.code === "internal");
});

test("a result path that is a folder is an invalid result (exit 2), not a crash", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  await mkdir(folder.path("result"), { recursive: true });
  await assert.rejects(folder.readResult(), (err: unknown) =>
    err instanceof TaskResultFileError && err.message.startsWith(`${folder.path("result")}: cannot read: EISDIR`));
});

test("an inconsistent result is refused and nothing is written", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  const { error: _error, ...erroredWithoutError } = sampleResult("s", "x", "errored");
  await assert.rejects(folder.writeResult(erroredWithoutError), TaskResultFileError);
  await assert.rejects(readFile(folder.path("result")), { code: "ENOENT" });
});

test("a write the file system refuses is an OutputError naming the file and the operation", async (t) => {
  const root = await tempDir(t);
  await writeFile(join(root, "run"), "a file where the run directory should be");
  const folder = new TaskFolder(join(root, "run"), { suite: "s", id: "x" });
  const refused = (path: string, operation: string) => (err: unknown) =>
    err instanceof OutputError && err.code === "output_failed" && err.errno === "ENOTDIR" && err.path === path && err.operation === operation &&
    err.message === `cannot ${operation} ${path}: a part of the path is a file, not a folder (ENOTDIR); choose another --out or report path, then run the same command to continue`;
  await assert.rejects(folder.writeResult(sampleResult("s", "x", "passed")), refused(folder.path("result"), "write"));
  await assert.rejects(folder.writeState(freshTaskState("h", "2026-03-04T05:06:07.000Z")), refused(folder.path("state"), "write"));
  await assert.rejects(folder.openEventLog(new SecretRedactor({}), () => {}, () => new Date()), refused(folder.path("events"), "append to"));
  await assert.rejects(folder.resetWorkspace(null), refused(folder.workspace, "remove"));
  await assert.rejects(folder.openCheckpoint().hook({ boundary: "input", session: newSession("s", new Date()), sections: [], stats: null }),
    (err: unknown) => err instanceof OutputError && err.errno === "ENOTDIR" && err.operation === "write");
});

test("the checkpoint lives in the folder under its own names", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  const checkpoint = folder.openCheckpoint();
  assert.equal(await checkpoint.load(), null);
  const session = { ...newSession("s1", new Date()), messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }] };
  await checkpoint.hook({ boundary: "input", session, sections: [], stats: null });
  await checkpoint.close();
  assert.equal(JSON.parse(await readFile(folder.path("session"), "utf8")).id, "s1");
  assert.equal(await modeOf(folder.path("journal")), 0o600);
  assert.deepEqual((await folder.openCheckpoint().load())?.messages, session.messages);
});

test("a commit whose bookkeeping fails fails before its boundary is on disk: the checkpoint still says the boundary before", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  const say = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] });
  let refuse = false;
  const checkpoint = folder.openCheckpoint({}, async () => {
    if (refuse) throw Object.assign(new Error("EMFILE: too many open files, open 'task-state.json'"), { code: "EMFILE" });
  });
  const session = { ...newSession("s1", new Date()), messages: [say("one")] };
  await checkpoint.hook({ boundary: "input", session, sections: [], stats: null });
  session.messages.push(say("two"));
  refuse = true;
  await assert.rejects(checkpoint.hook({ boundary: "result", session, sections: [], stats: null }), /EMFILE/);
  await checkpoint.close();
  // Had the boundary been written before the failure, the engine (which undoes it: a call recorded as
  // started is discarded, never run) and the disk (which says it started) would disagree.
  assert.deepEqual((await folder.openCheckpoint().load())?.messages, [say("one")]);
});

test("temp files of atomic writes a killed run left in the folder are removed, and nothing else", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  await mkdir(join(folder.workspace), { recursive: true });
  const left = ["task-state.json.2841983345", "session.json.17", "result.json.99", "final-answer.txt.5"];
  const kept = ["task-state.json", "notes.json.17", "session.json.bak", "session.json.12a", "workspace"];
  for (const name of [...left, ...kept]) if (name !== "workspace") await writeFile(join(folder.dir, name), "x");
  await writeFile(join(folder.workspace, "session.json.17"), "the agent's file, not ours");
  assert.deepEqual(await folder.removeStaleTemps(), [...left].sort());
  assert.deepEqual((await readdir(folder.dir)).sort(), [...kept].sort());
  assert.deepEqual(await readdir(folder.workspace), ["session.json.17"]);
  assert.deepEqual(await new TaskFolder(await tempDir(t), { suite: "no", id: "folder" }).removeStaleTemps(), []);
});

test("the state book writes each change whole on top of the latest one", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  const book = folder.stateBook(freshTaskState("h", "2026-03-04T05:06:07.000Z"));
  await Promise.all([book.update((s) => ({ ...s, resumed: s.resumed + 1 })), book.update((s) => ({ ...s, activeMs: 5 }))]);
  assert.deepEqual(book.current, { ...freshTaskState("h", "2026-03-04T05:06:07.000Z"), resumed: 1, activeMs: 5 });
  assert.deepEqual(await folder.readState(), book.current);
});

test("the final answer is written 0600 beside the workspace, not in it", async (t) => {
  const folder = new TaskFolder(await tempDir(t), { suite: "s", id: "x" });
  const path = await folder.writeFinalAnswer("All done: 42.");
  assert.equal(path, join(folder.dir, "final-answer.txt"));
  assert.equal(await readFile(path, "utf8"), "All done: 42.");
  assert.equal((await stat(path)).mode & 0o777, 0o600);
});
