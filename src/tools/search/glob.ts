/**
 * The `glob` tool: files matching a glob pattern below a workspace folder, sorted, capped,
 * `.gitignore` honoured. Folders named by the pattern's fixed leading part are searched even
 * when ignored (`dist/**` lists dist); symlinks are not followed.
 */
import { stat } from "node:fs/promises";
import picomatch from "picomatch";
import { ToolError } from "../../core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../core/tool.js";
import { type RipgrepChoice, ripgrepLocator } from "./ripgrep.js";
import { byCodeUnits, listFiles, narrowRoot } from "./workspace-files.js";
import { type ScopedPath, resolveInWorkspace } from "../workspace-scope.js";

/** Paths shown before the rest are counted. */
export const GLOB_MAX_RESULTS = 500;

export interface SearchToolOptions {
  /** Search backend; default "auto" (rg on PATH, else @vscode/ripgrep's, else JavaScript). */
  ripgrep?: RipgrepChoice;
  /** Shared locator, so glob and grep probe for rg once. Overrides `ripgrep`. */
  locateRipgrep?: () => Promise<string | null>;
}

interface GlobInput { pattern: string; dir: ScopedPath }

async function parse(input: unknown, ctx: ToolContext): Promise<GlobInput> {
  // The input, as the schema below lets it through (the engine checked it).
  const { pattern, path = "." } = input as { pattern: string; path?: string };
  checkRelativePattern(pattern, "pattern");
  return { pattern, dir: await resolveInWorkspace(ctx.workspace, path) };
}

/** A pattern is matched below `path`: it may not be absolute or climb out with "..". */
export function checkRelativePattern(pattern: string, field: string): void {
  if (pattern.trim() === "") throw new ToolError(`\`${field}\` is empty`);
  if (pattern.startsWith("/") || pattern.split("/").includes("..")) {
    throw new ToolError(`\`${field}\` must be relative to \`path\` (no leading "/" or ".." parts); set \`path\` to search another folder`);
  }
}

export function globTool(options: SearchToolOptions = {}): Tool {
  const locate = options.locateRipgrep ?? ripgrepLocator(options.ripgrep);
  return {
    spec: {
      name: "glob",
      description:
        "Find files by glob pattern (e.g. \"**/*.ts\", \"src/*.{js,json}\") below a workspace folder. " +
        "Returns sorted workspace-relative paths; files ignored by .gitignore are left out.",
      inputSchema: {
        type: "object",
        properties: {
          pattern: { type: "string", description: "Glob matched against paths relative to `path`." },
          path: { type: "string", description: "Folder to search, relative to the workspace root. Default: the root." },
        },
        required: ["pattern"],
        additionalProperties: false,
      },
    },
    effect: "read",
    async plan(input, ctx): Promise<ToolPlan> {
      return { paths: [(await parse(input, ctx)).dir.rel] };
    },
    async run(input, ctx): Promise<ToolResult> {
      const { pattern, dir } = await parse(input, ctx);
      await requireFolder(dir);
      const root = dir.rel === "." ? "" : dir.rel;
      const matches = await globFiles({ workspace: ctx.workspace, root, pattern, rg: await locate(), signal: ctx.signal });
      return { content: formatPaths(matches, `No files match ${pattern} in ${describeFolder(dir)}.`) };
    },
  };
}

/** "the workspace" for the root, else the relative path: for messages. */
export function describeFolder(dir: ScopedPath): string {
  return dir.rel === "." ? "the workspace" : dir.rel;
}

export async function requireFolder(dir: ScopedPath): Promise<void> {
  const info = await stat(dir.abs).catch(() => null);
  if (!info) throw new ToolError(`No such folder: ${dir.rel}`);
  if (!info.isDirectory()) throw new ToolError(`\`path\` must be a folder; ${dir.rel} is a file`);
}

/** Sorted workspace-relative paths of the files below `root` whose path from `root` matches. */
export async function globFiles(opts: {
  workspace: string; root: string; pattern: string; rg: string | null; signal: AbortSignal;
}): Promise<string[]> {
  const scan = picomatch.scan(opts.pattern);
  const prefix = scan.isGlob ? scan.base : opts.pattern.split("/").slice(0, -1).join("/");
  const start = await narrowRoot(opts.workspace, opts.root, prefix);
  const nameGlob = lastSegment(opts.pattern);
  const files = await listFiles({
    workspace: opts.workspace, root: start, rg: opts.rg, signal: opts.signal, ...(nameGlob ? { nameGlob } : {}),
  });
  const isMatch = picomatch(opts.pattern, { dot: true });
  const cut = opts.root === "" ? 0 : opts.root.length + 1;
  return files.filter((f) => isMatch(f.slice(cut))).sort(byCodeUnits);
}

/**
 * The part of a pattern every matching file name must match (`*.ts` in `src/**\/*.ts`), or
 * undefined when there is none or braces could span folders.
 */
function lastSegment(pattern: string): string | undefined {
  const cut = pattern.lastIndexOf("/");
  const last = pattern.slice(cut + 1);
  if (last === "" || last.includes("**") || pattern.slice(0, cut + 1).includes("{")) return undefined;
  return last;
}

/** One path a line, capped, with a note saying how many were left out. */
export function formatPaths(paths: readonly string[], none: string): string {
  if (paths.length === 0) return none;
  const shown = paths.slice(0, GLOB_MAX_RESULTS);
  const more = paths.length - shown.length;
  const note = more > 0 ? `\n… ${more} more files not shown (${paths.length} in all); narrow the pattern or path` : "";
  return shown.join("\n") + note;
}
