/**
 * The `write_file` tool: creates or replaces a whole file inside the workspace, creating its
 * parent folders, atomically.
 */
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { CancelledError, ToolError } from "../../core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../core/tool.js";
import { writeWorkspaceFile } from "./atomic-write.js";
import { type ScopedPath, resolveInWorkspace } from "../workspace-scope.js";

interface WriteInput { target: ScopedPath; content: string }

async function parse(input: unknown, ctx: ToolContext): Promise<WriteInput> {
  // The input, as the schema below lets it through (the engine checked it).
  const { path, content } = input as { path: string; content: string };
  const target = await resolveInWorkspace(ctx.workspace, path);
  if (target.rel === ".") throw new ToolError(`\`path\` names the workspace root, not a file`);
  return { target, content };
}

export function writeFileTool(): Tool {
  return {
    spec: {
      name: "write_file",
      description:
        "Create a file, or replace a file's whole content, in the workspace. Creates missing parent folders. " +
        "To change part of an existing file, prefer edit_file.",
      inputSchema: {
        type: "object",
        properties: {
          path: { type: "string", description: "File path, relative to the workspace root." },
          content: { type: "string", description: "The complete new content of the file." },
        },
        required: ["path", "content"],
        additionalProperties: false,
      },
    },
    effect: "write",
    async plan(input, ctx): Promise<ToolPlan> {
      return { paths: [(await parse(input, ctx)).target.rel] };
    },
    async run(input, ctx): Promise<ToolResult> {
      const { target, content } = await parse(input, ctx);
      const before = await stat(target.abs).catch(() => null);
      if (before?.isDirectory()) throw new ToolError(`${target.rel} is a directory; give a file path`);
      if (before && !before.isFile()) throw new ToolError(`${target.rel} is not a regular file; not written`);
      await mkdir(dirname(target.abs), { recursive: true }).catch((err: NodeJS.ErrnoException) => {
        throw err.code === "EEXIST" || err.code === "ENOTDIR"
          ? new ToolError(`Cannot create ${target.rel}: a parent of it is a file, not a folder`)
          : err;
      });
      if (ctx.signal.aborted) throw new CancelledError("write_file: cancelled before writing");
      const bytes = Buffer.byteLength(content);
      await writeWorkspaceFile(target.abs, content);
      const what = before ? `replaced ${before.size} bytes` : "new file";
      return { content: `Wrote ${bytes} bytes to ${target.rel} (${what}).` };
    },
  };
}
