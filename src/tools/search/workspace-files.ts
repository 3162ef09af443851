/**
 * Listing the files below a folder of the workspace, the way glob and grep see them (hidden
 * files in, `.git` out, `.gitignore` honoured, symlinks not followed), with ripgrep when there
 * is one and the JavaScript walk otherwise. Both give the same set.
 */
import { lstat, realpath } from "node:fs/promises";
import { join } from "node:path";
import { ToolError } from "../../core/errors.js";
import { walkFiles } from "./file-walk.js";
import { inheritedMatchers, ripgrepIgnoreText } from "./gitignore-rules.js";
import { RG_SCOPE_ARGS, ripgrepNameFilterArgs, runRipgrep, stripDotSlash } from "./ripgrep.js";

export interface ListFilesOptions {
  workspace: string;
  /** Workspace-relative folder, "" for the root. */
  root: string;
  /** The rg binary, or null to walk in JavaScript. */
  rg: string | null;
  /** A hint: only files with names matching this glob are wanted (rg may skip the rest). */
  nameGlob?: string;
  signal: AbortSignal;
}

/** Workspace-relative paths of the files below `root`, unsorted. */
export async function listFiles(opts: ListFilesOptions): Promise<string[]> {
  if (opts.rg === null) return walkFiles(opts.workspace, opts.root, opts.signal);
  const ignoreText = ripgrepIgnoreText(await inheritedMatchers(opts.workspace, opts.root));
  const files: string[] = [];
  const { exitCode, stderr } = await runRipgrep(opts.rg, {
    args: [...RG_SCOPE_ARGS, ...ripgrepNameFilterArgs(opts.nameGlob), "--files", "--null", "--", ripgrepRoot(opts.root)],
    cwd: opts.workspace,
    ignoreRules: ignoreText,
    separator: 0,
    onRecord: (path) => files.push(stripDotSlash(path)),
    signal: opts.signal,
  });
  if (exitCode === 2 && files.length === 0 && stderr.trim() !== "") throw new ToolError(`file search failed: ${stderr.trim()}`);
  return files;
}

/** rg's path argument for a workspace-relative folder (cwd is the workspace). */
export function ripgrepRoot(root: string): string {
  return root === "" ? "." : root;
}

/**
 * The folder a search may start from instead of `root`, given the fixed leading folders of a
 * glob (`src/app` in `src/app/**\/*.ts`): the deeper folder when it is a real folder inside the
 * workspace reached without symlinks, else `root` itself.
 */
export async function narrowRoot(workspace: string, root: string, fixedPrefix: string): Promise<string> {
  if (fixedPrefix === "" || fixedPrefix.includes("\\")) return root;
  const parts = fixedPrefix.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.length === 0 || parts.includes("..")) return root;
  const deeper = root === "" ? parts.join("/") : `${root}/${parts.join("/")}`;
  const abs = join(workspace, deeper);
  const info = await lstat(abs).catch(() => null);
  if (!info?.isDirectory()) return root;
  return (await realpath(abs).catch(() => null)) === abs ? deeper : root;
}

/** Plain code-unit order for paths and names: the same on every machine and locale. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
