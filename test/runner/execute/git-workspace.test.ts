/**
 * Git workspaces (`workspace: {git, ref}`): cloned from the run's mirror at the ref's commit,
 * detached, self-contained (no alternates, no remote, no refs that show later commits); the ref
 * resolved on the trial's first run and recorded, so a resume checks out the recorded commit
 * though the branch moved; a missing ref is setup_failed naming the repository and the ref; the
 * snapshot after setup makes changes.patch show only the agent's change. Real repositories made
 * in the test (a path with spaces and unicode, and a file:// URL), real git, no network.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { access, mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { processCommandRunner } from "../../../src/runner/execute/command-runner.js";
import { GitMirrors } from "../../../src/runner/execute/git-mirror.js";
import { changesOf, changesPlace, prepareWorkspace } from "../../../src/runner/execute/task-workspace.js";
import { writeChangesPatch } from "../../../src/runner/execute/workspace-changes.js";
import { loadTaskFile } from "../../../src/runner/tasks/task-file.js";
import { TaskFolder } from "../../../src/runner/run-dir/task-folder.js";
import { freshTaskState, setupRetried, type TaskState } from "../../../src/runner/run-dir/task-state.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

const HOST_ENV = { PATH: process.env.PATH };
const AT = "2026-03-04T05:06:07.000Z";
const FRESH: TaskState = freshTaskState("h", AT);
const runCommand = processCommandRunner({ baseEnv: HOST_ENV });
const now = () => new Date(AT);

/** git with no config of the machine's, committing as a fixed author. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd, encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
  }).trim();
}

/** A repository at `dir` with commits one (tagged v1), two (main), and a branch `later` past main. */
async function makeRepo(dir: string): Promise<{ one: string; two: string; later: string }> {
  await writeFiles(dir, { "app.js": "export const x = 1;\n", "README.md": "hello\n" });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "one");
  git(dir, "tag", "-a", "v1", "-m", "release one");
  const one = git(dir, "rev-parse", "HEAD");
  await writeFile(join(dir, "app.js"), "export const x = 2;\n");
  git(dir, "commit", "-qam", "two");
  const two = git(dir, "rev-parse", "HEAD");
  git(dir, "checkout", "-qb", "later");
  await writeFile(join(dir, "solution.txt"), "the answer\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "the solution");
  const later = git(dir, "rev-parse", "HEAD");
  git(dir, "checkout", "-q", "main");
  return { one, two, later };
}

async function gitTask(t: { after(fn: () => unknown): void }, workspaceYaml: string) {
  const root = await tempDir(t);
  const repo = join(root, "my repo ünï");
  const commits = await makeRepo(repo);
  await writeFiles(root, { "suite/task.yaml": `prompt: do it\nworkspace:\n${workspaceYaml}` });
  const task = await loadTaskFile(join(root, "suite", "task.yaml"));
  const runDir = join(root, "run");
  const folder = new TaskFolder(runDir, task);
  await folder.writeState(FRESH);
  return { root, repo, commits, task, folder, runDir };
}

const opts = (extra: object = {}) => ({ runCommand, signal: new AbortController().signal, now, hostEnv: HOST_ENV, ...extra });

