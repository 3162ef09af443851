/**
 * Private files (src/store/private-files.ts): the atomic replacement every store and the run
 * directory write through — whole or not at all, 0600, no temp file left by a failed write —
 * and the clean-up of the temp files a kill leaves.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ensurePrivateDir, isAtomicTempOf, openPrivateAppend, removeAtomicTemps, replaceFileAtomic, writePrivateFileAtomic } from "../../src/store/private-files.js";
import { tempDir } from "../support/temp-dir.js";

test("an atomic write replaces the file whole with the mode asked, leaving no temp file, fsync'd or not", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "state.json");
  await writeFile(path, "old, and longer than what replaces it\n");
  await replaceFileAtomic(path, "new\n", { mode: 0o600, fsync: false });
  assert.equal(await readFile(path, "utf8"), "new\n");
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  await replaceFileAtomic(path, Buffer.from("newer\n"), { mode: 0o644, fsync: true });
  assert.equal(await readFile(path, "utf8"), "newer\n");
  assert.deepEqual(await readdir(dir), ["state.json"]);
});

test("a write that cannot land leaves the old file as it was and no temp file", async (t) => {
  const dir = await tempDir(t);
  const target = join(dir, "report.xml");
  await mkdir(target); // a folder where the file should go: the rename fails
  await assert.rejects(replaceFileAtomic(target, "<x/>", { mode: 0o600, fsync: true }), (err: NodeJS.ErrnoException) => err.code === "EISDIR" || err.code === "ENOTEMPTY" || err.code === "EEXIST");
  assert.deepEqual(await readdir(dir), ["report.xml"]);
  assert.ok((await stat(target)).isDirectory());
});

test("writePrivateFileAtomic makes the folder private first; the temp names it uses are the ones clean-up removes", async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, "run", "session.json");
  await writePrivateFileAtomic(path, "{}\n");
  assert.equal((await stat(join(dir, "run"))).mode & 0o777, 0o700);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  // As a SIGKILL between the temp's write and the rename leaves it:
  await writeFile(join(dir, "run", "session.json.123456789"), "{ torn");
  await writeFile(join(dir, "run", "other.json.42"), "not ours");
  assert.ok(isAtomicTempOf("session.json.123456789", "session.json"));
  assert.deepEqual(await removeAtomicTemps(join(dir, "run"), ["session.json"]), ["session.json.123456789"]);
  assert.deepEqual((await readdir(join(dir, "run"))).sort(), ["other.json.42", "session.json"]);
});

test("a folder that exists keeps its mode — a shared /tmp-like 1777 folder, a user's 0755 one — whatever rhema writes into it", async (t) => {
  const root = await tempDir(t);
  for (const [name, mode] of [["sticky", 0o1777], ["users", 0o755]] as const) {
    const dir = join(root, name);
    await mkdir(dir);
    await chmod(dir, mode);
    await ensurePrivateDir(dir);
    await writePrivateFileAtomic(join(dir, "stats.json"), "{}\n");
    await (await openPrivateAppend(join(dir, "events.jsonl"))).close();
    assert.equal((await stat(dir)).mode & 0o7777, mode, `${name} keeps its mode`);
    assert.equal((await stat(join(dir, "stats.json"))).mode & 0o777, 0o600);
  }
  // The folders rhema makes are private, the missing parents too.
  await ensurePrivateDir(join(root, "users", "new", "deeper"));
  assert.equal((await stat(join(root, "users", "new"))).mode & 0o777, 0o700);
  assert.equal((await stat(join(root, "users", "new", "deeper"))).mode & 0o777, 0o700);
});
