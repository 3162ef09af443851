/**
 * The fixture copy (fixture-copy.ts) on real folders: hard links stay one file, holes stay holes,
 * mtimes and modes are kept — by GNU cp and by the Node copy used where no GNU cp runs (a `cp`
 * on PATH that knows none of GNU's options) — and the copy itself is checked: what the load-time
 * scan never saw (a link or FIFO put into the fixture after it) is refused, the copy removed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, link, lstat, mkdir, open, readFile, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { copyFixture, cpErrno } from "../../../src/runner/tasks/fixture-copy.js";
import { FixtureError } from "../../../src/runner/tasks/fixture-check.js";
import { tempDir } from "../../support/temp-dir.js";

/** A fixture with a hard link pair, a relative link, a sparse file, a read-only folder and an old mtime. */
async function fixture(root: string): Promise<string> {
  const from = join(root, "fixture");
  await mkdir(join(from, "lib", "deep"), { recursive: true });
  await writeFile(join(from, "lib", "a.js"), "shared content\n");
  await link(join(from, "lib", "a.js"), join(from, "lib", "deep", "b.js"));
  await symlink("../a.js", join(from, "lib", "deep", "to-a.js"));
  const sparse = await open(join(from, "sparse.bin"), "w");
  await sparse.write(Buffer.alloc(4096, 7), 0, 4096, 1024 * 1024);
  await sparse.truncate(256 * 1024 * 1024);
  await sparse.close();
  await writeFile(join(from, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
  await utimes(join(from, "run.sh"), new Date("2020-01-02T03:04:05Z"), new Date("2020-01-02T03:04:05Z"));
  await mkdir(join(from, "locked"));
  await writeFile(join(from, "locked", "x"), "x");
  await chmod(join(from, "locked"), 0o555);
  return from;
}

async function checkCopy(from: string, to: string): Promise<void> {
  const [a, b] = [await stat(join(to, "lib", "a.js")), await stat(join(to, "lib", "deep", "b.js"))];
  assert.equal(a.ino, b.ino, "the hard link pair is one file in the copy");
  assert.equal(a.nlink, 2);
  assert.notEqual(a.ino, (await stat(join(from, "lib", "a.js"))).ino, "a copy, not a link to the fixture");
  assert.equal(await readFile(join(to, "lib", "deep", "b.js"), "utf8"), "shared content\n");
  assert.equal((await lstat(join(to, "lib", "deep", "to-a.js"))).isSymbolicLink(), true);
  const sparse = await stat(join(to, "sparse.bin"));
  assert.equal(sparse.size, 256 * 1024 * 1024);
  assert.ok(sparse.blocks <= 64, `holes kept: ${sparse.blocks} blocks`);
  const script = await stat(join(to, "run.sh"));
  assert.equal(script.mode & 0o777, 0o755);
  assert.equal(script.mtime.toISOString(), "2020-01-02T03:04:05.000Z");
  assert.equal((await stat(join(to, "locked"))).mode & 0o777, 0o555);
  // Writable again, so that the temp folder can be removed by a user who is not root.
  for (const dir of [from, to]) await chmod(join(dir, "locked"), 0o755);
}

test("GNU cp copies hard links as one file, holes as holes, modes and mtimes as they were", async (t) => {
  const root = await tempDir(t);
  const from = await fixture(root);
  await copyFixture(from, join(root, "out", "workspace"));
  await checkCopy(from, join(root, "out", "workspace"));
});

test("without GNU cp the Node copy keeps hard links, holes, modes and mtimes alike", async (t) => {
  const root = await tempDir(t);
  const from = await fixture(root);
  const bin = join(root, "bin");
  await mkdir(bin);
  await writeFile(join(bin, "cp"), "#!/bin/sh\necho \"cp: illegal option -- -\" >&2\nexit 64\n", { mode: 0o755 });
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    await copyFixture(from, join(root, "out", "workspace"));
  } finally {
    process.env.PATH = path;
  }
  await checkCopy(from, join(root, "out", "workspace"));
});

test("the copy is checked, not only the fixture at load: a link out or a FIFO found there is refused and the copy removed", async (t) => {
  const root = await tempDir(t);
  for (const [name, plant] of [
    ["link-out", (from: string) => symlink("../../../../etc/passwd", join(from, "lib", "escape"))],
    ["absolute", (from: string) => symlink("/etc", join(from, "lib", "etc"))],
    ["fifo", async (from: string) => void execFileSync("mkfifo", [join(from, "lib", "pipe")])],
  ] as const) {
    const from = join(root, name);
    await mkdir(join(from, "lib"), { recursive: true });
    await writeFile(join(from, "lib", "a.js"), "a");
    await plant(from);
    const to = join(root, `${name}-copy`, "workspace");
    await assert.rejects(copyFixture(from, to), (err: unknown) => {
      assert.ok(err instanceof FixtureError, String(err));
      assert.match(err.message, new RegExp(`${name}/lib/(escape|etc|pipe) is `));
      return true;
    });
    assert.equal(existsSync(to), false, `${name}: nothing of the copy is left`);
  }
});

test("a run directory inside the fixture is refused before anything is copied", async (t) => {
  const root = await tempDir(t);
  const from = join(root, "fixture");
  await mkdir(join(from, "runs", "out"), { recursive: true });
  await assert.rejects(copyFixture(from, join(root, "ws"), { forbidden: [join(from, "runs", "out")] }), /runs\/out is the run directory/);
  assert.equal(existsSync(join(root, "ws")), false);
});

test("cp's message names the machine's errors by their errno: file handles, space, quota, memory, a read-only file system; anything else is none", () => {
  assert.equal(cpErrno("cp: cannot open 'a/b' for reading: Too many open files\n"), "EMFILE");
  assert.equal(cpErrno("cp: cannot create regular file 'x': Too many open files in system\n"), "ENFILE");
  assert.equal(cpErrno("cp: error writing 'x': No space left on device\n"), "ENOSPC");
  assert.equal(cpErrno("cp: error writing 'x': Disk quota exceeded\n"), "EDQUOT");
  assert.equal(cpErrno("cp: fts_read failed: Cannot allocate memory\n"), "ENOMEM");
  assert.equal(cpErrno("cp: cannot create directory 'x': Read-only file system\n"), "EROFS");
  assert.equal(cpErrno("cp: cannot stat 'x': No such file or directory\n"), null);
});
