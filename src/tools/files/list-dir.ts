/**
 * The `list_dir` tool: one folder's entries with their kind and size, sorted by name, `.git`
 * left out. A symlink shows its target and whether that lies outside the workspace.
 */
import { lstat, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { ToolError } from "../../core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../core/tool.js";
import { byCodeUnits } from "../search/workspace-files.js";
import { type ScopedPath, canonicalize, isInsideWorkspace, resolveInWorkspace } from "../workspace-scope.js";

/** Entries shown before the rest are counted. */
export const LIST_MAX_ENTRIES = 1000;

export interface DirEntryInfo { name: string; kind: "dir" | "file" | "symlink" | "other"; size: number | null; note?: string }

async function parse(input: unknown, ctx: ToolContext): Promise<ScopedPath> {
  // The input, as the schema below lets it through (the engine checked it).
  const { path = "." } = input as { path?: string };
  return resolveInWorkspace(ctx.workspace, path);
}

export function listDirTool(): Tool {
  return {
    spec: {
      name: "list_dir",
      description: "List a workspace folder: each entry's kind (dir, file, symlink) and size in bytes, sorted by name.",
      inputSchema: {
        type: "object",
        properties: {
          path: { type: "string", description: "Folder path, relative to the workspace root. Default: the root." },
        },
        additionalProperties: false,
      },
    },
    effect: "read",
    async plan(input, ctx): Promise<ToolPlan> {
      return { paths: [(await parse(input, ctx)).rel] };
    },
    async run(input, ctx): Promise<ToolResult> {
      const dir = await parse(input, ctx);
      const dirents = await readdir(dir.abs, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") throw new ToolError(`No such folder: ${dir.rel}`);
        if (err.code === "ENOTDIR") throw new ToolError(`${dir.rel} is a file, not a folder; use read_file`);
        throw err;
      });
      const names = dirents.map((d) => d.name).filter((n) => n !== ".git").sort(byCodeUnits);
      const shown = names.slice(0, LIST_MAX_ENTRIES);
      const entries = await Promise.all(shown.map((name) => describeEntry(ctx.workspace, join(dir.abs, name), name)));
      return { content: formatEntries(dir.rel, entries, names.length - shown.length) };
    },
  };
}

async function describeEntry(workspace: string, abs: string, name: string): Promise<DirEntryInfo> {
  const info = await lstat(abs).catch(() => null);
  if (!info) return { name, kind: "other", size: null, note: "vanished while listing" };
  if (info.isDirectory()) return { name, kind: "dir", size: null };
  if (info.isFile()) return { name, kind: "file", size: info.size };
  if (!info.isSymbolicLink()) return { name, kind: "other", size: null };
  const target = await readlink(abs);
  const resolved = await canonicalize(abs).catch(() => null);
  if (!resolved || !isInsideWorkspace(workspace, resolved)) {
    return { name, kind: "symlink", size: null, note: `-> ${target} (outside the workspace)` };
  }
  const pointee = await stat(resolved).catch(() => null);
  const what = !pointee ? "broken" : pointee.isDirectory() ? "dir" : pointee.isFile() ? `file, ${pointee.size} bytes` : "other";
  return { name, kind: "symlink", size: null, note: `-> ${target} (${what})` };
}

/** `kind size name` rows; folders end in `/`. */
export function formatEntries(rel: string, entries: readonly DirEntryInfo[], omitted: number): string {
  if (entries.length === 0) return `${rel} is an empty folder.`;
  const width = Math.max(1, ...entries.map((e) => String(e.size ?? "-").length));
  const rows = entries.map((e) => {
    const name = e.kind === "dir" ? `${e.name}/` : e.name;
    const size = String(e.size ?? "-").padStart(width);
    return `${e.kind.padEnd(7)} ${size}  ${name}${e.note ? ` ${e.note}` : ""}`;
  });
  if (omitted > 0) rows.push(`… ${omitted} more entries not shown; use glob with a pattern to narrow the listing`);
  return rows.join("\n");
}