test("clones a path with spaces and unicode at a tag: detached at its commit, recorded, no later commit or ref in sight, no alternates", async (t) => {
  const { folder, task, commits, runDir } = await gitTask(t, `  git: "../my repo ünï"\n  ref: v1\n  setup: ["echo built > build.txt"]\n`);
  const book = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, book, opts());
  const ws = folder.workspace;
  assert.equal(book.current.gitCommit, commits.one);
  assert.equal(book.current.setupDone, true);
  assert.equal(git(ws, "rev-parse", "HEAD"), commits.one);
  assert.throws(() => git(ws, "symbolic-ref", "-q", "HEAD"), "HEAD is detached");
  assert.equal(await readFile(join(ws, "app.js"), "utf8"), "export const x = 1;\n");
  assert.deepEqual(git(ws, "log", "--all", "--format=%s").split("\n"), ["one"], "no later commit shows");
  assert.equal(git(ws, "for-each-ref"), "", "no branch, tag or remote ref");
  assert.equal(git(ws, "remote"), "");
  assert.equal(git(ws, "status", "--porcelain"), "?? build.txt");
  await assert.rejects(access(join(ws, ".git", "objects", "info", "alternates")), "objects live in the workspace");
  assert.deepEqual(await readdir(join(runDir, "git-mirrors")), [(await readdir(join(runDir, "git-mirrors")))[0]]);
  assert.match((await readdir(join(runDir, "git-mirrors")))[0]!, /^[0-9a-f]{24}\.git$/);
});

test("a SHA, and a file:// URL through a mirror, check out that commit", async (t) => {
  const root = await tempDir(t);
  const repo = join(root, "upstream");
  const { two } = await makeRepo(repo);
  await writeFiles(root, { "suite/task.yaml": `prompt: do it\nworkspace: { git: "file://${repo}", ref: "${two.slice(0, 12)}" }\n` });
  const task = await loadTaskFile(join(root, "suite", "task.yaml"));
  assert.deepEqual(task.workspace.git, { kind: "url", url: `file://${repo}`, ref: two.slice(0, 12) });
  const folder = new TaskFolder(join(root, "run"), task);
  const book = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, book, opts());
  assert.equal(book.current.gitCommit, two);
  assert.equal(git(folder.workspace, "rev-parse", "HEAD"), two);
  assert.equal(await readFile(join(folder.workspace, "app.js"), "utf8"), "export const x = 2;\n");
});

test("a resume checks out the recorded commit though the branch moved; a fresh trial (--restart) resolves it anew", async (t) => {
  const { folder, task, commits, repo, runDir } = await gitTask(t, `  git: "../my repo ünï"\n  ref: main\n`);
  const book = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, book, opts({ gitMirrors: new GitMirrors(join(runDir, "git-mirrors"), HOST_ENV) }));
  assert.equal(book.current.gitCommit, commits.two);

  await writeFile(join(repo, "app.js"), "export const x = 3;\n");
  git(repo, "commit", "-qam", "three");
  const three = git(repo, "rev-parse", "HEAD");

  // A later process (a resume, or --retry-errored after a failed setup) makes the workspace again: same commit.
  const resumed = folder.stateBook(setupRetried(book.current));
  await prepareWorkspace(task, folder, resumed, opts({ gitMirrors: new GitMirrors(join(runDir, "git-mirrors"), HOST_ENV) }));
  assert.equal(resumed.current.gitCommit, commits.two);
  assert.equal(git(folder.workspace, "rev-parse", "HEAD"), commits.two);

  // A trial started afresh in that later process sees the branch where it is now (the mirror was fetched).
  const restarted = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, restarted, opts({ gitMirrors: new GitMirrors(join(runDir, "git-mirrors"), HOST_ENV) }));
  assert.equal(restarted.current.gitCommit, three);
  assert.equal(await readFile(join(folder.workspace, "app.js"), "utf8"), "export const x = 3;\n");
});

test("a ref that does not exist is setup_failed naming the repository and the ref, nothing recorded", async (t) => {
  const { folder, task, repo } = await gitTask(t, `  git: "../my repo ünï"\n  ref: no-such-branch\n`);
  const book = folder.stateBook(FRESH);
  await assert.rejects(prepareWorkspace(task, folder, book, opts()), (err: unknown) => {
    assert.ok(err instanceof RhemaError);
    assert.equal(err.code, "setup_failed");
    assert.equal(err.message, `workspace.git: ref "no-such-branch" was not found in ${repo}: name a commit SHA, branch or tag of that repository`);
    return true;
  });
  assert.equal(book.current.gitCommit, null);
  assert.equal(book.current.workspaceCopied, false);
});

