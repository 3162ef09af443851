/**
 * changes.patch through the built CLI: a check reads it through `$RHEMA_CHANGES` (in the sandbox
 * when there is one), so "the agent changed nothing" fails a task; what setup wrote is not in it;
 * result.json, summary.md and junit.xml (an `[[ATTACHMENT|…]]` relative to the repository root,
 * valid against the ext schema) link it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { junitXsd } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const task = (script: string) => `prompt: Tag it.
policy: ../policy.yaml
workspace: { from: ../fixture, setup: ["echo made by setup > setup.txt"] }
model:
  provider: scripted
  script:
${script}checks:
  - { name: changed something, run: 'test -s "$RHEMA_CHANGES"' }
  - { name: patch names the tag, run: 'grep -q "^+one$" "$RHEMA_CHANGES" && ! grep -q setup.txt "$RHEMA_CHANGES"' }
`;

const FILES: Record<string, string> = {
  "policy.yaml": OPEN_POLICY,
  "fixture/README.md": "hello\n",
  "suite/changed.yaml": task(`    - call: shell
      input: { command: "echo one >> tags.txt" }
    - say: tagged
`),
  "suite/idle.yaml": task(`    - say: done, nothing to change
`),
};

test("a check tells an agent that changed nothing by $RHEMA_CHANGES; the reports link each patch", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, FILES);
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const results = Object.fromEntries((await readRunResults(out)).map((r) => [r.id, r]));
  assert.equal(results.changed?.status, "passed", JSON.stringify(results.changed?.checks));
  assert.equal(results.idle?.status, "failed");
  assert.deepEqual(results.idle?.checks.map((c) => c.passed), [false, false]);
  const patchPath = "tasks/suite/changed/default/1/changes.patch";
  assert.deepEqual(results.changed?.changes, { path: patchPath, files: 1, insertions: 1, deletions: 0, binary: 0, bytes: 125, truncated: false, leftOut: 0 });
  assert.deepEqual(results.idle?.changes, { path: "tasks/suite/idle/default/1/changes.patch", files: 0, insertions: 0, deletions: 0, binary: 0, bytes: 0, truncated: false, leftOut: 0 });
  assert.equal(await readFile(join(out, patchPath), "utf8"), "diff --git a/tags.txt b/tags.txt\nnew file mode 100644\nindex 0000000..5626abf\n--- /dev/null\n+++ b/tags.txt\n@@ -0,0 +1 @@\n+one\n");

  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /#### Changes\n\n- ✅ `suite\/changed`: 1 file, \+1 −0 — `tasks\/suite\/changed\/default\/1\/changes\.patch`\n- ❌ `suite\/idle`: no changes — `tasks\/suite\/idle\/default\/1\/changes\.patch`/);

  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(junit, /changes: tasks\/suite\/changed\/default\/1\/changes\.patch \(1 file, \+1 −0\)\n\[\[ATTACHMENT\|run\/tasks\/suite\/changed\/default\/1\/changes\.patch\]\]/);
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const valid = await validateXML({ xml: [{ fileName: "junit.xml", contents: junit }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(valid.valid, valid.rawOutput);
});

/** Whether the run's shared object store holds the blob git would make of `path`'s content. */
function stored(out: string, trialGitDir: string, path: string): boolean {
  const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
  const id = execFileSync("git", ["hash-object", "--no-filters", path], { env }).toString("utf8").trim();
  try {
    execFileSync("git", ["cat-file", "-e", id], { env: { ...env, GIT_DIR: trialGitDir, GIT_OBJECT_DIRECTORY: join(out, "changes-objects") }, stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

test("over a copied fixture the object store keeps what trials changed, not the fixture; the patch applies back onto the fixture, and a fixture changed under a trial gives no patch, saying why", async (t) => {
  const root = await tempDir(t);
  const fixture = join(root, "fixture");
  const files: Record<string, string> = { "policy.yaml": "version: 1\ndefault: allow\nrules: []\n", "fixture/a.txt": "one\ntwo\n", "fixture/gone.txt": "bye\n" };
  for (let i = 0; i < 40; i++) files[`fixture/src/f${i}.txt`] = `file ${i}\n`;
  const shellTask = (command: string, setup: string[] = []) => `prompt: Edit.
policy: ../policy.yaml
workspace: { from: ../fixture, setup: ${JSON.stringify(setup)} }
model:
  provider: scripted
  script:
    - call: shell
      input: { command: ${JSON.stringify(command)} }
    - say: done
`;
  files["suite/edit.yaml"] = shellTask("echo three >> a.txt && rm gone.txt && echo new > new.txt");
  // Its setup changes the fixture itself after the copy (unsandboxed here): the ids staged from it no longer name what it holds.
  files["suite/moved.yaml"] = shellTask("rm gone.txt", [`echo 'not what was copied' > ${JSON.stringify(join(fixture, "gone.txt"))}`]);
  await writeFiles(root, files);
  // Files as old as a fixture's: none written in the second git stages them (git reads those again, and so stores them).
  execFileSync("find", [fixture, "-exec", "touch", "-h", "-d", "@1577836800", "{}", "+"]);
  const out = join(root, "run");
  const edit = await runCli(["run", "suite/edit.yaml", "--out", out, "--sandbox", "off", "--workspace-layers", "copy"], { cwd: root });
  assert.equal(edit.code, 0, edit.stderr);
  const [result] = await readRunResults(out);
  assert.equal(result?.workspace?.mechanism, "copy");
  const trial = join(out, "tasks/suite/edit/default/1");
  const { bytes: _bytes, ...figures } = result?.changes as { bytes: number };
  assert.deepEqual(figures, { path: "tasks/suite/edit/default/1/changes.patch", files: 3, insertions: 2, deletions: 1, binary: 0, truncated: false, leftOut: 0 });
  // What the patch shows of the fixture was written for it; the untouched files never were.
  assert.equal(stored(out, join(trial, "changes.git"), join(fixture, "a.txt")), true);
  assert.equal(stored(out, join(trial, "changes.git"), join(fixture, "gone.txt")), true);
  for (const i of [0, 17, 39]) assert.equal(stored(out, join(trial, "changes.git"), join(fixture, `src/f${i}.txt`)), false, `src/f${i}.txt is not stored`);
  const applied = join(root, "applied");
  execFileSync("cp", ["-a", fixture, applied]);
  execFileSync("git", ["apply", join(trial, "changes.patch")], { cwd: applied, env: { PATH: process.env.PATH, GIT_CEILING_DIRECTORIES: root } });
  assert.equal(await readFile(join(applied, "a.txt"), "utf8"), "one\ntwo\nthree\n");
  assert.equal(existsSync(join(applied, "gone.txt")), false);
  assert.equal(await readFile(join(applied, "new.txt"), "utf8"), "new\n");

  const moved = await runCli(["run", "suite/moved.yaml", "--out", join(root, "run2"), "--sandbox", "off", "--workspace-layers", "copy"], { cwd: root });
  assert.equal(moved.code, 0, moved.stderr);
  const [changed] = await readRunResults(join(root, "run2"));
  const none = changed?.changes as { path: string | null; reason?: string };
  assert.equal(none.path, null, JSON.stringify(none));
  assert.match(none.reason ?? "", /git diff-tree .*(unable to read|bad object|missing)/i);
  assert.equal(existsSync(join(root, "run2/tasks/suite/moved/default/1/changes.patch")), false);
});
