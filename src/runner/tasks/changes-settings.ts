/**
 * What a trial's `changes.patch` covers (`workspace.changes` of a task file): the paths it leaves
 * out, the paths it keeps although an exclude matches them, and its size cap. Pure: the patterns
 * become git pathspecs here, and workspace-changes.ts hands them to git.
 *
 * A pattern is written like a .gitignore line, without negation:
 *
 *   name        a file or folder of that name at any depth (`package-lock.json`, `node_modules`)
 *   name/       a folder of that name at any depth, with everything in it (`dist/`)
 *   a/b, a/b/   that path from the workspace's root (and everything under it)
 *   * and **    glob within a name, and across folders
 *
 * The defaults leave out what a patch should not carry: lockfiles (a 78 MB patch of a regenerated
 * lockfile is the classic), installed dependencies and build output. `include:` keeps a path any
 * exclude would leave out (`include: [package-lock.json]`).
 */
import type { TaskFileContent } from "./task-schema.js";

/** The default cap on a changes.patch: 1 MiB. */
export const DEFAULT_CHANGES_MAX_BYTES = 1024 * 1024;

/** Lockfiles of the common package managers: regenerated wholesale, rarely the change under review. */
export const DEFAULT_LOCKFILES = [
  "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock",
  "Cargo.lock", "poetry.lock", "Pipfile.lock", "uv.lock", "pdm.lock", "go.sum", "Gemfile.lock", "composer.lock", "mix.lock", "pubspec.lock",
] as const;

/** Installed dependencies, caches and build output. */
export const DEFAULT_OUTPUT_FOLDERS = [
  "node_modules/", "dist/", "build/", "target/", "__pycache__/", ".venv/", "venv/", ".tox/", ".pytest_cache/", ".mypy_cache/", ".next/", ".gradle/",
] as const;

export const DEFAULT_CHANGES_EXCLUDE: readonly string[] = [...DEFAULT_LOCKFILES, ...DEFAULT_OUTPUT_FOLDERS];

/** A task's changes settings, defaults applied. */
export interface ChangesSettings {
  /** The defaults and the task's own `exclude`. */
  exclude: string[];
  include: string[];
  maxBytes: number;
}

/** The settings a task's `workspace.changes` (absent: the defaults) comes to. */
export function changesSettings(written: NonNullable<TaskFileContent["workspace"]>["changes"] | undefined): ChangesSettings {
  return {
    exclude: [...new Set([...DEFAULT_CHANGES_EXCLUDE, ...(written?.exclude ?? [])])],
    include: [...new Set(written?.include ?? [])],
    maxBytes: written?.maxBytes ?? DEFAULT_CHANGES_MAX_BYTES,
  };
}

/** The git pathspecs (glob magic) that match what `pattern` names, the folder's contents included. */
export function patternPathspecs(pattern: string): string[] {
  const folderOnly = pattern.endsWith("/");
  const body = pattern.replace(/\/+$/, "");
  // A name without a slash matches at any depth, as in .gitignore.
  const anchored = body.includes("/") ? body : `**/${body}`;
  return folderOnly ? [`${anchored}/**`] : [anchored, `${anchored}/**`];
}

/** `git add` pathspecs: the whole workspace but what `exclude` leaves out. */
export function excludePathspecs(settings: ChangesSettings): string[] {
  return [".", ...settings.exclude.flatMap(patternPathspecs).map((spec) => `:(exclude,glob)${spec}`)];
}

/** Pathspecs of what `include` keeps (none when it is empty). */
export function includePathspecs(settings: ChangesSettings): string[] {
  return settings.include.flatMap(patternPathspecs).map((spec) => `:(glob)${spec}`);
}

/**
 * Whether an exclude may match one of `files` (paths of files or links, not folders): false only
 * when none can — every pattern a plain name or path (no `*`, `?`, `[`, `\`) that no file is named
 * by or lies under. A layered trial's end then has no excluded file to take out of its stage, and
 * no git need look (a process a trial).
 */
export function mayExclude(settings: ChangesSettings, files: readonly string[]): boolean {
  return settings.exclude.some((pattern) => {
    const body = pattern.replace(/\/+$/, "");
    // A glob, or a path git would read otherwise than as written (`/a`, `./a`, `a//b`): git looks.
    if (/[*?[\\]/.test(body) || body.split("/").some((name) => name === "" || name === "." || name === "..")) return true;
    const folderOnly = pattern.endsWith("/");
    if (body.includes("/")) return files.some((file) => (file === body && !folderOnly) || file.startsWith(`${body}/`));
    // A name matches a file of that name, or a folder of that name above a file.
    return files.some((file) => {
      const names = file.split("/");
      return names.some((name, at) => name === body && (!folderOnly || at < names.length - 1));
    });
  });
}
