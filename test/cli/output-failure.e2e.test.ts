/**
 * Exit 3: the run could not continue because rhema's own output or state cannot be written —
 * a report path that is a folder or lies under a file, a read-only file system, a disk that
 * fills mid-task. Each is one message naming the path and the operation and saying what to
 * do, no stack trace, the results already on disk untouched; once the cause is gone, the same
 * command continues. The mounts (a full or read-only tmpfs) need root: skipped without it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RunDir, readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { snapshotTree } from "../support/run-dir.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { mountTmpfs, tempDir } from "../support/temp-dir.js";

const NO_STACK = /\n\s+at .*\.js:\d+/;

/** A suite with one finished run in `out`, whose tree is snapshotted. */
async function finishedRun(t: { after(fn: () => unknown): void }) {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "good/a.yaml": taggingTask("a", 1) });
  const out = join(root, "run");
  const first = await runCli(["run", "good", "--out", out], { cwd: root });
  assert.equal(first.code, 0, first.stderr);
  return { root, out, before: await snapshotTree(out) };
}

test("a report path that is a folder is exit 3 naming it and the operation, before any task runs", async (t) => {
  const { root, out, before } = await finishedRun(t);
  const folder = join(root, "ci", "junit.xml");
  await mkdir(folder, { recursive: true });
  const result = await runCli(["run", "good", "--out", out, "--junit", folder], { cwd: root });
  assert.equal(result.code, 3, result.stderr);
  assert.equal(result.stderr.trim(),
    `rhema: cannot write ${folder}: is a folder (EISDIR); remove the folder, or choose another --out or report path, then run the same command to continue`);
  assert.deepEqual(await snapshotTree(out), before, "the earlier results are untouched");
});

test("a report path or a run directory under a file is exit 3, naming the path", async (t) => {
  const { root, out, before } = await finishedRun(t);
  await writeFile(join(root, "blocker"), "a file, not a folder\n");
  const junit = join(root, "blocker", "junit.xml");
  const inFile = await runCli(["run", "good", "--out", out, "--junit", junit], { cwd: root });
  assert.equal(inFile.code, 3, inFile.stderr);
  assert.equal(inFile.stderr.trim(),
    `rhema: cannot write ${junit}: a file is in the way where a folder should be (EEXIST); remove the file, or choose another --out or report path, then run the same command to continue`);

  const stats = join(root, "blocker", "deeper", "stats.json");
  const underFile = await runCli(["run", "good", "--out", out, "--stats", stats], { cwd: root });
  assert.equal(underFile.code, 3, underFile.stderr);
  assert.match(underFile.stderr, new RegExp(`^rhema: cannot write ${stats}: a part of the path is a file, not a folder \\(ENOTDIR\\); choose another --out or report path, then run the same command to continue\\n$`));
  assert.deepEqual(await snapshotTree(out), before);

  const runDir = join(root, "blocker", "run");
  const outUnderFile = await runCli(["run", "good", "--out", runDir], { cwd: root });
  assert.equal(outUnderFile.code, 3, outUnderFile.stderr);
  assert.match(outUnderFile.stderr, new RegExp(`^rhema: cannot create ${runDir}: .*\\(ENOTDIR\\)`));
  assert.doesNotMatch(outUnderFile.stderr, NO_STACK);
});

test("a report path on a read-only file system is exit 3 (EROFS), earlier results untouched", async (t) => {
  const { root, out, before } = await finishedRun(t);
  const readOnly = await mountTmpfs(t, "ro,size=64k");
  if (readOnly === null) return t.skip("mounting a tmpfs needs root");
  const summary = join(readOnly, "summary.md");
  const result = await runCli(["run", "good", "--out", out, "--summary", summary], { cwd: root });
  assert.equal(result.code, 3, result.stderr);
  assert.equal(result.stderr.trim(),
    `rhema: cannot write ${summary}: read-only file system (EROFS); choose another --out or report path on a writable file system, then run the same command to continue`);
  assert.deepEqual(await snapshotTree(out), before);
});

test("a disk that fills mid-task is exit 3 naming the file and ENOSPC; the finished task is kept, and once space is freed the same command continues", async (t) => {
  const disk = await mountTmpfs(t, "size=1m");
  if (disk === null) return t.skip("mounting a tmpfs needs root");
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": "version: 1\ndefault: deny\nrules:\n  - allow: { shell: [\"echo *\", \"sleep *\", \"test *\", \"head *\", \"true\"] }\n  - allow: { paths: [\"**\"] }\n",
    "suite/a-first.yaml": taggingTask("a", 1),
    "suite/b-fills.yaml": `prompt: Fill the disk.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "head -c 4000000 /dev/zero > fill.bin; echo filled" }
    - say: done
checks:
  - { name: ran, run: "true" }
`,
  });
  const out = join(disk, "run");
  const args = ["run", "suite", "--out", out, "--concurrency", "1"];
  const full = await runCli(args, { cwd: root });
  assert.equal(full.code, 3, `stdout: ${full.stdout}\nstderr: ${full.stderr}`);
  const lastLine = full.stderr.trimEnd().split("\n").at(-1)!;
  assert.match(lastLine, new RegExp(`^rhema: cannot (write|append to) ${out}/\\S+: no space left on device \\(ENOSPC\\); free some space, then run the same command to continue$`));
  assert.doesNotMatch(full.stderr, NO_STACK);
  const run = new RunDir(out);
  const kept = await readFile(run.trial({ suite: "suite", id: "a-first", variant: null, repeat: 1 }).path("result"), "utf8");
  assert.deepEqual((await readRunResults(out)).map((r) => [r.id, r.status]), [["a-first", "passed"]], "the task that finished is on disk; the other has no result");

  await rm(join(run.trial({ suite: "suite", id: "b-fills", variant: null, repeat: 1 }).workspace, "fill.bin"));
  const resumed = await runCli(args, { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((await readRunResults(out)).map((r) => [r.id, r.status, r.resumed]), [["a-first", "passed", 0], ["b-fills", "passed", 1]]);
  assert.equal(await readFile(run.trial({ suite: "suite", id: "a-first", variant: null, repeat: 1 }).path("result"), "utf8"), kept, "the finished task's result was kept byte for byte");
});
