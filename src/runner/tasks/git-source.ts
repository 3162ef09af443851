/**
 * `workspace.git`: where a git workspace's commits come from, told apart as git tells them — a
 * URL (`scheme://…`, or scp-like `user@host:path`, a colon before any slash) or a local path
 * (relative to the task file). Both reach the workspace through the run's mirror
 * (execute/git-mirror.ts); this module names the source and checks, when the task file loads,
 * that a path is a repository `git clone` accepts: a work tree's root (`.git` folder or file) or a
 * bare repository (`HEAD`, `objects/`, `refs/`).
 */
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** The repository a git workspace is cloned from, and the ref as written (resolved at run time). */
export type GitSource =
  | { kind: "url"; url: string; ref: string }
  | { kind: "path"; path: string; ref: string };

const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const SCP_PATTERN = /^[^/:]+:/;

/** `git` as written in the task file at `folder`: a URL kept as it is, a path made absolute. */
export function gitSource(git: string, ref: string, folder: string): GitSource {
  // A one-letter "scheme" is a Windows drive (C:\repo), never a host: git reads it as a path too.
  if (URL_PATTERN.test(git) || (SCP_PATTERN.test(git) && !/^[A-Za-z]:/.test(git))) return { kind: "url", url: git, ref };
  return { kind: "path", path: resolve(folder, git), ref };
}

/** What the source is called in messages: the URL, or the path. */
export function gitSourceName(source: GitSource): string {
  return source.kind === "url" ? source.url : source.path;
}

/** Why the path is no repository to clone, or null when it is one. */
export async function gitRepositoryProblem(path: string): Promise<string | null> {
  const kind = async (p: string) => stat(p).then((s) => (s.isDirectory() ? "dir" : s.isFile() ? "file" : "other"), () => null);
  const self = await kind(path);
  if (self === null) return `repository not found: ${path}`;
  if (self !== "dir") return `not a folder: ${path}`;
  if ((await kind(join(path, ".git"))) !== null) return null;
  const bare = (await kind(join(path, "HEAD"))) === "file" && (await kind(join(path, "objects"))) === "dir" && (await kind(join(path, "refs"))) === "dir";
  return bare ? null : `not a git repository (no .git, and not a bare repository): ${path}`;
}
