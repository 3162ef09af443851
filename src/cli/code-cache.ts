/**
 * A V8 code cache for the CLI's bundle. Most of a cold `rhema` start is V8 compiling
 * JavaScript; after one run the compiled code is saved, and later runs hand it back to V8
 * instead of compiling again (Node ≥ 22 offers this as `module.enableCompileCache`; Node 20
 * only through `vm.Script`'s `cachedData`, which is what this uses on every version).
 *
 * The cache is one file per bundle file, command, Node and set of Node flags, in a folder of
 * this user's (like Node's own compile cache: under the system temp folder unless
 * `RHEMA_COMPILE_CACHE` names one; `RHEMA_COMPILE_CACHE=off` turns it off; the 32 newest files
 * are kept). V8 checks a cache's version and flags
 * and rejects one that does not fit, but not its source beyond the length, so the file name
 * carries a hash of the bundle's text. A cache file is code that will run: one is read only from
 * a folder that is this user's alone (owned by them, not a symlink, no one else may write).
 * Nothing here throws or waits: a folder that cannot be written (a file, a folder under a file,
 * one under `/proc`, one this user cannot search) just means no cache; the folder is made one
 * level at a time (a bounded loop: Node's recursive mkdir spins forever under `/proc`), and a cache
 * file is opened non-blocking and read only when it is a regular file (a FIFO or a device there
 * is passed by, never waited on or replaced).
 */
import { createHash } from "node:crypto";
import {
  closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, renameSync, rmSync, statSync, writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Script } from "node:vm";
import { crc32 } from "node:zlib";

/** The folder of the cache: `RHEMA_COMPILE_CACHE`, else `<tmp>/rhema-compile-cache-<uid>`; null when turned off. */
export function codeCacheDir(env: NodeJS.ProcessEnv): string | null {
  const chosen = env.RHEMA_COMPILE_CACHE;
  if (chosen === "off" || chosen === "0") return null;
  if (chosen) return chosen;
  return join(tmpdir(), `rhema-compile-cache-${process.getuid?.() ?? "user"}`);
}

/**
 * The cache file of `source` under this Node (version, architecture, flags) in `dir`, for
 * `variant` (the command: what a run compiles is what the next run of that command needs). The text
 * is told by its CRC-32 and length, as Node's own compile cache does: hashing 4 MB with SHA-256
 * would cost more start-up than it guards against (anyone who can rewrite the bundle can run code).
 */
export function codeCacheFile(dir: string, source: Buffer, variant = ""): string {
  const key = createHash("sha256")
    .update(`${crc32(source)}\0${source.length}\0${process.version}\0${process.arch}\0${process.execArgv.join(" ")}\0${variant}`)
    .digest("hex")
    .slice(0, 32);
  return join(dir, `rhema-${key}.v8cache`);
}

/** A cache larger than this is not one rhema wrote (a bundle's cache is a few MB). */
const MAX_CACHE_BYTES = 256 * 1024 * 1024;

/** The cache in `file`, if there is one (a regular file) in a folder only this user can write. */
function readCodeCache(file: string): Buffer | undefined {
  try {
    if (!isPrivateDir(dirname(file))) return undefined;
    const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile() || stat.size > MAX_CACHE_BYTES) return undefined;
      const data = Buffer.alloc(stat.size);
      let filled = 0;
      while (filled < data.length) {
        const n = readSync(fd, data, filled, data.length - filled, filled);
        if (n === 0) break;
        filled += n;
      }
      return data.subarray(0, filled);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * Writes `data` to `file` whole (temp + rename), 0600, making its folder (0700) if need be. A
 * file in the way that is not a regular file (a FIFO, a device) is left alone: no cache.
 */
function writeCodeCache(file: string, data: Buffer): void {
  const dir = dirname(file);
  const temp = `${file}.${process.pid}.tmp`;
  let made = false;
  try {
    makeCacheDir(dir);
    if (!isPrivateDir(dir) || !replaceable(file)) return;
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
    made = true;
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    made = false;
  } catch {
    if (made) removeQuietly(temp);
  }
}

/**
 * Makes `dir` (0700) and its missing parents, one level at a time: a loop bounded by the path's
 * depth. Throws what the file system says (ENOTDIR, EACCES, ENOENT under `/proc`).
 */
function makeCacheDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    if (exists(d)) break;
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as { code?: unknown }).code !== "EEXIST") throw err;
    }
  }
}

/** Whether anything is at `path` (a broken link included); throws for anything but "nothing there". */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return false;
    throw err;
  }
}

/** Whether `file` is absent or a regular file (what a rename may replace). */
function replaceable(file: string): boolean {
  return !exists(file) || lstatSync(file).isFile();
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // a folder that turned unsearchable meanwhile: the temp file is pruned by a later save
  }
}

/** Cache files kept in a folder: each build of rhema (and each chunk) has its own, and old ones go. */
const KEPT_CACHE_FILES = 32;

