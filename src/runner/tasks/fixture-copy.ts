/**
 * A task's fixture (`workspace.from`) copied into the task's workspace, checked (fixture-check.ts).
 *
 * The copy is one `cp -R` (GNU coreutils: the kernel copies, reflinks where the file system has
 * them), keeping modes, mtimes (the changes snapshot reuses a fixture's git index by them), hard
 * links inside the fixture as hard links, and holes (a 4 KB file with a 2 GB hole stays 4 KB).
 * Where no GNU cp runs, a copy in Node does the same entry by entry.
 *
 * Check, then copy, then check the copy: the fixture is checked when tasks load, but it is the
 * user's folder and may change after — a link swapped in while cp runs would be copied as it is.
 * So the copy itself, a folder only rhema writes to before the agent starts, is checked once cp
 * is done, with links resolved inside the copy: what the agent gets is what was checked. cp never
 * follows a link inside the fixture (`--no-dereference`) and never opens a FIFO or device (it
 * makes a new one, which the check then refuses); a refused copy is removed before the error.
 *
 * `workspace.from` itself may be a link: the folder it names is copied, never the link (a copied
 * link made the task edit the user's fixture).
 */
import { execFile } from "node:child_process";
import { chmod, copyFile, link, lstat, mkdir, open, readdir, readlink, realpath, rm, symlink, utimes, type FileHandle } from "node:fs/promises";
import type { Stats } from "node:fs";
import { constants } from "node:fs";
import { dirname, join } from "node:path";
import { checkTree, FixtureError, forbiddenProblem, scanFixture, type FixtureCheckOptions } from "./fixture-check.js";

/** Block size for the fallback sparse copy. */
const CHUNK_BYTES = 1 << 20;
/** The fallback sparse copy's hole granularity: a file system block. */
const HOLE_BYTES = 4096;
/** One copy's bound: a fixture that takes longer is not one to copy per task. */
const CP_TIMEOUT_MS = 30 * 60_000;

/**
 * Copies the folder `from` names (links resolved) to `to` (which must not exist), then checks the
 * copy: a problem is a `FixtureError` (the copy removed); file-system failures are thrown as they
 * are (the caller names the workspace).
 */
export async function copyFixture(from: string, to: string, options: Omit<FixtureCheckOptions, "destination"> = {}): Promise<void> {
  const root = await realpath(from);
  const forbidden = await forbiddenProblem(root, options.forbidden ?? []);
  if (forbidden !== null) throw new FixtureError(from, forbidden);
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  try {
    if (!(await copyWithCp(root, to))) await copyWithNode(root, to);
  } catch (err) {
    // cp stopped at something (a device it may not make, a path too long): name the fixture's entry when that is why.
    await rm(to, { recursive: true, force: true });
    const problem = await scanFixture(root, { destination: to }).catch(() => null);
    if (problem !== null) throw new FixtureError(from, problem);
    throw err;
  }
  const problem = await checkTree(await realpath(to), { destination: to, nameRoot: root });
  if (problem !== null) {
    await rm(to, { recursive: true, force: true });
    throw new FixtureError(from, problem);
  }
}

/** GNU `cp -R` of the whole tree; false when no GNU cp can be run (then nothing was written). */
function copyWithCp(root: string, to: string): Promise<boolean> {
  const args = ["-R", "--no-dereference", "--preserve=mode,timestamps,links", "--sparse=auto", "--reflink=auto", "--no-target-directory", "--", root, to];
  return new Promise((resolveCopy, reject) => {
    execFile("cp", args, { timeout: CP_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, _stdout, stderr) => {
      if (err === null) resolveCopy(true);
      else if ((err as NodeJS.ErrnoException).code === "ENOENT" || /unrecognized option|invalid option|illegal option|unknown option/.test(stderr)) resolveCopy(false);
      // The machine's limit, not a bad fixture: cp that could not start for want of file handles or
      // processes keeps its errno, and cp that stopped for one says which in its message.
      else {
        const spawnCode = (err as NodeJS.ErrnoException).code;
        const code = typeof spawnCode === "string" ? spawnCode : (cpErrno(stderr) ?? "EIO");
        reject(Object.assign(new Error(`cp: ${stderr.trim().split("\n").slice(0, 3).join("; ") || err.message}`, { cause: err }), { code, path: to }));
      }
    });
  });
}

