/**
 * events.jsonl: a task's event stream (the agent's events and the runner's own), one JSON object
 * per line, appended 0600. Each line carries the time; secrets are redacted before they reach
 * the disk. A failed append is an `OutputError` naming the file (the run stops, exit 3), never
 * a nameless errno.
 *
 * A torn line never stays in the middle of the log: opening cuts off a torn last line that a
 * killed run (or a full disk) left, and an append that fails part-way is cut back to the last
 * whole line before the error is raised.
 */
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import { errnoCode } from "../../core/errors.js";
import type { EventSink } from "../../core/events.js";
import { openPrivateAppend, writeFully } from "../../store/private-files.js";
import type { TaskEvent } from "../execute/runner-events.js";
import type { SecretRedactor } from "../execute/secret-redactor.js";
import { guardOutput } from "./output-guard.js";

const SCAN_CHUNK_BYTES = 64 * 1024;

export class EventLog implements EventSink {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    /** Bytes of whole lines in the file: where a failed append is cut back to. */
    private size: number,
    private readonly redactor: SecretRedactor,
    private readonly forward: (event: TaskEvent) => void,
    private readonly now: () => Date,
  ) {}

  static async open(path: string, redactor: SecretRedactor, forward: (event: TaskEvent) => void, now: () => Date): Promise<EventLog> {
    const size = await guardOutput(path, "append to", () => repairTornTail(path));
    const handle = await guardOutput(path, "append to", () => openPrivateAppend(path));
    return new EventLog(path, handle, size, redactor, forward, now);
  }

  async emit(event: TaskEvent): Promise<void> {
    // Text deltas are many and small: the assistant message in the session has the whole text.
    if (event.type !== "text") {
      // Redacted before serializing: in JSON text a secret holding `"` or `\` is escaped, and missed.
      const line = JSON.stringify(this.redactor.redactValue({ at: this.now().toISOString(), ...event })) + "\n";
      await guardOutput(this.path, "append to", () => this.append(Buffer.from(line)));
    }
    this.forward(event);
  }

  async close(): Promise<void> {
    await guardOutput(this.path, "append to", () => this.handle.close());
  }

  /** Writes the whole line (a short write on a filling disk is continued); a failure cuts it back off. */
  private async append(bytes: Buffer): Promise<void> {
    try {
      await writeFully(this.handle, bytes);
    } catch (err) {
      await this.handle.truncate(this.size).catch(() => {});
      throw err;
    }
    this.size += bytes.length;
  }
}

/**
 * Cuts a torn last line (no newline at its end) off the log at `path`; returns the size of
 * what is left, whole lines only. A missing file is size 0.
 */
export async function repairTornTail(path: string): Promise<number> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r+");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return 0;
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const whole = await endOfLastLine(handle, size);
    if (whole < size) {
      await handle.truncate(whole);
      await handle.sync();
    }
    return whole;
  } finally {
    await handle.close();
  }
}

/** The offset just after the file's last newline (0 when it has none), scanning back from the end. */
async function endOfLastLine(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(SCAN_CHUNK_BYTES);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - SCAN_CHUNK_BYTES);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (newline !== -1) return start + newline + 1;
    end = start;
  }
  return 0;
}
