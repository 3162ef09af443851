/**
 * Where a report copy (`--junit`, `--stats`, `--summary`) goes when the path is not a plain
 * file rhema may replace. A path that is missing or a regular file is replaced atomically (temp
 * file beside it, then rename: run-reports.ts). A path that is a link, a device, a FIFO or a
 * socket (`/dev/stdout`, `/dev/null`, a named pipe a CI step reads) is written *into*: opened
 * through the link, never created, never renamed over — as root a rename once replaced the
 * machine's `/dev/full` with a report. Opened with O_NONBLOCK, so a FIFO with no reader is
 * ENXIO (exit 3 naming the path) at once, never a hang; a reader that stops reading is EAGAIN
 * after `STALLED_WRITE_MS`. A regular file reached through a link is truncated first, as the
 * shell's `>` does.
 */
import { constants } from "node:fs";
import { access, lstat, open, stat, type FileHandle } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { OutputError, errnoCode } from "../../core/errors.js";

/** How long a write into a FIFO may wait for its reader to make room. */
export const STALLED_WRITE_MS = 60_000;

/** `replace`: atomically, as a file of rhema's; `into`: opened and written, the path left as it is. */
export type ReportDestination = "replace" | "into";

/** How `path` is written (see the header); a folder is an OutputError (EISDIR). */
export async function reportDestination(path: string): Promise<ReportDestination> {
  const info = await lstat(path).catch((err: unknown) => {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  });
  if (info === null || info.isFile()) return "replace";
  if (info.isDirectory()) throw new OutputError(path, "write", "EISDIR");
  if (info.isSymbolicLink() && (await stat(path).catch(() => null))?.isDirectory()) throw new OutputError(path, "write", "EISDIR");
  return "into";
}

/**
 * Checks before a run that `writeInto` can write `path`, disturbing nothing: a FIFO is not
 * opened (a writer that opens and closes would end its reader's input), only checked writable;
 * anything else is opened for writing without truncation and closed.
 */
export async function probeInto(path: string): Promise<void> {
  const info = await stat(path).catch((err: unknown) => {
    throw new OutputError(path, "write", errnoCode(err) ?? "ENOENT", { cause: err });
  });
  if (info.isFIFO()) {
    await access(path, constants.W_OK);
    return;
  }
  await (await openInto(path, false)).close();
}

/** Writes `data` into `path` (see the header); `append` adds to a regular file's content instead of replacing it. */
export async function writeInto(path: string, data: string, options: { append: boolean }): Promise<void> {
  const handle = await openInto(path, options.append);
  try {
    const info = await handle.stat();
    if (info.isFile() && !options.append) await handle.truncate(0);
    await writeAllWaiting(handle, Buffer.from(data, "utf8"), path);
  } finally {
    await handle.close();
  }
}

function openInto(path: string, append: boolean): Promise<FileHandle> {
  return open(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (append ? constants.O_APPEND : 0));
}

/** Writes all of `data`; a full FIFO (EAGAIN) is waited on, up to `STALLED_WRITE_MS` without progress. */
async function writeAllWaiting(handle: FileHandle, data: Buffer, path: string): Promise<void> {
  let offset = 0;
  let stalledMs = 0;
  let pauseMs = 5;
  while (offset < data.length) {
    let written = 0;
    try {
      written = (await handle.write(data, offset, data.length - offset)).bytesWritten;
    } catch (err) {
      if (errnoCode(err) !== "EAGAIN") throw err;
    }
    if (written > 0) {
      offset += written;
      stalledMs = 0;
      pauseMs = 5;
      continue;
    }
    if (stalledMs >= STALLED_WRITE_MS) throw new OutputError(path, "write", "EAGAIN");
    await sleep(pauseMs);
    stalledMs += pauseMs;
    pauseMs = Math.min(pauseMs * 2, 200);
  }
}
