/**
 * `NumstatThenPatch` (changes-patch.ts): one `git diff-tree -z --numstat -p` gives the file list
 * and the patch that two git processes gave before — the same files and the same patch bytes, over
 * a real repository whose change holds every kind a patch meets (added, modified, deleted,
 * renamed, binary, mode-changed, a name with a tab, a newline and unicode), however git's output is cut
 * into chunks (one byte at a time; random sizes from a seed, printed, taken from RHEMA_TEST_SEED).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NumstatThenPatch, parseNumstat } from "../../../src/runner/execute/changes-patch.js";
import { tempDir } from "../../support/temp-dir.js";

const SEED = Number(process.env.RHEMA_TEST_SEED ?? Date.now() % 1_000_000);

function git(cwd: string, ...args: string[]): Buffer {
  return execFileSync("git", args, { cwd, env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }, maxBuffer: 1 << 26 });
}

/** Two trees of one repository, the second changed in every way a patch shows. */
async function changedTrees(t: { after(fn: () => unknown): void }): Promise<{ repo: string; range: [string, string] }> {
  const repo = await tempDir(t);
  git(repo, "init", "-q");
  const files: Record<string, string> = {
    "kept.txt": "same\n", "edited.txt": "one\ntwo\n", "gone.txt": "bye\n", "moved.txt": Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(""),
    "tab\there.txt": "t\n", "new\nline.txt": "n\n", "ünï côdé.txt": "u\n", "mode.sh": "echo\n",
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(repo, name), text);
  git(repo, "add", "-A");
  const before = git(repo, "write-tree").toString().trim();
  await writeFile(join(repo, "edited.txt"), "one\nTWO\nthree\n");
  await rm(join(repo, "gone.txt"));
  await rename(join(repo, "moved.txt"), join(repo, "moved again.txt"));
  await writeFile(join(repo, "binary.bin"), Buffer.from([0, 1, 2, 0, 255]));
  await writeFile(join(repo, "tab\there.txt"), "t2\n");
  await writeFile(join(repo, "new\nline.txt"), "n2\n");
  await writeFile(join(repo, "ünï côdé.txt"), "u2\n");
  await chmod(join(repo, "mode.sh"), 0o755);
  git(repo, "add", "-A");
  return { repo, range: [before, git(repo, "write-tree").toString().trim()] };
}

/** The combined output fed in chunks whose sizes `nextSize` gives: what the split returns. */
function split(output: Buffer, nextSize: () => number): { files: ReturnType<typeof parseNumstat>; patch: Buffer } {
  const patch: Buffer[] = [];
  const splitter = new NumstatThenPatch((chunk) => patch.push(Buffer.from(chunk)));
  for (let at = 0; at < output.length;) {
    const size = Math.max(1, nextSize());
    splitter.push(output.subarray(at, at + size));
    at += size;
  }
  return { files: splitter.files(), patch: Buffer.concat(patch) };
}

test("one git process gives the files and the patch that two gave, however its output is cut", async (t) => {
  console.log(`seed ${SEED} (RHEMA_TEST_SEED)`);
  const { repo, range } = await changedTrees(t);
  const numstat = git(repo, "diff-tree", "-r", "-z", "--numstat", "-M", ...range);
  const patch = git(repo, "diff-tree", "-r", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv", ...range);
  const combined = git(repo, "diff-tree", "-r", "-z", "--numstat", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv", ...range);
  const expected = parseNumstat(numstat);
  assert.deepEqual(expected.map((f) => f.path).sort(), ["binary.bin", "edited.txt", "gone.txt", "mode.sh", "moved again.txt", "new\nline.txt", "tab\there.txt", "ünï côdé.txt"]);
  assert.equal(expected.find((f) => f.path === "moved again.txt")?.from, "moved.txt", "a rename keeps its source");
  assert.equal(expected.find((f) => f.path === "binary.bin")?.added, null, "a binary file has no line counts");

  let state = SEED;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return 1 + (state % 97);
  };
  for (const [name, sizes] of [["whole", () => combined.length], ["a byte at a time", () => 1], ["random sizes", random]] as const) {
    const got = split(combined, sizes);
    assert.deepEqual(got.files, expected, `${name}: the files`);
    assert.ok(got.patch.equals(patch), `${name}: the patch, byte for byte`);
  }
});

test("no change prints nothing: no files, no patch", () => {
  const got = split(Buffer.alloc(0), () => 1);
  assert.deepEqual(got, { files: [], patch: Buffer.alloc(0) });
});
