/**
 * Workspace scope: turns a path the model gave into a canonical absolute path and refuses it
 * unless it lies inside the workspace. Canonical means symlinks resolved — for a path that does
 * not exist yet, the deepest existing ancestor is resolved and the rest appended, and a dangling
 * symlink is followed through its text, so a write can never land behind a link that points out.
 * Every built-in tool resolves through here, in `plan` and again in `run`.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ToolError } from "../core/errors.js";

/** Links followed while resolving one path before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;

/** A path resolved inside the workspace. */
export interface ScopedPath {
  /** Canonical absolute path: the one to do I/O on. */
  abs: string;
  /** Workspace-relative, `/`-separated; "." for the root. */
  rel: string;
}

/** True when `abs` is `workspace` itself or below it. Both must be canonical absolute paths. */
export function isInsideWorkspace(workspace: string, abs: string): boolean {
  if (!isAbsolute(abs)) return false;
  if (abs === workspace) return true;
  const root = workspace.endsWith(sep) ? workspace : workspace + sep;
  return abs.startsWith(root);
}

/** The workspace-relative, `/`-separated form of an absolute path inside it ("." for the root). */
export function toWorkspaceRelative(workspace: string, abs: string): string {
  const rel = relative(workspace, abs);
  return rel === "" ? "." : rel.split(sep).join("/");
}

/**
 * Resolves symlinks along `abs` like realpath(3), but also for paths that do not exist yet:
 * the missing tail is appended to the canonical form of the deepest existing ancestor, and a
 * dangling symlink on the way is followed through its target text.
 */
export async function canonicalize(abs: string, hops = 0): Promise<string> {
  try {
    return await realpath(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new ToolError(`${abs}: too many levels of symbolic links`);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
  }
  const tail: string[] = [];
  let head = abs;
  for (;;) {
    const found = await lstat(head).catch(() => null);
    if (found) {
      if (!found.isSymbolicLink()) return join(await realpath(head), ...tail);
      if (hops >= MAX_LINK_HOPS) throw new ToolError(`${abs}: too many levels of symbolic links`);
      const target = await readlink(head);
      return canonicalize(resolve(dirname(head), target, ...tail), hops + 1);
    }
    const parent = dirname(head);
    if (parent === head) return abs;
    tail.unshift(basename(head));
    head = parent;
  }
}

/** Why a path string cannot even be looked at, or null when it is a usable path. */
export function pathSyntaxProblem(path: string): string | null {
  if (path.length === 0) return "is empty";
  if (path.includes("\0")) return "contains a NUL byte";
  return null;
}

/**
 * Resolves `path` (relative to the workspace, or absolute) to a canonical path inside the
 * workspace, or throws a `ToolError` naming the path and the workspace. `field` names the input
 * field in messages. `workspace` must be canonical (ToolContext guarantees it).
 */
export async function resolveInWorkspace(workspace: string, path: string, field = "path"): Promise<ScopedPath> {
  const problem = pathSyntaxProblem(path);
  if (problem) throw new ToolError(`\`${field}\` ${problem}`);
  const lexical = resolve(workspace, path);
  const abs = await canonicalize(lexical);
  if (!isInsideWorkspace(workspace, abs)) throw outsideError(workspace, path, abs);
  return { abs, rel: toWorkspaceRelative(workspace, abs) };
}

function outsideError(workspace: string, path: string, abs: string): ToolError {
  const via = abs === resolve(workspace, path) ? "" : ` (it resolves to ${abs})`;
  return new ToolError(
    `Path "${path}" is outside the workspace ${workspace}${via}. Tools can only use paths inside the workspace.`,
  );
}
