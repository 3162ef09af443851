/**
 * Gathering and printing grep results the same way whichever backend found them: lines arrive
 * file by file in any order; what is kept is the first `maxMatches` matches in (path, line)
 * order, in bounded memory, so the result does not depend on which thread finished first.
 * Output is `path:line:text` for matches and `path-line-text` for context, like grep -n.
 */
import { byCodeUnits } from "./workspace-files.js";

export interface GrepLine { line: number; match: boolean; text: string }

/** One file's kept lines; `matches` counts all its matches, kept or not. */
export interface FileMatches { path: string; lines: GrepLine[]; matches: number; keptMatches: number }

export interface GrepTally { files: FileMatches[]; totalMatches: number; totalFiles: number }

/** Longer lines are cut in the output. */
export const GREP_MAX_LINE_CHARS = 300;

/** Collects lines per file (each file's lines contiguous, in line order) into a GrepTally. */
export class MatchCollector {
  private readonly kept: FileMatches[] = [];
  private keptMatches = 0;
  private totalMatches = 0;
  private totalFiles = 0;
  private current: FileMatches | null = null;

  constructor(private readonly maxMatches: number, private readonly context: number) {}

  /** The next line of `path`; a new path closes the previous file. */
  push(path: string, line: GrepLine): void {
    if (this.current?.path !== path) {
      this.closeFile();
      this.current = { path, lines: [], matches: 0, keptMatches: 0 };
    }
    const file = this.current;
    if (line.match) file.matches++;
    if (file.keptMatches < this.maxMatches) {
      file.lines.push(line);
      if (line.match) file.keptMatches++;
    } else if (!line.match && line.line <= lastMatchLine(file) + this.context && line.line === lastLine(file) + 1) {
      file.lines.push(line);
    }
  }

  /** All lines pushed: the first `maxMatches` matches in path order, with their context. */
  finish(): GrepTally {
    this.closeFile();
    const files: FileMatches[] = [];
    let room = this.maxMatches;
    for (const file of this.kept) {
      if (room <= 0) break;
      const trimmed = trimToMatches(file, room, this.context);
      files.push(trimmed);
      room -= trimmed.keptMatches;
    }
    return { files, totalMatches: this.totalMatches, totalFiles: this.totalFiles };
  }

  private closeFile(): void {
    const file = this.current;
    this.current = null;
    if (!file || file.matches === 0) return;
    this.totalMatches += file.matches;
    this.totalFiles++;
    const same = this.kept.findIndex((f) => f.path === file.path);
    if (same !== -1) {
      const merged = this.kept[same]!;
      this.keptMatches -= merged.keptMatches;
      this.kept.splice(same, 1);
      file.lines = [...merged.lines, ...file.lines].sort((a, b) => a.line - b.line);
      file.keptMatches += merged.keptMatches;
      file.matches += merged.matches;
    }
    this.kept.splice(insertionIndex(this.kept, file.path), 0, file);
    this.keptMatches += file.keptMatches;
    // Drop files from the end while the ones before them already hold maxMatches matches.
    while (this.kept.length > 1 && this.keptMatches - this.kept.at(-1)!.keptMatches >= this.maxMatches) {
      this.keptMatches -= this.kept.pop()!.keptMatches;
    }
  }
}

function lastMatchLine(file: FileMatches): number {
  for (let i = file.lines.length - 1; i >= 0; i--) if (file.lines[i]!.match) return file.lines[i]!.line;
  return -Infinity;
}

function lastLine(file: FileMatches): number {
  return file.lines.at(-1)?.line ?? -Infinity;
}

function insertionIndex(files: readonly FileMatches[], path: string): number {
  let lo = 0;
  let hi = files.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byCodeUnits(files[mid]!.path, path) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The file's lines up to its `room`-th match and the context lines after it. */
function trimToMatches(file: FileMatches, room: number, context: number): FileMatches {
  if (file.keptMatches <= room) return file;
  let seen = 0;
  let cut = file.lines.length;
  for (const [i, l] of file.lines.entries()) {
    if (l.match && ++seen === room) {
      cut = i + 1;
      while (cut < file.lines.length && !file.lines[cut]!.match && file.lines[cut]!.line <= l.line + context) cut++;
      break;
    }
  }
  return { ...file, lines: file.lines.slice(0, cut), keptMatches: room };
}

/**
 * The tally as text within `maxBytes`, with a closing note when matches were left out.
 * `context` > 0 separates non-adjacent runs with "--", as grep does.
 */
export function formatTally(tally: GrepTally, opts: { context: number; maxBytes: number }): string {
  const out: string[] = [];
  let bytes = 0;
  let shown = 0;
  let full = false;
  for (const file of tally.files) {
    let prev: number | null = null;
    for (const l of file.lines) {
      const raw = l.text.endsWith("\r") ? l.text.slice(0, -1) : l.text;
      const text = raw.length > GREP_MAX_LINE_CHARS ? `${raw.slice(0, GREP_MAX_LINE_CHARS)}… [line cut]` : raw;
      const row = `${file.path}${l.match ? ":" : "-"}${l.line}${l.match ? ":" : "-"}${text}`;
      const sep = opts.context > 0 && out.length > 0 && (prev === null || l.line > prev + 1) ? "--" : null;
      const size = Buffer.byteLength(row) + 1 + (sep ? 3 : 0);
      if (bytes + size > opts.maxBytes && shown > 0) {
        full = true;
        break;
      }
      if (sep) out.push(sep);
      out.push(row);
      bytes += size;
      prev = l.line;
      if (l.match) shown++;
    }
    if (full) break;
  }
  if (shown < tally.totalMatches) {
    out.push(
      `… ${tally.totalMatches - shown} more matches not shown (${tally.totalMatches} matches in ${tally.totalFiles} files); ` +
        "narrow the pattern, path or glob to see the rest",
    );
  }
  return out.join("\n");
}
