/**
 * `.gitignore` rules for workspace searches (glob, grep), the same for the ripgrep backend and
 * the JavaScript one. Only `.gitignore` files inside the workspace count: none above it, no
 * global excludes, no `.ignore`. A search rooted below the workspace root also obeys the
 * `.gitignore` files of the folders above it (up to the root) — unless those rules ignore the
 * search root itself, in which case the caller asked for an ignored folder by name and gets it.
 *
 * Paths here are workspace-relative and `/`-separated, with "" for the workspace root.
 */
import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

/** The rules of one `.gitignore` file, applying to `dir` and below. */
export interface IgnoreMatcher { dir: string; ig: Ignore; lines: readonly string[] }

/** The rules of `<dir>/.gitignore`, or null when there is no such regular file. */
export async function loadMatcher(workspace: string, dir: string): Promise<IgnoreMatcher | null> {
  const file = join(workspace, dir, ".gitignore");
  const info = await lstat(file).catch(() => null);
  if (!info?.isFile()) return null;
  return makeMatcher(dir, await readFile(file, "utf8"));
}

export function makeMatcher(dir: string, text: string): IgnoreMatcher {
  const lines = text.split(/\r?\n/);
  return { dir, ig: ignore({ ignorecase: false }).add(lines), lines };
}

/** The folders strictly above `root`, from the workspace root down ("" first). */
export function foldersAbove(root: string): string[] {
  if (root === "") return [];
  const parts = root.split("/");
  return parts.map((_, i) => parts.slice(0, i).join("/"));
}

/**
 * The rules a search rooted at `root` starts with: the `.gitignore` files of the folders
 * above it, or none when they ignore `root` itself (see the header).
 */
export async function inheritedMatchers(workspace: string, root: string): Promise<IgnoreMatcher[]> {
  const found = await Promise.all(foldersAbove(root).map((dir) => loadMatcher(workspace, dir)));
  const matchers = found.filter((m): m is IgnoreMatcher => m !== null);
  return isIgnored(matchers, root, true) ? [] : matchers;
}

/**
 * Whether `path` is ignored under `matchers` (shallowest first, each applying below its dir):
 * the deepest file with an opinion decides, as in git.
 */
export function isIgnored(matchers: readonly IgnoreMatcher[], path: string, isDir: boolean): boolean {
  for (let i = matchers.length - 1; i >= 0; i--) {
    const m = matchers[i]!;
    const rel = m.dir === "" ? path : path.slice(m.dir.length + 1);
    if (rel === "") continue;
    const verdict = m.ig.test(isDir ? `${rel}/` : rel);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

/**
 * The inherited rules rewritten as one ignore file for `rg --ignore-file`, whose patterns are
 * matched relative to rg's working directory (the workspace root): anchored patterns get their
 * folder prefixed; unanchored ones apply at any depth below it anyway. Later lines win, so the
 * deeper folders come last.
 */
export function ripgrepIgnoreText(matchers: readonly IgnoreMatcher[]): string {
  const out: string[] = [];
  for (const m of matchers) {
    for (const line of m.lines) {
      const rule = rebaseRule(m.dir, line);
      if (rule !== null) out.push(rule);
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

/** One `.gitignore` line of folder `dir`, as a rule relative to the workspace root. */
export function rebaseRule(dir: string, line: string): string | null {
  if (line.trim() === "" || line.startsWith("#")) return null;
  const negated = line.startsWith("!");
  const body = negated ? line.slice(1) : line;
  if (dir === "") return line;
  const core = body.endsWith("/") ? body.slice(0, -1) : body;
  if (!core.includes("/")) return line;
  const rest = body.startsWith("/") ? body.slice(1) : body;
  return `${negated ? "!" : ""}/${escapeGlob(dir)}/${rest}`;
}

function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]{}!]/g, "\\$&");
}
