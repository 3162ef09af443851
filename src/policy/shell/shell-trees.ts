/**
 * The file system side of path resolution: walking a path component by component through
 * symlinks (as the kernel does, dangling links included), and walking a folder a command reads
 * whole — `grep -r x src` reads every file under src, `grep -R` also every file behind the links
 * there — to list what it would read, and which of its links lead out of the workspace. The walk
 * is bounded; a folder too big to walk is reported as not fully seen, which a deny rule treats as
 * "could hold anything".
 */
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** Resolves one path's symlinks; null when nothing exists there. */
export type Realpath = (path: string) => Promise<string | null>;

/** What a folder read whole holds. */
export type TreeFacts =
  | {
    kind: "walked";
    /** Workspace-relative paths of everything read: the folder, what is under it, and (following links) what they lead to. */
    entries: string[];
    /** Where links inside lead out of the workspace (only when links are followed). */
    outside: string[];
    /** False when the walk stopped at its bound: there may be more. */
    complete: boolean;
  }
  | { kind: "unwalked" };

/**
 * What the deciding policy looks for under folders, so a walk can skip what cannot matter and
 * stop at the first thing that decides. Without one, a walk lists everything (within its bound).
 */
export interface TreeInterest {
  /** True when something under the folder (workspace-relative) could be a path the policy denies. */
  couldHold(folder: string): boolean;
  /** True when the path is one the policy denies. */
  denies(path: string): boolean;
}

/** Links followed for one dangling-link chain before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;

/** Walks `text` from `base` component by component; `real` resolves symlinks (null: does not exist). */
export async function walkPath(base: string, text: string, real: Realpath | null): Promise<string> {
  let current = isAbsolute(text) ? "/" : base;
  for (const part of text.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = resolve(current, "..");
      continue;
    }
    current = join(current, part);
    if (real) current = (await real(current)) ?? current;
  }
  return current;
}

/**
 * The canonical path, or null when nothing exists there. A dangling symlink is followed through
 * its text: writing through it creates the file where it points, which may be outside.
 */
async function realpathOrNull(path: string, hops = 0): Promise<string | null> {
  try {
    return await realpath(path);
  } catch {
    const stat = await lstat(path).catch(() => null);
    if (stat === null || !stat.isSymbolicLink() || hops >= MAX_LINK_HOPS) return null;
    const target = await readlink(path).catch(() => null);
    if (target === null) return null;
    return walkPath(dirname(path), target, (next) => realpathOrNull(next, hops + 1));
  }
}

/** One decision's paths share prefixes (the workspace, src/, …): look each up once. */
export function memoizedRealpath(): Realpath {
  const seen = new Map<string, Promise<string | null>>();
  return (path) => {
    let found = seen.get(path);
    if (found === undefined) seen.set(path, (found = realpathOrNull(path)));
    return found;
  };
}

function relativeInside(workspace: string, absolute: string): string | null {
  const rel = relative(workspace, absolute);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join("/");
}

/**
 * Walks the folders `starts` (workspace-relative, already resolved) and lists what reading them
 * whole reads. `follow`: links inside are followed (their targets listed, outside ones noted).
 * With `interest`, only denied paths are listed, folders that cannot hold one are skipped (unless
 * links are followed), and the walk stops at the first denied path or way out. `budget.entries`
 * bounds the total across one decision. `linkedEntries`: only the starts' own entries are looked
 * at, and of those only what their links lead to is listed (`ls -L dir` stats each entry
 * through its link, no deeper; the plain entries are the names `ls dir` lists anyway).
 */
export async function walkTree(
  workspace: string, starts: readonly string[], follow: boolean, budget: { entries: number }, interest?: TreeInterest, linkedEntries = false,
): Promise<TreeFacts> {
  const entries: string[] = [];
  const outside: string[] = [];
  const visited = new Set<string>();
  const queue = starts.map((s) => join(workspace, s));
  const done = (complete: boolean): TreeFacts => ({ kind: "walked", entries, outside, complete });
  /** Notes a path read; true when the walk can stop (a denied path found). */
  const note = (path: string): boolean => {
    if (interest === undefined) entries.push(path);
    else if (interest.denies(path)) {
      entries.push(path);
      return true;
    }
    return false;
  };
  while (queue.length > 0) {
    const dir = queue.shift()!;
    const rel = relativeInside(workspace, dir);
    if (rel === null) {
      outside.push(dir);
      if (interest !== undefined) return done(true);
      continue;
    }
    if (visited.has(dir)) continue;
    visited.add(dir);
    if (note(rel)) return done(true);
    if (interest !== undefined && !follow && !interest.couldHold(rel)) continue;
    const children = await readdir(dir, { withFileTypes: true }).catch(() => null);
    if (children === null) continue;
    for (const child of children) {
      if (--budget.entries < 0) return done(false);
      const path = join(dir, child.name);
      if (linkedEntries && !child.isSymbolicLink()) continue;
      if (child.isDirectory()) queue.push(path);
      else if (child.isSymbolicLink() && follow) {
        const target = await realpathOrNull(path);
        if (target === null) continue;
        const inside = relativeInside(workspace, target);
        if (inside === null) {
          outside.push(target);
          if (interest !== undefined) return done(true);
        } else if (!linkedEntries && (await lstat(target).catch(() => null))?.isDirectory()) queue.push(target);
        else if (note(inside)) return done(true);
      } else if (note(relativeInside(workspace, path) ?? path)) return done(true);
    }
  }
  return done(true);
}
