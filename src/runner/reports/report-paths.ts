/**
 * Task file paths as reports show them: relative to the repository the file is in (the
 * nearest folder above it holding `.git`, a folder or a worktree's file), else to the working
 * directory the run was started from, `/`-separated — what JUnit consumers such as
 * action-junit-report resolve against the checkout. A file outside both keeps its absolute path.
 */
import { access } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, sep } from "node:path";

/** The display path of each file, by its absolute path. */
export async function repositoryRelativePaths(files: readonly string[], cwd: string | null): Promise<Record<string, string>> {
  const roots = new Map<string, string | null>();
  const out: Record<string, string> = {};
  for (const file of new Set(files)) {
    const root = await repositoryRoot(dirname(file), roots);
    const shown = relativeInside(root ?? cwd, file);
    if (shown !== null) out[file] = shown;
  }
  return out;
}

/** A folder's display path, as `repositoryRelativePaths` shows a file; null outside both the repository and `cwd` (or at their root). */
export async function repositoryRelativeDir(dir: string, cwd: string | null): Promise<string | null> {
  const root = await repositoryRoot(dir, new Map());
  return relativeInside(root ?? cwd, dir);
}

/** The nearest folder at or above `dir` that holds `.git`; null when none does. Lookups are cached per folder. */
async function repositoryRoot(dir: string, cache: Map<string, string | null>): Promise<string | null> {
  const visited: string[] = [];
  let current = dir;
  let found: string | null = null;
  for (;;) {
    const known = cache.get(current);
    if (known !== undefined) {
      found = known;
      break;
    }
    visited.push(current);
    if (await exists(join(current, ".git"))) {
      found = current;
      break;
    }
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of visited) cache.set(folder, found);
  return found;
}

function relativeInside(base: string | null, file: string): string | null {
  if (base === null) return null;
  const rel = relative(base, file);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join("/");
}

function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}
