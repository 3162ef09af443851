/**
 * grep's JavaScript backend, for when there is no ripgrep: searches the listed files line by
 * line with a RegExp and reports what rg would (binary files — a NUL byte — skipped, CR kept
 * while matching, context runs merged).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CancelledError, ToolError } from "../../core/errors.js";
import type { GrepLine } from "./grep-matches.js";

/** Files read at once. */
const CONCURRENCY = 16;

/** The pattern as a RegExp, or a ToolError naming `pattern`. */
export function compilePattern(pattern: string, ignoreCase: boolean): RegExp {
  try {
    return new RegExp(pattern, ignoreCase ? "i" : "");
  } catch (err) {
    throw new ToolError(`\`pattern\` is not a valid regular expression: ${(err as Error).message}`);
  }
}

export interface JsSearch {
  workspace: string;
  /** Workspace-relative paths. */
  files: readonly string[];
  regex: RegExp;
  context: number;
  signal: AbortSignal;
  /** Receives each file's lines together, in line order. */
  onLine(path: string, line: GrepLine): void;
}

export async function searchFilesJs(search: JsSearch): Promise<void> {
  // Whole-file pre-check: a line that matches alone also matches in multiline mode, so a
  // file without a multiline match has no matching line and is not split.
  const flags = search.regex.flags.includes("m") ? search.regex.flags : `${search.regex.flags}m`;
  const anyLine = new RegExp(search.regex.source, flags);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < search.files.length) {
      if (search.signal.aborted) throw new CancelledError("grep cancelled");
      const path = search.files[next++]!;
      const bytes = await readFile(join(search.workspace, path)).catch(() => null);
      if (!bytes || bytes.includes(0)) continue;
      const text = bytes.toString("utf8");
      if (!anyLine.test(text)) continue;
      for (const line of grepText(text, search.regex, search.context)) search.onLine(path, line);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, search.files.length) }, worker));
}

/** The matching lines of `text` and the context lines around them, in order. */
export function grepText(text: string, regex: RegExp, context: number): GrepLine[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const hits: number[] = [];
  for (const [i, line] of lines.entries()) if (regex.test(line)) hits.push(i);
  const out: GrepLine[] = [];
  let emitted = -1;
  for (const [k, hit] of hits.entries()) {
    const from = Math.max(emitted + 1, hit - context);
    const nextHit = hits[k + 1] ?? Infinity;
    const to = Math.min(lines.length - 1, hit + context, nextHit - 1);
    for (let i = from; i <= to; i++) out.push({ line: i + 1, match: i === hit, text: lines[i]! });
    emitted = to;
  }
  return out;
}
