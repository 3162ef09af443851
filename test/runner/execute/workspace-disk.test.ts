/**
 * The per-task disk figure (workspace-disk.ts) against a hand count on a real folder: a file of
 * known blocks, a hard link to it counted once, a sparse file counted by its data, folders and a
 * link by their own blocks — and against `du --block-size=1 -s` where GNU du runs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { link, lstat, mkdir, open, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { allocatedBytes } from "../../../src/runner/execute/workspace-disk.js";
import { tempDir } from "../../support/temp-dir.js";

test("the disk figure counts each entry's allocated blocks, a hard-linked file once and a sparse file by its data", async (t) => {
  const root = join(await tempDir(t), "workspace");
  await mkdir(join(root, "sub"), { recursive: true });
  await writeFile(join(root, "data.bin"), Buffer.alloc(100 * 1024, 1));
  await link(join(root, "data.bin"), join(root, "sub", "same.bin"));
  await symlink("../data.bin", join(root, "sub", "to-data"));
  const sparse = await open(join(root, "sparse.bin"), "w");
  await sparse.write(Buffer.alloc(4096, 2), 0, 4096, 8 * 1024 * 1024);
  await sparse.close();
  const blocks = async (path: string) => (await lstat(path)).blocks * 512;
  const data = await blocks(join(root, "data.bin"));
  assert.ok(data >= 100 * 1024, `the file holds its 100 KiB (${data})`);
  const sparseBytes = await blocks(join(root, "sparse.bin"));
  assert.ok(sparseBytes < 64 * 1024, `the sparse file holds little (${sparseBytes})`);
  const byHand = (await blocks(root)) + (await blocks(join(root, "sub"))) + data + (await blocks(join(root, "sub", "to-data"))) + sparseBytes;
  assert.equal(await allocatedBytes(root), byHand);
  const du = Number(execFileSync("du", ["--block-size=1", "-s", root], { encoding: "utf8" }).split("\t")[0]);
  assert.equal(await allocatedBytes(root), du, "du says the same");
});

test("a workspace that is gone has no disk figure", async (t) => {
  assert.equal(await allocatedBytes(join(await tempDir(t), "never-made")), null);
});