/** strerror's words, as cp prints them, for the errors that are the machine's and not the fixture's. */
const CP_ERRNOS: readonly (readonly [string, string])[] = [
  ["Too many open files in system", "ENFILE"],
  ["Too many open files", "EMFILE"],
  ["No space left on device", "ENOSPC"],
  ["Disk quota exceeded", "EDQUOT"],
  ["Cannot allocate memory", "ENOMEM"],
  ["Read-only file system", "EROFS"],
];

/** The errno cp's message names, of those above; null for any other. */
export function cpErrno(stderr: string): string | null {
  return CP_ERRNOS.find(([words]) => stderr.includes(words))?.[1] ?? null;
}

/**
 * The same copy in Node: folders, files (holes kept), links as links, hard links as links to
 * the first copy; modes and mtimes kept. Anything else is left out (the check refused it at load).
 */
async function copyWithNode(root: string, to: string): Promise<void> {
  const folders: { path: string; stats: Stats }[] = [];
  const copiedInodes = new Map<string, string>();
  const copyFolder = async (source: string, target: string): Promise<void> => {
    const stats = await lstat(source);
    await mkdir(target, { mode: 0o700 });
    folders.push({ path: target, stats });
    for (const entry of (await readdir(source, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const from = join(source, entry.name);
      const into = join(target, entry.name);
      const entryStats = await lstat(from);
      if (entryStats.isDirectory()) await copyFolder(from, into);
      else if (entryStats.isSymbolicLink()) await symlink(await readlink(from), into);
      else if (entryStats.isFile()) {
        const inode = `${entryStats.dev}:${entryStats.ino}`;
        const first = entryStats.nlink > 1 ? copiedInodes.get(inode) : undefined;
        if (first !== undefined) await link(first, into);
        else {
          await copyRegularFile(from, into, entryStats);
          if (entryStats.nlink > 1) copiedInodes.set(inode, into);
        }
      }
    }
  };
  await copyFolder(root, to);
  // Modes and times last, deepest first: a read-only folder of the fixture is filled before it is made read-only.
  for (const folder of folders.reverse()) {
    await chmod(folder.path, folder.stats.mode & 0o7777);
    await utimes(folder.path, folder.stats.atime, folder.stats.mtime);
  }
}

/** A regular file, its mode and mtime kept; a file with holes (fewer blocks than its size needs) keeps them. */
async function copyRegularFile(source: string, target: string, stats: Stats): Promise<void> {
  if (stats.blocks * 512 >= stats.size) await copyFile(source, target, constants.COPYFILE_EXCL);
  else await copySparse(source, target, stats);
  await chmod(target, stats.mode & 0o7777);
  await utimes(target, stats.atime, stats.mtime);
}

/** Copies `source` writing only blocks that hold data, then sets the size: the zero blocks stay holes. */
async function copySparse(source: string, target: string, stats: Stats): Promise<void> {
  let input: FileHandle | undefined;
  let output: FileHandle | undefined;
  try {
    input = await open(source, "r");
    output = await open(target, "wx", 0o600);
    const buffer = Buffer.alloc(CHUNK_BYTES);
    for (let offset = 0; offset < stats.size;) {
      const { bytesRead } = await input.read(buffer, 0, CHUNK_BYTES, offset);
      if (bytesRead === 0) break;
      for (let block = 0; block < bytesRead; block += HOLE_BYTES) {
        const end = Math.min(block + HOLE_BYTES, bytesRead);
        if (!isAllZero(buffer.subarray(block, end))) await output.write(buffer, block, end - block, offset + block);
      }
      offset += bytesRead;
    }
    await output.truncate(stats.size);
  } finally {
    await input?.close();
    await output?.close();
  }
}

function isAllZero(chunk: Buffer): boolean {
  for (let i = 0; i < chunk.length; i++) if (chunk[i] !== 0) return false;
  return true;
}
