/**
 * The `edit_file` tool: exact string replacement in a workspace file, written atomically.
 * No match is an error that shows the closest lines; several matches without `replaceAll`
 * is an error naming their line numbers.
 */
import { readFile, stat } from "node:fs/promises";
import { CancelledError, ToolError } from "../../core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../../core/tool.js";
import { writeWorkspaceFile } from "./atomic-write.js";
import { findClosestLines } from "./closest-lines.js";
import { type ScopedPath, resolveInWorkspace } from "../workspace-scope.js";

/** Line numbers listed in a message before "…". */
const MAX_LISTED = 20;

/** The input, as the schema below lets it through (the engine checked it). */
interface EditFileInput { path: string; old: string; new: string; replaceAll?: boolean }

interface EditInput { target: ScopedPath; old: string; new: string; replaceAll: boolean }

async function parse(input: unknown, ctx: ToolContext): Promise<EditInput> {
  const { path, old, new: replacement, replaceAll = false } = input as EditFileInput;
  if (old === "") throw new ToolError("`old` is empty; give the exact text to replace (to create a file, use write_file)");
  if (old === replacement) throw new ToolError("`old` and `new` are the same; nothing would change");
  return { target: await resolveInWorkspace(ctx.workspace, path), old, new: replacement, replaceAll };
}

export function editFileTool(): Tool {
  return {
    spec: {
      name: "edit_file",
      description:
        "Replace exact text in a workspace file. `old` must match the file exactly (whitespace included) and, " +
        "unless replaceAll is true, exactly once; include surrounding lines to make it unique.",
      inputSchema: {
        type: "object",
        properties: {
          path: { type: "string", description: "File path, relative to the workspace root." },
          old: { type: "string", description: "The exact text to replace." },
          new: { type: "string", description: "The text to put in its place." },
          replaceAll: { type: "boolean", description: "Replace every occurrence. Default false." },
        },
        required: ["path", "old", "new"],
        additionalProperties: false,
      },
    },
    effect: "write",
    async plan(input, ctx): Promise<ToolPlan> {
      return { paths: [(await parse(input, ctx)).target.rel] };
    },
    async run(input, ctx): Promise<ToolResult> {
      const edit = await parse(input, ctx);
      const text = await readText(edit.target);
      const { old, replacement, starts } = locate(text, edit);
      if (starts.length > 1 && !edit.replaceAll) {
        throw new ToolError(
          `\`old\` matches ${starts.length} places in ${edit.target.rel} (lines ${listLines(text, starts)}); ` +
            "include more surrounding lines to make it unique, or set replaceAll: true",
        );
      }
      if (ctx.signal.aborted) throw new CancelledError("edit_file: cancelled before writing");
      await writeWorkspaceFile(edit.target.abs, text.split(old).join(replacement));
      const what = starts.length === 1 ? "1 occurrence (line" : `${starts.length} occurrences (lines`;
      return { content: `Edited ${edit.target.rel}: replaced ${what} ${listLines(text, starts)}).` };
    },
  };
}

async function readText(target: ScopedPath): Promise<string> {
  const info = await stat(target.abs).catch((err: NodeJS.ErrnoException) => {
    throw err.code === "ENOENT" || err.code === "ENOTDIR"
      ? new ToolError(`No such file: ${target.rel} (to create a file, use write_file)`)
      : err;
  });
  if (!info.isFile()) throw new ToolError(`${target.rel} is not a regular file; edit_file changes text files`);
  const bytes = await readFile(target.abs);
  const text = bytes.toString("utf8");
  if (bytes.includes(0) || !Buffer.from(text, "utf8").equals(bytes)) {
    throw new ToolError(`${target.rel} is not UTF-8 text; edit_file cannot change it safely (use shell)`);
  }
  return text;
}

/**
 * Where `old` occurs. A file with CRLF line ends also matches an `old` written with LF ones
 * (models often drop the CR); the replacement then gets CRLF too.
 */
function locate(text: string, edit: EditInput): { old: string; replacement: string; starts: number[] } {
  let starts = occurrences(text, edit.old);
  if (starts.length > 0) return { old: edit.old, replacement: edit.new, starts };
  if (text.includes("\r\n") && edit.old.includes("\n") && !edit.old.includes("\r")) {
    const old = edit.old.replace(/\n/g, "\r\n");
    starts = occurrences(text, old);
    if (starts.length > 0) return { old, replacement: edit.new.replace(/\r?\n/g, "\r\n"), starts };
  }
  throw new ToolError(noMatchMessage(text, edit));
}

function noMatchMessage(text: string, edit: EditInput): string {
  const head = `No exact match for \`old\` in ${edit.target.rel}.`;
  const closest = findClosestLines(text, edit.old);
  if (!closest) return `${head} Nothing in the file looks like it; read the file again with read_file.`;
  const shown = closest.lines.slice(0, MAX_LISTED);
  const end = closest.startLine + closest.lines.length - 1;
  const body = shown.map((l, i) => `${closest.startLine + i}\t${l.length > 200 ? `${l.slice(0, 200)}…` : l}`);
  if (shown.length < closest.lines.length) body.push(`… ${closest.lines.length - shown.length} more lines`);
  const hint = closest.whitespaceOnly
    ? "They differ from `old` only in whitespace or indentation; copy them exactly."
    : "Copy the text exactly as read_file shows it (without the line numbers).";
  const where = end === closest.startLine ? `line ${end}` : `lines ${closest.startLine}-${end}`;
  return `${head} The closest text (${where}):\n${body.join("\n")}\n${hint}`;
}

/** Start indices of the non-overlapping occurrences of `needle`, left to right. */
function occurrences(text: string, needle: string): number[] {
  const starts: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) starts.push(i);
  return starts;
}

/** "4, 18, 40" — the 1-based line of each start, the list cut after MAX_LISTED. */
function listLines(text: string, starts: readonly number[]): string {
  const lines: number[] = [];
  let line = 1;
  let from = 0;
  for (const start of starts.slice(0, MAX_LISTED)) {
    for (let i = text.indexOf("\n", from); i !== -1 && i < start; i = text.indexOf("\n", i + 1)) line++;
    from = start;
    lines.push(line);
  }
  const more = starts.length > MAX_LISTED ? `, … ${starts.length - MAX_LISTED} more` : "";
  return lines.join(", ") + more;
}