test("changes.patch of a git workspace shows only the agent's change, not its .git nor its commits", async (t) => {
  const { folder, task } = await gitTask(t, `  git: "../my repo ünï"\n  ref: main\n  setup: ["echo made > setup.txt"]\n`);
  const book = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, book, opts({ snapshotEnv: HOST_ENV }));
  assert.ok(book.current.changesBase && "tree" in book.current.changesBase);
  const ws = folder.workspace;
  await writeFile(join(ws, "app.js"), "export const x = 42;\n");
  git(ws, "commit", "-qam", "agent's commit");
  let written: Buffer = Buffer.alloc(0);
  const changes = await writeChangesPatch(changesPlace(folder, HOST_ENV), book.current.changesBase!, changesOf(task), {
    path: folder.path("changes"), relativePath: "changes.patch", redact: (text) => text, write: async (bytes) => void (written = bytes),
  });
  assert.deepEqual({ files: changes.path === null ? null : changes.files }, { files: 1 });
  assert.equal(written.toString("utf8"), [
    "diff --git a/app.js b/app.js", "index 25dfdc4..310d105 100644", "--- a/app.js", "+++ b/app.js", "@@ -1 +1 @@",
    "-export const x = 2;", "+export const x = 42;", "",
  ].join("\n"));
});

test("trials that start together share one mirror, made once", async (t) => {
  const { task, commits, runDir } = await gitTask(t, `  git: "../my repo ünï"\n  ref: main\n`);
  const mirrors = new GitMirrors(join(runDir, "git-mirrors"), HOST_ENV);
  const folders = [1, 2, 3].map((repeat) => new TaskFolder(runDir, { suite: task.suite, id: task.id, variant: null, repeat }));
  const books = folders.map((folder) => folder.stateBook(FRESH));
  await Promise.all(folders.map(async (folder, i) => {
    await folder.writeState(FRESH);
    await prepareWorkspace(task, folder, books[i]!, opts({ gitMirrors: mirrors }));
  }));
  assert.deepEqual(books.map((b) => b.current.gitCommit), [commits.two, commits.two, commits.two]);
  assert.deepEqual(folders.map((f) => git(f.workspace, "rev-parse", "HEAD")), [commits.two, commits.two, commits.two]);
  assert.equal((await readdir(join(runDir, "git-mirrors"))).length, 1, "one mirror, no temp left");
});

test("a resume whose source is gone (offline) still clones the recorded commit from the mirror; a half-made mirror is made again", async (t) => {
  const { folder, task, commits, repo, runDir } = await gitTask(t, `  git: "../my repo ünï"\n  ref: main\n`);
  const mirrorsDir = join(runDir, "git-mirrors");
  const book = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, book, opts({ gitMirrors: new GitMirrors(mirrorsDir, HOST_ENV) }));
  const [mirror] = await readdir(mirrorsDir);
  await rm(repo, { recursive: true, force: true });
  const resumed = folder.stateBook(setupRetried(book.current));
  await prepareWorkspace(task, folder, resumed, opts({ gitMirrors: new GitMirrors(mirrorsDir, HOST_ENV) }));
  assert.equal(git(folder.workspace, "rev-parse", "HEAD"), commits.two);

  // A kill while the mirror was cloned leaves its temp folder: the next run clones afresh over it.
  await rm(join(mirrorsDir, mirror!), { recursive: true });
  await mkdir(join(mirrorsDir, `${mirror!}.tmp`, "objects"), { recursive: true });
  await makeRepo(repo);
  const fresh = folder.stateBook(FRESH);
  await prepareWorkspace(task, folder, fresh, opts({ gitMirrors: new GitMirrors(mirrorsDir, HOST_ENV) }));
  assert.equal(git(folder.workspace, "log", "-1", "--format=%s"), "two");
  assert.deepEqual(await readdir(mirrorsDir), [mirror]);
});