/** A temp file older than this is one a killed write left behind. */
const STALE_TEMP_MS = 10 * 60_000;

/**
 * Removes all but the `KEPT_CACHE_FILES` most recently written cache files of `dir`, and the
 * temp files of writes a kill cut short.
 */
function pruneCodeCaches(dir: string): void {
  try {
    if (!isPrivateDir(dir)) return;
    const names = readdirSync(dir);
    for (const name of names.filter((n) => /^rhema-[0-9a-f]{32}\.v8cache\.\d+\.tmp$/.test(n))) {
      if (Date.now() - statSync(join(dir, name)).mtimeMs > STALE_TEMP_MS) removeQuietly(join(dir, name));
    }
    const files = names.filter((name) => /^rhema-[0-9a-f]{32}\.v8cache$/.test(name));
    if (files.length <= KEPT_CACHE_FILES) return;
    const byAge = files.map((name) => ({ name, mtimeMs: statSync(join(dir, name)).mtimeMs })).sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const { name } of byAge.slice(KEPT_CACHE_FILES)) removeQuietly(join(dir, name));
  } catch {
    // another rhema pruning at once, or a folder gone: the next save prunes
  }
}

function isPrivateDir(dir: string): boolean {
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  return stat.isDirectory() && (uid === undefined || stat.uid === uid) && (stat.mode & 0o022) === 0;
}

/** A CommonJS file compiled with a code cache: whether V8 took the cache, and how to run it. */
export interface CachedScript {
  /** False when there was no cache or V8 rejected it (another V8, other flags). */
  readonly cacheUsed: boolean;
  /** Runs the file as a CommonJS module with `require`; returns its `module.exports`. */
  run(require: NodeJS.Require): unknown;
  /** The code V8 has compiled for it so far, functions compiled while it ran included. */
  createCachedData(): Buffer;
}

/**
 * Compiles `source`, the bytes of the CommonJS file `filename`, handing V8 `cached` if given.
 * The file must be ASCII (esbuild's default output), read as Latin-1: a one-byte string,
 * without the cost of decoding 4 MB of UTF-8.
 */
export function compileWithCodeCache(filename: string, source: Buffer, cached: Buffer | undefined): CachedScript {
  const text = source.toString("latin1");
  // The CommonJS wrapper, as Node's loader puts it; a leading `#!` line is not JavaScript there.
  const body = text.startsWith("#!") ? `//${text}` : text;
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${body}\n})`, {
    filename,
    ...(cached ? { cachedData: cached } : {}),
  });
  return {
    cacheUsed: cached !== undefined && script.cachedDataRejected === false,
    run(require) {
      const module = { exports: {} };
      const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
      wrapper.call(module.exports, module.exports, require, module, filename, dirname(filename));
      return module.exports;
    },
    createCachedData: () => script.createCachedData(),
  };
}

/**
 * Runs a bundle's CommonJS files, each with its own code cache: the entry, and the chunks it
 * requires as `./chunks/<file>` (each run once, as Node's module cache would). The caches that
 * were missing or that V8 rejected are saved by `saveCaches`, meant for the process's exit,
 * when the code V8 compiled while the files ran is all there.
 */
export class CodeCachedBundle {
  private readonly exportsOf = new Map<string, unknown>();
  private readonly unsaved: { cacheFile: string; script: CachedScript }[] = [];

  /**
   * `cacheDir`: `codeCacheDir(env)`; null runs the files without caches. `variant`: the command
   * run (`run`, `validate`, …): each has caches of its own, as each compiles other code.
   */
  constructor(private readonly cacheDir: string | null, private readonly variant = "") {}

  /** Runs the CommonJS file `filename` (absolute), or returns the exports of its earlier run. */
  run(filename: string): unknown {
    if (this.exportsOf.has(filename)) return this.exportsOf.get(filename);
    const source = readFileSync(filename);
    const cacheFile = this.cacheDir === null ? null : codeCacheFile(this.cacheDir, source, this.variant);
    const script = compileWithCodeCache(filename, source, cacheFile === null ? undefined : readCodeCache(cacheFile));
    if (cacheFile !== null && !script.cacheUsed) this.unsaved.push({ cacheFile, script });
    const nodeRequire = createRequire(filename);
    const require = Object.assign(
      (id: string) => (id.startsWith("./chunks/") ? this.run(join(dirname(filename), id)) : nodeRequire(id)),
      nodeRequire,
    ) as NodeJS.Require;
    const exports = script.run(require);
    this.exportsOf.set(filename, exports);
    return exports;
  }

  /** Whether `saveCaches` has anything to write. */
  get needsSaving(): boolean {
    return this.unsaved.length > 0;
  }

  /** Writes the caches of the files run so far that had none (or a rejected one). */
  saveCaches(): void {
    if (this.cacheDir === null || this.unsaved.length === 0) return;
    for (const { cacheFile, script } of this.unsaved.splice(0)) writeCodeCache(cacheFile, script.createCachedData());
    pruneCodeCaches(this.cacheDir);
  }
}
