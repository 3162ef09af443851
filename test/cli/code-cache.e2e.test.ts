/**
 * The `rhema` executable's code cache (src/cli/code-cache.ts, src/cli/rhema.ts): the first run
 * saves what V8 compiled, later runs use it (and so do not write it again), a folder others may
 * write is never read, and `RHEMA_COMPILE_CACHE=off` writes nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, readFile, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { codeCacheDir, codeCacheFile, compileWithCodeCache } from "../../src/cli/code-cache.js";
import { cliEnv, runCli } from "../support/cli.js";
import { OPEN_POLICY, shellStepsTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

/** A suite whose one task runs a shell command: its run loads the bash grammar, which sets V8 flags. */
async function shellSuite(root: string): Promise<void> {
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/echo.yaml": shellStepsTask(["echo hi"], { rest: "checks:\n  - { name: ok, run: \"true\" }\n" }),
  });
}

async function cacheFiles(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith(".v8cache"));
}

test("the first run saves a code cache that the next runs use as it is: a shell task (V8 flags changed for the grammar) does not make it stale", async (t) => {
  const root = await tempDir(t);
  const cache = join(root, "cache");
  await shellSuite(root);
  const env = cliEnv({ RHEMA_COMPILE_CACHE: cache });
  const first = await runCli(["run", "suite", "--out", "out-1", "--sandbox", "off"], { cwd: root, env });
  assert.equal(first.code, 0, first.stderr);
  const [file, ...more] = await cacheFiles(cache);
  assert.ok(file, "the first run left a cache file");
  assert.deepEqual(more, []);
  assert.equal((await stat(cache)).mode & 0o777, 0o700, "the folder is the user's alone");
  assert.equal((await stat(join(cache, file))).mode & 0o777, 0o600);
  const saved = await stat(join(cache, file));

  // A run that used the cache leaves it alone; one V8 rejected (other flags) would write it again.
  for (const run of ["out-2", "out-3"]) {
    const again = await runCli(["run", "suite", "--out", run, "--sandbox", "off"], { cwd: root, env });
    assert.equal(again.code, 0, again.stderr);
  }
  const after = await stat(join(cache, file));
  assert.equal(after.mtimeMs, saved.mtimeMs, "the cache was used, not rewritten");
  assert.equal(after.ino, saved.ino);
  assert.deepEqual(await cacheFiles(cache), [file]);
});

test("a cache folder others may write is neither read nor written; RHEMA_COMPILE_CACHE=off writes none", async (t) => {
  const root = await tempDir(t);
  const shared = join(root, "shared-cache");
  await mkdir(shared);
  await chmod(shared, 0o777);
  const open = await runCli(["--version"], { cwd: root, env: cliEnv({ RHEMA_COMPILE_CACHE: shared }) });
  assert.equal(open.code, 0, open.stderr);
  assert.deepEqual(await cacheFiles(shared), []);

  const tmp = join(root, "tmp");
  await mkdir(tmp);
  const off = await runCli(["--version"], { cwd: root, env: cliEnv({ RHEMA_COMPILE_CACHE: "off", TMPDIR: tmp }) });
  assert.equal(off.code, 0, off.stderr);
  assert.deepEqual(await readdir(tmp), [], "nothing under the temp folder");

  const byDefault = await runCli(["--version"], { cwd: root, env: cliEnv({ RHEMA_COMPILE_CACHE: "", TMPDIR: tmp }) });
  assert.equal(byDefault.code, 0, byDefault.stderr);
  assert.deepEqual(await readdir(tmp), [`rhema-compile-cache-${process.getuid!()}`], "the default folder is under the temp folder, per user");
});

test("the cache file is named by the bundle's bytes: another bundle, another file", () => {
  const dir = codeCacheDir({ RHEMA_COMPILE_CACHE: "/x" })!;
  assert.equal(dir, "/x");
  assert.equal(codeCacheDir({ RHEMA_COMPILE_CACHE: "off" }), null);
  const one = codeCacheFile(dir, Buffer.from("module.exports = 1;"));
  assert.equal(codeCacheFile(dir, Buffer.from("module.exports = 1;")), one);
  assert.notEqual(codeCacheFile(dir, Buffer.from("module.exports = 2;")), one, "same length, other text");
});

test("a cache file V8 rejects (corrupt, or from another build) is replaced, and the run goes on unharmed", async (t) => {
  const root = await tempDir(t);
  const cache = join(root, "cache");
  const env = cliEnv({ RHEMA_COMPILE_CACHE: cache });
  assert.equal((await runCli(["--version"], { cwd: root, env })).code, 0);
  const [file] = await cacheFiles(cache);
  assert.ok(file);
  await writeFile(join(cache, file), "not a code cache");
  const run = await runCli(["--version"], { cwd: root, env });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^\d+\.\d+\.\d+/);
  assert.ok((await readFile(join(cache, file))).length > 1000, "a new cache was written in its place");
});

