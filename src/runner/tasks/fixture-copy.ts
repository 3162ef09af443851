/**
 * A task's fixture (`workspace.from`) and its copy into the task's workspace. The copy must be
 * a world of its own: nothing in it may lead back to the user's files or the machine's, since
 * the agent's tools and shell read and write there (with `--sandbox off`, a link leads wherever
 * it points). So the fixture is checked — when tasks load (validate and run, before anything is
 * written) and again entry by entry as it is copied — and anything that is not
 *
 *   a folder, a regular file, or a relative link that resolves inside the fixture
 *
 * is refused (exit 2, naming the entry): FIFOs, sockets and devices (a copy would open them, or
 * hand the agent a host socket), absolute links and links that climb out of the fixture (to
 * `/proc`, `/dev`, the user's home), a path that grows past PATH_MAX in the copy, and the run
 * directory itself (a fixture holding `--out` would copy itself without end).
 *
 * `workspace.from` itself may be a link: the folder it names is copied, never the link (a
 * copied link made the task edit the user's fixture). Links inside are copied as links — they
 * stay inside the copy, since they resolve inside the fixture. Sparse files stay sparse (a
 * 4 KB file with a 2 GB hole is copied as 4 KB, by `cp --sparse=always`, else by writing only
 * the blocks that hold data); no file is read whole into memory.
 */
import { execFile } from "node:child_process";
import { copyFile, chmod, lstat, mkdir, open, readdir, readlink, realpath, symlink, type FileHandle } from "node:fs/promises";
import type { Stats } from "node:fs";
import { constants } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { RhemaError } from "../../core/errors.js";
import { isWithinOrSame } from "./canonical-path.js";

/** The longest path Linux takes (bytes, with its NUL): a copy's entry must stay below it. */
export const PATH_MAX_BYTES = 4096;
/** Links followed while resolving one link's target, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;
/** Block size for the fallback sparse copy. */
const CHUNK_BYTES = 1 << 20;

/** An entry of a fixture that cannot be copied, and why. */
export interface FixtureProblem {
  /** Absolute path of the entry in the fixture. */
  path: string;
  message: string;
}

/** A fixture that cannot be copied: exit 2 naming the entry. Thrown by `copyFixture`. */
export class FixtureError extends RhemaError {
  readonly problem: FixtureProblem;
  constructor(from: string, problem: FixtureProblem) {
    super("task_invalid", `workspace.from ${from}: ${problem.path} ${problem.message}; nothing of it was copied for the task to use`);
    this.problem = problem;
  }
}

export interface FixtureCheckOptions {
  /** Where the copy goes (the task's workspace), to check every entry's copied path against PATH_MAX. */
  destination?: string;
  /** Canonical folders the fixture must not hold (the run directory). */
  forbidden?: readonly string[];
}

/** The first entry of the fixture at `from` that cannot be copied, or null (see the header). */
export async function scanFixture(from: string, options: FixtureCheckOptions = {}): Promise<FixtureProblem | null> {
  const root = await realpath(from);
  try {
    await walk(root, root, options.destination ?? null, options, async () => {});
  } catch (err) {
    if (err instanceof FixtureWalkStop) return err.problem;
    throw err;
  }
  return null;
}

/**
 * Copies the folder `from` names (links resolved) to `to` (which must not exist), checking each
 * entry as it goes: a problem is a `FixtureError`; file-system failures are thrown as they are
 * (the caller names the workspace).
 */
export async function copyFixture(from: string, to: string, options: Omit<FixtureCheckOptions, "destination"> = {}): Promise<void> {
  const root = await realpath(from);
  const folders: { path: string; mode: number }[] = [];
  try {
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await mkdir(to, { mode: 0o700 });
    folders.push({ path: to, mode: (await lstat(root)).mode & 0o7777 });
    await walk(root, root, to, options, async (entry) => {
      const target = join(to, entry.rel);
      switch (entry.kind) {
        case "dir":
          await mkdir(target, { mode: 0o700 });
          folders.push({ path: target, mode: entry.stats.mode & 0o7777 });
          return;
        case "file":
          await copyRegularFile(entry.abs, target, entry.stats);
          return;
        case "link":
          await symlink(entry.linkText!, target);
          return;
      }
    });
  } catch (err) {
    if (err instanceof FixtureWalkStop) throw new FixtureError(from, err.problem);
    throw err;
  }
  // Modes last, deepest first: a read-only folder of the fixture is filled before it is made read-only.
  for (const folder of folders.reverse()) await chmod(folder.path, folder.mode);
}

interface FixtureEntry {
  abs: string;
  /** Relative to the fixture's root. */
  rel: string;
  kind: "dir" | "file" | "link";
  stats: Stats;
  linkText?: string;
}

class FixtureWalkStop extends Error {
  constructor(readonly problem: FixtureProblem) {
    super(`${problem.path} ${problem.message}`);
  }
}

