/**
 * The lines of a JSON-lines log as real harnesses leave them: blank lines ignored, a torn last
 * line (a write cut short) ignored and counted, any other line that is not a JSON object an
 * error naming the file and line.
 */
import { CorpusFormatError } from "../replay-session.js";

export interface JsonLine {
  /** 1-based line number in the file. */
  no: number;
  value: Record<string, unknown>;
}

export interface JsonLines {
  lines: JsonLine[];
  /** The last line did not parse and was left out. */
  tornLastLine: boolean;
}

export function readJsonLines(source: string, text: string): JsonLines {
  const raw = text.split("\n");
  let last = raw.length - 1;
  while (last >= 0 && raw[last]!.trim() === "") last--;
  const lines: JsonLine[] = [];
  let tornLastLine = false;
  for (let i = 0; i <= last; i++) {
    const line = raw[i]!;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      if (i === last) {
        tornLastLine = true;
        break;
      }
      throw new CorpusFormatError(source, i + 1, `not JSON: ${(err as Error).message}`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new CorpusFormatError(source, i + 1, "not a JSON object");
    lines.push({ no: i + 1, value: value as Record<string, unknown> });
  }
  return { lines, tornLastLine };
}

/** The first few lines that parse, for telling formats apart (a torn or bad line is passed over). */
export function firstJsonObjects(text: string, count: number): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split("\n")) {
    if (out.length >= count) break;
    if (line.trim() === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) out.push(value as Record<string, unknown>);
    } catch {
      // not a line to judge by
    }
  }
  return out;
}
