/**
 * The directories a command may run in, as the analysis follows `cd` through a command line:
 * `cd test && echo x > a.js` writes `test/a.js`, `cd test; …` may run in `test` or (when the
 * `cd` failed) where it started, and a `cd` to a place only known at run time makes the set
 * unknown. Directories are kept as `cd` wrote them, joined (`src/../x`), and resolved later,
 * through the file system when there is one.
 */

export interface CwdSet {
  /** Workspace-relative or absolute directory texts; "." is the workspace root. */
  readonly dirs: readonly string[];
  /** True when some `cd` went somewhere that cannot be known statically. */
  readonly unknown: boolean;
}

/** Where a statement leaves the shell: after it succeeded, and after it failed. */
export interface CwdFlow {
  ok: CwdSet;
  fail: CwdSet;
}

/** More directories than this are not tracked one by one: the set becomes unknown. */
const MAX_DIRS = 8;

export const WORKSPACE_ROOT: CwdSet = { dirs: ["."], unknown: false };

export const UNKNOWN_CWD: CwdSet = { dirs: ["."], unknown: true };

export function unionCwds(a: CwdSet, b: CwdSet): CwdSet {
  if (a === b) return a;
  const dirs = [...a.dirs];
  for (const dir of b.dirs) if (!dirs.includes(dir)) dirs.push(dir);
  const unknown = a.unknown || b.unknown || dirs.length > MAX_DIRS;
  return { dirs: dirs.slice(0, MAX_DIRS), unknown };
}

/** The set after `cd dir` from every directory of `from`; `null` is a target only known at run time. */
export function enterDirectory(from: CwdSet, dir: string | null): CwdSet {
  if (dir === null) return { dirs: from.dirs, unknown: true };
  const dirs = dir.startsWith("/") ? [dir] : from.dirs.map((cwd) => (cwd === "." ? dir : `${cwd}/${dir}`));
  return unionCwds({ dirs: [], unknown: from.unknown }, { dirs, unknown: false });
}

/** A statement that does not change directory. */
export function stays(cwd: CwdSet): CwdFlow {
  return { ok: cwd, fail: cwd };
}

/** Everywhere a statement may leave the shell, success or failure. */
export function anyExit(flow: CwdFlow): CwdSet {
  return unionCwds(flow.ok, flow.fail);
}

export function sameCwds(a: CwdSet, b: CwdSet): boolean {
  return a.unknown === b.unknown && a.dirs.length === b.dirs.length && a.dirs.every((d) => b.dirs.includes(d));
}

/** A stable key for maps of paths resolved per directory set. */
export function cwdKey(cwd: CwdSet): string {
  return `${cwd.unknown ? "?" : ""}${cwd.dirs.join("\u0000")}`;
}
