import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { takeFingerprint } from "../../src/tools/workspace-fingerprint.js";
import { tempDir } from "../support/temp-dir.js";

async function tree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

test("a fingerprint holds each file's size and mtime, skipping .git, node_modules and what .gitignore ignores", async (t) => {
  const ws = await tempDir(t);
  await tree(ws, {
    ".gitignore": "dist/\n*.log\n", "src/a.js": "abc", "src/deep/b.ts": "12345", "debug.log": "x",
    "dist/out.js": "x", "node_modules/p/index.js": "x", ".git/HEAD": "x", "sub/.gitignore": "local.txt\n", "sub/local.txt": "x", "sub/kept.txt": "k",
  });
  // A budget no loaded machine runs out of: this test is about what is kept, the next about the caps.
  const fp = await takeFingerprint(ws, { budgetMs: 60_000 });
  assert.equal(fp.capped, false);
  assert.deepEqual(Object.keys(fp.files).sort(), [".gitignore", "src/a.js", "src/deep/b.ts", "sub/.gitignore", "sub/kept.txt"]);
  assert.deepEqual(fp.files["src/a.js"], [3, (await stat(join(ws, "src/a.js"))).mtimeMs]);
});

test("a fingerprint stops at its file cap or its time budget and says it was capped", async (t) => {
  const ws = await tempDir(t);
  await tree(ws, { "a.txt": "1", "b.txt": "2", "c/d.txt": "3", "c/e/f.txt": "4" });
  const byCount = await takeFingerprint(ws, { maxFiles: 3 });
  assert.deepEqual(byCount, { files: { "a.txt": byCount.files["a.txt"]!, "b.txt": byCount.files["b.txt"]!, "c/d.txt": byCount.files["c/d.txt"]! }, capped: true });
  const exact = await takeFingerprint(ws, { maxFiles: 4 });
  assert.equal(exact.capped, false, "a workspace exactly at the cap is whole");
  const byTime = await takeFingerprint(ws, { budgetMs: 0 });
  assert.deepEqual(Object.keys(byTime.files), ["a.txt", "b.txt"], "breadth first: the root's files before the folders'");
  assert.equal(byTime.capped, true);
});

test("a fingerprint of given paths holds those that are files, and walks nothing else", async (t) => {
  const ws = await tempDir(t);
  await tree(ws, { "a.txt": "1", "src/b.txt": "22", "other.txt": "not asked for", "dir/x.txt": "x" });
  await symlink("a.txt", join(ws, "link.txt"));
  const fp = await takeFingerprint(ws, { paths: ["src/b.txt", "a.txt", "missing.txt", "dir", "link.txt", "a.txt"] });
  assert.deepEqual(fp, {
    files: { "a.txt": [1, (await stat(join(ws, "a.txt"))).mtimeMs], "src/b.txt": [2, (await stat(join(ws, "src/b.txt"))).mtimeMs] },
    capped: false,
    paths: ["a.txt", "dir", "link.txt", "missing.txt", "src/b.txt"],
  }, "a missing path, a folder and a link are not files; each path once, sorted");
});
