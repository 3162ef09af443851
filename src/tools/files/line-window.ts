/**
 * Reads a window of lines from a file without loading the file: lines from `offset` on, until
 * a line count or an output byte budget is reached, each line cut at a character cap. Then it
 * counts the lines left (by scanning for newlines) so the caller can say how to read on.
 */
import type { FileHandle } from "node:fs/promises";
import { CancelledError } from "../../core/errors.js";

const CHUNK_BYTES = 64 * 1024;
/** Past this many bytes left, the lines left are not counted (the note says "more"). */
const MAX_COUNT_BYTES = 256 * 1024 * 1024;

export interface WindowOptions {
  /** 1-based number of the first line wanted. */
  offset: number;
  /** Most lines to return. */
  limit: number;
  /** Budget for the returned text, counted as UTF-8 bytes of the lines. */
  maxBytes: number;
  /** Longer lines are cut to this many characters. */
  maxLineChars: number;
  signal: AbortSignal;
}

/** `cut`: the line was longer than the character cap and ends early. */
export interface NumberedLine { n: number; text: string; cut: boolean }

export interface LineWindow {
  lines: NumberedLine[];
  /** Lines in the whole file, when the scan reached its end. */
  totalLines: number | null;
  /** Why the window ended before the file did, if it did. */
  stoppedBy: "limit" | "bytes" | null;
}

/** Collects the window, then counts what is left. */
export async function readLineWindow(handle: FileHandle, opts: WindowOptions): Promise<LineWindow> {
  const lines: NumberedLine[] = [];
  const buf = Buffer.alloc(CHUNK_BYTES);
  const keepBytes = opts.maxLineChars * 4;
  let lineNo = 1;
  let parts: Buffer[] = [];
  let kept = 0;
  let lineBytes = 0;
  let pending = false;
  let outBytes = 0;
  let position = 0;
  let lineStart = 0;
  const finishLine = (): "limit" | "bytes" | null => {
    if (lineNo >= opts.offset) {
      const line = decodeLine(Buffer.concat(parts), opts.maxLineChars, lineBytes > kept);
      const size = Buffer.byteLength(line.text) + 8;
      if (lines.length > 0 && outBytes + size > opts.maxBytes) return "bytes";
      lines.push({ n: lineNo, ...line });
      outBytes += size;
    }
    lineNo++;
    parts = [];
    kept = 0;
    lineBytes = 0;
    pending = false;
    return lines.length >= opts.limit ? "limit" : null;
  };
  for (;;) {
    if (opts.signal.aborted) throw new CancelledError("read_file: cancelled");
    const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      if (lineNo >= opts.offset) lineBytes += end - start;
      if (lineNo >= opts.offset && kept < keepBytes) {
        const piece = Buffer.from(chunk.subarray(start, Math.min(end, start + keepBytes - kept)));
        parts.push(piece);
        kept += piece.length;
      }
      if (nl === -1) {
        pending = true;
        break;
      }
      const stop = finishLine();
      if (stop === "bytes") return finish(handle, lines, stop, lineStart, lineNo - 1);
      if (stop === "limit") return finish(handle, lines, stop, position + nl + 1, lineNo - 1);
      start = nl + 1;
      lineStart = position + start;
    }
    position += bytesRead;
  }
  if (pending) {
    const stop = finishLine();
    if (stop === "bytes") return { lines, totalLines: lineNo, stoppedBy: "bytes" };
  }
  return { lines, totalLines: lineNo - 1, stoppedBy: null };
}

/** Counts the lines from `from` to the end, to report the total alongside the window. */
async function finish(
  handle: FileHandle,
  lines: NumberedLine[],
  stoppedBy: "limit" | "bytes",
  from: number,
  linesBefore: number,
): Promise<LineWindow> {
  const rest = await countLinesFrom(handle, from);
  return { lines, totalLines: rest === null ? null : linesBefore + rest, stoppedBy: rest === 0 ? null : stoppedBy };
}

/** Lines from byte `from` to the end (a last line without a newline counts), or null if too far. */
export async function countLinesFrom(handle: FileHandle, from: number): Promise<number | null> {
  const buf = Buffer.alloc(CHUNK_BYTES);
  let count = 0;
  let position = from;
  let last = 0x0a;
  for (;;) {
    if (position - from > MAX_COUNT_BYTES) return null;
    const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    for (let i = buf.indexOf(0x0a, 0); i !== -1 && i < bytesRead; i = buf.indexOf(0x0a, i + 1)) count++;
    last = buf[bytesRead - 1] ?? 0x0a;
    position += bytesRead;
  }
  return last === 0x0a ? count : count + 1;
}

/** `truncated`: bytes of the line were dropped while reading (it is longer than kept). */
function decodeLine(bytes: Buffer, maxChars: number, truncated: boolean): { text: string; cut: boolean } {
  let text = bytes.toString("utf8");
  if (!truncated && text.endsWith("\r")) text = text.slice(0, -1);
  if (text.length <= maxChars && !truncated) return { text, cut: false };
  return { text: text.slice(0, maxChars), cut: true };
}