async function walk(
  root: string, dir: string, destination: string | null, options: FixtureCheckOptions, visit: (entry: FixtureEntry) => Promise<void>,
): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    const abs = join(dir, name);
    const rel = relative(root, abs);
    const stats = await lstat(abs);
    const stop = (message: string): never => {
      throw new FixtureWalkStop({ path: abs, message });
    };
    if (destination !== null) {
      const copied = Buffer.byteLength(join(destination, rel));
      if (copied >= PATH_MAX_BYTES) stop(`would be ${copied} bytes long as copied (${join(destination, rel).slice(0, 80)}…), over the ${PATH_MAX_BYTES}-byte PATH_MAX: shorten the fixture's paths or --out`);
    }
    const kind = entryKind(stats);
    if (typeof kind !== "string") stop(`is ${kind.what}: fixtures may hold only folders, regular files and links that stay inside them`);
    if (kind === "dir") {
      if ((options.forbidden ?? []).some((f) => f === abs)) stop("is the run directory (--out): a fixture cannot hold the run directory it is copied into; pass an --out outside it");
      await visit({ abs, rel, kind, stats });
      await walk(root, abs, destination, options, visit);
      continue;
    }
    if (kind === "link") {
      const text = await readlink(abs);
      if (isAbsolute(text)) stop(`is a link to the absolute path ${text}: a copy would lead out of the task's workspace; make it relative, inside the fixture`);
      const resolved = await resolveLinkTarget(dirname(abs), text, 0);
      if (resolved === null) stop(`is a link through more than ${MAX_LINK_HOPS} links (a loop?)`);
      if (!isWithinOrSame(root, resolved!)) stop(`is a link leading out of the fixture (to ${resolved}): a copy would lead out of the task's workspace`);
      await visit({ abs, rel, kind, stats, linkText: text });
      continue;
    }
    await visit({ abs, rel, kind: kind as "file", stats });
  }
}

function entryKind(stats: Stats): "dir" | "file" | "link" | { what: string } {
  if (stats.isDirectory()) return "dir";
  if (stats.isFile()) return "file";
  if (stats.isSymbolicLink()) return "link";
  if (stats.isFIFO()) return { what: "a FIFO (named pipe)" };
  if (stats.isSocket()) return { what: "a socket" };
  if (stats.isCharacterDevice()) return { what: "a character device" };
  if (stats.isBlockDevice()) return { what: "a block device" };
  return { what: "not a file, folder or link" };
}

/**
 * Where the link text `target`, read in the canonical folder `dir`, leads — as the kernel
 * resolves it: component by component, `..` taken on the real path reached so far (not on the
 * text), links followed. A missing component ends the walk: the rest is appended as written
 * (normalized). Null after too many links.
 */
async function resolveLinkTarget(dir: string, target: string, hops: number): Promise<string | null> {
  let current = isAbsolute(target) ? sep : dir;
  const parts = target.split("/").filter((p) => p !== "" && p !== ".");
  for (const [index, part] of parts.entries()) {
    if (part === "..") {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    const stats = await lstat(next).catch(() => null);
    if (stats === null) return join(next, ...parts.slice(index + 1));
    if (!stats.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (hops >= MAX_LINK_HOPS) return null;
    const followed = await resolveLinkTarget(current, await readlink(next), hops + 1);
    if (followed === null) return null;
    current = followed;
  }
  return current;
}

/**
 * A regular file, its mode kept. A file with holes (fewer blocks than its size needs) is copied
 * with its holes; any other with copyFile (the kernel copies, nothing passes through memory).
 */
async function copyRegularFile(source: string, target: string, stats: Stats): Promise<void> {
  if (stats.blocks * 512 >= stats.size) {
    await copyFile(source, target, constants.COPYFILE_EXCL);
    return;
  }
  if (!(await copyWithCp(source, target))) await copySparse(source, target, stats);
  await chmod(target, stats.mode & 0o7777);
}

/** `cp --sparse=always` (GNU coreutils finds the holes with SEEK_DATA, which Node lacks); false when cp cannot be run. */
function copyWithCp(source: string, target: string): Promise<boolean> {
  return new Promise((resolveCopy, reject) => {
    execFile("cp", ["--sparse=always", "--no-dereference", "--", source, target], { timeout: 10 * 60_000 }, (err, _stdout, stderr) => {
      if (err === null) resolveCopy(true);
      else if ((err as NodeJS.ErrnoException).code === "ENOENT" || /unrecognized option|invalid option/.test(stderr)) resolveCopy(false);
      // cp that could not start for want of file handles or processes keeps its errno: the machine's limit, not a bad fixture.
      else reject(Object.assign(new Error(`cp ${basename(source)}: ${stderr.trim() || err.message}`, { cause: err }), { code: "EIO", path: target }));
    });
  });
}

/** Copies `source` writing only blocks that hold data, then sets the size: the zero blocks stay holes. */
async function copySparse(source: string, target: string, stats: Stats): Promise<void> {
  let input: FileHandle | undefined;
  let output: FileHandle | undefined;
  try {
    input = await open(source, "r");
    output = await open(target, "w", 0o600);
    const buffer = Buffer.alloc(CHUNK_BYTES);
    for (let offset = 0; offset < stats.size;) {
      const { bytesRead } = await input.read(buffer, 0, CHUNK_BYTES, offset);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      if (!isAllZero(chunk)) await output.write(chunk, 0, bytesRead, offset);
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