test("the bundle runs as a CommonJS module: its exports come back, a leading #! line is skipped", () => {
  const source = Buffer.from("#!/usr/bin/env node\nmodule.exports.answer = require('node:path').basename(__filename) + ':' + (6 * 7);\n");
  const script = compileWithCodeCache("/virtual/bundle-for-a-test.cjs", source, undefined);
  assert.equal(script.cacheUsed, false);
  assert.deepEqual(script.run(createRequire(import.meta.url)), { answer: "bundle-for-a-test.cjs:42" });
  assert.ok(script.createCachedData().length > 0);
});

test("a cache folder keeps the 32 newest cache files (those of older builds go when a new one is written) and no temp file a killed write left", async (t) => {
  const root = await tempDir(t);
  const cache = join(root, "cache");
  await mkdir(cache, { mode: 0o700 });
  const old = Array.from({ length: 40 }, (_, k) => `rhema-${k.toString(16).padStart(32, "0")}.v8cache`);
  for (const [k, name] of old.entries()) {
    await writeFile(join(cache, name), "stale");
    const when = new Date(Date.now() - (k + 1) * 60_000);
    await utimes(join(cache, name), when, when);
  }
  await writeFile(join(cache, "notes.txt"), "not a cache file: left alone");
  // The temp files of cache writes a kill cut short: an old one goes, a fresh one (a write under way) stays.
  const stale = `${old[0]}.4242.tmp`;
  const fresh = `${old[1]}.4343.tmp`;
  await writeFile(join(cache, stale), "half");
  await utimes(join(cache, stale), new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  await writeFile(join(cache, fresh), "half");
  const run = await runCli(["--version"], { cwd: root, env: cliEnv({ RHEMA_COMPILE_CACHE: cache }) });
  assert.equal(run.code, 0, run.stderr);
  const left = await cacheFiles(cache);
  assert.equal(left.length, 32);
  assert.ok(left.some((name) => !old.includes(name)), "the new cache is kept");
  assert.ok(left.includes(old[0]!) && !left.includes(old[39]!), "the oldest went first");
  const all = await readdir(cache);
  assert.ok(all.includes("notes.txt"));
  assert.ok(!all.includes(stale) && all.includes(fresh), "only the stale temp file went");
});

test("a chunk the run loads (the price table, for a task priced as a real model) gets a cache of its own, used by the next run", async (t) => {
  const root = await tempDir(t);
  const cache = join(root, "cache");
  await writeFiles(root, {
    "suite/priced.yaml": "prompt: Say hi.\nmodel:\n  provider: scripted\n  priceAs: claude-sonnet-4-5\n  script:\n    - say: hi\n",
  });
  const env = cliEnv({ RHEMA_COMPILE_CACHE: cache });
  const first = await runCli(["run", "suite", "--out", "out-1", "--policy", "preset:read-only"], { cwd: root, env });
  assert.equal(first.code, 0, first.stderr);
  const files = await cacheFiles(cache);
  assert.equal(files.length, 2, "the main bundle's and the price table chunk's");
  const before = await Promise.all(files.map((name) => stat(join(cache, name))));
  const again = await runCli(["run", "suite", "--out", "out-2", "--policy", "preset:read-only"], { cwd: root, env });
  assert.equal(again.code, 0, again.stderr);
  const after = await Promise.all(files.map((name) => stat(join(cache, name))));
  assert.deepEqual(after.map((s) => s.mtimeMs), before.map((s) => s.mtimeMs), "both caches used as they are");
  assert.deepEqual((await cacheFiles(cache)).sort(), [...files].sort());
});

test("each command has caches of its own: `--version` compiles little of what `run` needs, so its cache is not the one `run` uses", async (t) => {
  const root = await tempDir(t);
  const cache = join(root, "cache");
  await shellSuite(root);
  const env = cliEnv({ RHEMA_COMPILE_CACHE: cache });
  assert.equal((await runCli(["--version"], { cwd: root, env })).code, 0);
  const [versionCache] = await cacheFiles(cache);
  const run = await runCli(["run", "suite", "--out", "out", "--sandbox", "off"], { cwd: root, env });
  assert.equal(run.code, 0, run.stderr);
  const files = await cacheFiles(cache);
  assert.equal(files.length, 2);
  assert.ok(files.includes(versionCache!));
  const runCache = files.find((name) => name !== versionCache)!;
  assert.ok((await stat(join(cache, runCache))).size > (await stat(join(cache, versionCache!))).size, "run's cache holds more compiled code");
});
