/**
 * What a task's fixture (`workspace.from`) and its copy may hold. The copy must be a world of its
 * own: nothing in it may lead back to the user's files or the machine's, since the agent's tools
 * and shell read and write there (with `--sandbox off`, a link leads wherever it points). So a
 * tree may hold only
 *
 *   a folder, a regular file, or a relative link that resolves inside the tree
 *
 * and anything else is a problem naming the entry: FIFOs, sockets and devices (a copy would open
 * them, or hand the agent a host socket), absolute links and links that climb out (to `/proc`,
 * `/dev`, the user's home), a path that grows past PATH_MAX where it is copied, and the run
 * directory itself (a fixture holding `--out` would copy itself without end).
 *
 * The fixture is checked when tasks load (validate and run, before anything is written), and each
 * copy is checked again after it is made (fixture-copy.ts): the folder entries are read with their
 * types (no stat per file), links alone are read and resolved.
 */
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import type { Dirent } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";
import { RhemaError } from "../../core/errors.js";
import { isWithinOrSame } from "./canonical-path.js";

/** The longest path Linux takes (bytes, with its NUL): a copy's entry must stay below it. */
export const PATH_MAX_BYTES = 4096;
/** Links followed while resolving one link's target, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;
/** Folders read at once while checking a tree. */
const FOLDERS_AT_ONCE = 16;

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
  return (await forbiddenProblem(root, options.forbidden ?? [])) ?? checkTree(root, { destination: options.destination ?? null, nameRoot: root });
}

/** The run directory inside the fixture (both canonical: no walk needed), or null. */
export async function forbiddenProblem(root: string, forbidden: readonly string[]): Promise<FixtureProblem | null> {
  const inside = forbidden.filter((f) => f !== root && isWithinOrSame(root, f)).sort()[0];
  if (inside === undefined) return null;
  return { path: inside, message: "is the run directory (--out): a fixture cannot hold the run directory it is copied into; pass an --out outside it" };
}

export interface TreeCheckOptions {
  /** Where the tree's entries end up, for the PATH_MAX check; null: not checked. */
  destination: string | null;
  /** The folder a problem's path is named under (the fixture, when a copy is checked). */
  nameRoot: string;
}

/**
 * The first problem in the canonical folder `root` (in path order), or null. Links resolve
 * against `root` itself: for a copy, the copy is what the agent will use.
 */
export async function checkTree(root: string, options: TreeCheckOptions): Promise<FixtureProblem | null> {
  const problems: { rel: string; message: string }[] = [];
  const pending: string[] = [""];
  let active = 0;
  await new Promise<void>((resolveAll, rejectAll) => {
    const pump = (): void => {
      while (active < FOLDERS_AT_ONCE && pending.length > 0) {
        const rel = pending.pop()!;
        active++;
        checkFolder(root, rel, options.destination).then((found) => {
          pending.push(...found.folders);
          problems.push(...found.problems);
          active--;
          if (active === 0 && pending.length === 0) resolveAll();
          else pump();
        }, rejectAll);
      }
    };
    pump();
  });
  const first = problems.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))[0];
  return first === undefined ? null : { path: join(options.nameRoot, first.rel), message: first.message };
}

async function checkFolder(root: string, rel: string, destination: string | null): Promise<{ folders: string[]; problems: { rel: string; message: string }[] }> {
  const folders: string[] = [];
  const problems: { rel: string; message: string }[] = [];
  for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
    const entryRel = rel === "" ? entry.name : join(rel, entry.name);
    const message = await entryProblem(root, entryRel, entry, destination);
    if (message !== null) problems.push({ rel: entryRel, message });
    else if (entry.isDirectory() || (isUnknown(entry) && (await lstat(join(root, entryRel))).isDirectory())) folders.push(entryRel);
  }
  return { folders, problems };
}

function isUnknown(entry: Dirent): boolean {
  return !entry.isDirectory() && !entry.isFile() && !entry.isSymbolicLink() && !entry.isFIFO() && !entry.isSocket() && !entry.isCharacterDevice() && !entry.isBlockDevice();
}

async function entryProblem(root: string, rel: string, entry: Dirent, destination: string | null): Promise<string | null> {
  const abs = join(root, rel);
  if (destination !== null) {
    const copied = join(destination, rel);
    const bytes = Buffer.byteLength(copied);
    if (bytes >= PATH_MAX_BYTES) return `would be ${bytes} bytes long as copied (${copied.slice(0, 80)}…), over the ${PATH_MAX_BYTES}-byte PATH_MAX: shorten the fixture's paths or --out`;
  }
  // A file system that gives no entry types (DT_UNKNOWN) is asked with lstat.
  const kind = isUnknown(entry) ? kindOf(await lstat(abs)) : kindOf(entry);
  if (typeof kind !== "string") return `is ${kind.what}: fixtures may hold only folders, regular files and links that stay inside them`;
  if (kind !== "link") return null;
  const text = await readlink(abs);
  if (isAbsolute(text)) return `is a link to the absolute path ${text}: a copy would lead out of the task's workspace; make it relative, inside the fixture`;
  const resolved = await resolveLinkTarget(dirname(abs), text, 0);
  if (resolved === null) return `is a link through more than ${MAX_LINK_HOPS} links (a loop?)`;
  if (!isWithinOrSame(root, resolved)) return `is a link leading out of the fixture (to ${resolved}): a copy would lead out of the task's workspace`;
  return null;
}

type EntryType = Pick<Dirent, "isDirectory" | "isFile" | "isSymbolicLink" | "isFIFO" | "isSocket" | "isCharacterDevice" | "isBlockDevice">;

function kindOf(entry: EntryType): "dir" | "file" | "link" | { what: string } {
  if (entry.isDirectory()) return "dir";
  if (entry.isFile()) return "file";
  if (entry.isSymbolicLink()) return "link";
  if (entry.isFIFO()) return { what: "a FIFO (named pipe)" };
  if (entry.isSocket()) return { what: "a socket" };
  if (entry.isCharacterDevice()) return { what: "a character device" };
  if (entry.isBlockDevice()) return { what: "a block device" };
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
