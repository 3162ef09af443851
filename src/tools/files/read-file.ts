/**
 * The `read_file` tool: a file's lines, numbered, within a line and byte budget, with a note
 * that says how to read on. Images the model can see come back as an image block; any other
 * binary file is described, never dumped.
 */
import { open, readFile, stat } from "node:fs/promises";
import { ToolError } from "../../core/errors.js";
import type { ImageMediaType } from "../../core/messages.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../core/tool.js";
import { SNIFF_BYTES, sniffFileKind } from "./file-kind.js";
import { type LineWindow, readLineWindow } from "./line-window.js";
import { type ScopedPath, resolveInWorkspace } from "../workspace-scope.js";

/** Lines returned when the call gives no `limit`, and the most it may ask for. */
export const READ_MAX_LINES = 2000;
/** Budget for the numbered text of one call. */
export const READ_MAX_BYTES = 50_000;
/** Longer lines are cut. */
export const READ_MAX_LINE_CHARS = 2000;
/** Larger images are described instead of sent. */
export const READ_MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** The input, as the schema below lets it through (the engine checked it). */
interface ReadFileInput { path: string; offset?: number; limit?: number }

interface ReadInput { target: ScopedPath; offset: number; limit: number }

async function parse(input: unknown, ctx: ToolContext): Promise<ReadInput> {
  const { path, offset = 1, limit = READ_MAX_LINES } = input as ReadFileInput;
  return { target: await resolveInWorkspace(ctx.workspace, path), offset, limit };
}

export function readFileTool(): Tool {
  return {
    spec: {
      name: "read_file",
      description:
        "Read a text file from the workspace, as numbered lines. Reads up to 2000 lines or 50 KB per call; " +
        "use offset and limit to read a long file in parts. Images (png, jpeg, gif, webp) are returned as images.",
      inputSchema: {
        type: "object",
        properties: {
          path: { type: "string", description: "File path, relative to the workspace root." },
          offset: { type: "integer", minimum: 1, description: "Line number to start at (1-based). Default 1." },
          limit: { type: "integer", minimum: 1, maximum: READ_MAX_LINES, description: "Most lines to return. Default 2000." },
        },
        required: ["path"],
        additionalProperties: false,
      },
    },
    effect: "read",
    async plan(input, ctx): Promise<ToolPlan> {
      return { paths: [(await parse(input, ctx)).target.rel] };
    },
    async run(input, ctx): Promise<ToolResult> {
      const { target, offset, limit } = await parse(input, ctx);
      const info = await stat(target.abs).catch((err: NodeJS.ErrnoException) => {
        throw err.code === "ENOENT" || err.code === "ENOTDIR" ? new ToolError(`No such file: ${target.rel}`) : err;
      });
      if (info.isDirectory()) throw new ToolError(`${target.rel} is a directory; use list_dir to see what is in it`);
      if (!info.isFile()) throw new ToolError(`${target.rel} is not a regular file (a device, socket or pipe); not read`);
      return readRegularFile(target, info.size, { offset, limit, signal: ctx.signal });
    },
  };
}

async function readRegularFile(
  target: ScopedPath,
  size: number,
  opts: { offset: number; limit: number; signal: AbortSignal },
): Promise<ToolResult> {
  if (size === 0) return { content: `${target.rel} is empty (0 bytes).` };
  const handle = await open(target.abs, "r");
  let window: LineWindow;
  try {
    const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
    await handle.read(head, 0, head.length, 0);
    const kind = sniffFileKind(head);
    if (kind.kind === "image") return readImage(target, size, kind.mediaType);
    if (kind.kind === "binary") {
      return {
        content: `${target.rel} is a binary file (${kind.description}, ${size} bytes); not shown. ` +
          `Use shell (e.g. \`file\`, \`xxd ${target.rel} | head\`) to inspect it.`,
      };
    }
    window = await readLineWindow(handle, {
      offset: opts.offset, limit: opts.limit, maxBytes: READ_MAX_BYTES, maxLineChars: READ_MAX_LINE_CHARS, signal: opts.signal,
    });
  } finally {
    await handle.close();
  }
  if (window.lines.length === 0) {
    throw new ToolError(`offset ${opts.offset} is past the end of ${target.rel} (${window.totalLines ?? "?"} lines)`);
  }
  return { content: formatWindow(window) };
}

async function readImage(target: ScopedPath, size: number, mediaType: ImageMediaType): Promise<ToolResult> {
  if (size > READ_MAX_IMAGE_BYTES) {
    return { content: `${target.rel} is an image (${mediaType}, ${size} bytes), too large to show (limit ${READ_MAX_IMAGE_BYTES} bytes).` };
  }
  const data = (await readFile(target.abs)).toString("base64");
  return {
    content: [
      { type: "text", text: `${target.rel}: ${mediaType}, ${size} bytes` },
      { type: "image", mediaType, data },
    ],
  };
}

/** Numbered lines, then a note when the window ended before the file did. */
export function formatWindow(window: LineWindow): string {
  const last = window.lines[window.lines.length - 1]?.n ?? 0;
  const width = String(last).length;
  const out = window.lines.map((l) => `${String(l.n).padStart(width)}\t${l.text}${l.cut ? " … [line cut]" : ""}`);
  if (window.lines.some((l) => l.cut)) {
    out.push(`(lines longer than ${READ_MAX_LINE_CHARS} characters were cut; use shell, e.g. \`cut -c\`, to see them whole)`);
  }
  if (window.stoppedBy !== null) {
    const left = window.totalLines === null ? null : window.totalLines - last;
    const more = left === null ? "more lines" : `${left} more line${left === 1 ? "" : "s"}`;
    const why = window.stoppedBy === "bytes" ? ` (output capped at ${READ_MAX_BYTES} bytes)` : "";
    out.push(`… ${more}${why}; call read_file with offset=${last + 1} to read on`);
  }
  return out.join("\n");
}
