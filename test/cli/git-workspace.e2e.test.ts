/**
 * A git workspace through the built CLI in the bubblewrap sandbox: the source repository lies
 * under /tmp and the mirror in the run directory, both hidden inside the sandbox, yet git works
 * there (log, status, commit) on the workspace alone; the agent sees no later commit; the trial's
 * state records the commit; changes.patch holds the agent's change and nothing of `.git`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { sandboxSkip } from "../process/sandbox-fixture.js";

const skip = await sandboxSkip();

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd, encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
  }).trim();
}

const POLICY = `version: 1
default: deny
rules:
  - allow: { tools: [read_file, list_dir, glob, grep] }
  - allow: { shell: ["git *", "echo *", "test *"] }
  - allow: { paths: ["**"] }
`;

const TASK = `prompt: Change the readme.
policy: policy.yaml
workspace: { git: "../my repo ünï", ref: v2 }
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "git log --all --format=%s > seen.txt && git status --porcelain >> seen.txt && echo changed >> README.md && git -c user.name=a -c user.email=a@b commit -qam agent" }
    - say: done
checks:
  - { name: git works in the sandbox, run: 'test "$(git rev-list --count HEAD)" = 3 && test "$(git log -1 --format=%s)" = agent' }
  - { name: no later commit in sight, run: 'test "$(cat seen.txt)" = "$(printf "two\\none\\n?? seen.txt")"' }
  - { name: the patch has the change, run: 'grep -q "^+changed$" "$RHEMA_CHANGES" && ! grep -q "\\.git/" "$RHEMA_CHANGES"' }
`;

test("a git workspace in the sandbox: git works without the source or the mirror mounted; the commit recorded; the patch only the agent's", { skip }, async (t) => {
  const root = await tempDir(t);
  const repo = join(root, "my repo ünï");
  await writeFiles(repo, { "README.md": "hello\n" });
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "one");
  await writeFile(join(repo, "README.md"), "hello again\n");
  git(repo, "commit", "-qam", "two");
  git(repo, "tag", "v2");
  const two = git(repo, "rev-parse", "HEAD");
  await writeFile(join(repo, "README.md"), "the future\n");
  git(repo, "commit", "-qam", "three");
  await writeFiles(root, { "suite/task.yaml": TASK, "suite/policy.yaml": POLICY });
  const out = join(root, "run");

  // Two trials: as root, one clone of the commit in prepared/ and a layer each (each commits in its own).
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "bwrap", "--repeats", "2"], { cwd: root });
  const [result, second] = await readRunResults(out);
  assert.equal(second?.status, "passed", JSON.stringify(second?.checks));
  if (process.getuid?.() === 0) {
    assert.deepEqual([result?.workspace?.mechanism, second?.workspace?.mechanism], ["overlay", "overlay"]);
    const bases = await readdir(join(out, "prepared"));
    assert.equal(bases.length, 1, "one clone of the commit for both trials");
    assert.equal(git(join(out, "prepared", bases[0]!, "workspace"), "log", "-1", "--format=%s"), "two", "the base stays at the commit: each trial's commit is in its layer");
  }
  assert.equal(run.code, 0, `${run.stderr}\n${JSON.stringify(result?.checks)}`);
  assert.equal(result?.status, "passed");
  const trial = join(out, "tasks/suite/task/default/1");
  assert.equal(JSON.parse(await readFile(join(trial, "task-state.json"), "utf8")).gitCommit, two);
  assert.equal(await readFile(join(trial, "changes.patch"), "utf8"), [
    "diff --git a/README.md b/README.md", "index 13ab7f7..b9a6bbd 100644", "--- a/README.md", "+++ b/README.md", "@@ -1 +1,2 @@",
    " hello again", "+changed", "diff --git a/seen.txt b/seen.txt", "new file mode 100644", "index 0000000..ed35d71", "--- /dev/null", "+++ b/seen.txt",
    "@@ -0,0 +1,3 @@", "+two", "+one", "+?? seen.txt", "",
  ].join("\n"));
});

test("a ref the repository does not hold errors the task (exit 1) naming the repository and the ref", async (t) => {
  const root = await tempDir(t);
  const repo = join(root, "widget");
  await writeFiles(repo, { "README.md": "hello\n" });
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "one");
  await writeFiles(root, { "suite/task.yaml": "prompt: p\nworkspace: { git: ../widget, ref: release-9 }\nmodel: { provider: scripted, script: [{ say: done }] }\n" });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const [result] = await readRunResults(out);
  assert.equal(result?.status, "errored");
  assert.deepEqual(result?.error, { code: "setup_failed", message: `workspace.git: ref "release-9" was not found in ${repo}: name a commit SHA, branch or tag of that repository` });
});
