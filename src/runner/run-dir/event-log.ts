/**
 * events.jsonl: a task's event stream (the agent's events and the runner's own), one JSON object
 * per line, appended 0600. Each line carries the time. Secrets are redacted before an event
 * reaches the disk or anyone listening (the progress view, `--json`, the Action's log): what is
 * forwarded is what is written, by the same redactor. The model's text deltas are not written
 * (the session has the whole message) but are forwarded, redacted as one text: a secret split
 * across deltas is held back until it can be told whole. A failed append is an `OutputError`
 * naming the file (the run stops, exit 3), never a nameless errno.
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
import type { TaskEvent } from "./runner-events.js";
import type { RedactedTextStream, SecretRedactor } from "./secret-redactor.js";
import { guardOutput } from "./output-guard.js";

const SCAN_CHUNK_BYTES = 64 * 1024;

export class EventLog implements EventSink {
  /** The model's streamed text since the last other event, and the step it belongs to. */
  private readonly text: RedactedTextStream;
  private textStep = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    /** Bytes of whole lines in the file: where a failed append is cut back to. */
    private size: number,
    private readonly redactor: SecretRedactor,
    private readonly forward: (event: TaskEvent) => void,
    private readonly now: () => Date,
  ) {
    this.text = redactor.textStream();
  }

  static async open(path: string, redactor: SecretRedactor, forward: (event: TaskEvent) => void, now: () => Date): Promise<EventLog> {
    const size = await guardOutput(path, "append to", () => repairTornTail(path));
    const handle = await guardOutput(path, "append to", () => openPrivateAppend(path));
    return new EventLog(path, handle, size, redactor, forward, now);
  }

  async emit(event: TaskEvent): Promise<void> {
    if (event.type === "text") {
      // Text deltas are many and small: the assistant message in the session has the whole text.
      this.textStep = event.step;
      this.forwardText(this.text.push(event.delta));
      return;
    }
    this.forwardText(this.text.end());
    // Redacted before serializing: each string is matched as it is, not as its escaped JSON.
    const redacted = this.redactor.redactValue(event);
    const line = JSON.stringify({ at: this.now().toISOString(), ...redacted }) + "\n";
    await guardOutput(this.path, "append to", () => this.append(Buffer.from(line)));
    this.forward(redacted);
  }

  /** Forwards the settled part of the model's text, when there is some. */
  private forwardText(delta: string): void {
    if (delta !== "") this.forward({ type: "text", step: this.textStep, delta });
  }

  async close(): Promise<void> {
    this.forwardText(this.text.end());
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
