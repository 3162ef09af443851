/**
 * events.jsonl: a task's event stream, one JSON object per line, appended 0600. Each line
 * carries the time; secrets are redacted before they reach the disk. A failed append is an
 * `OutputError` naming the file (the run stops, exit 3), never a nameless errno.
 */
import type { FileHandle } from "node:fs/promises";
import type { AgentEvent, EventSink } from "../../core/events.js";
import { openPrivateAppend } from "../../store/private-files.js";
import type { SecretRedactor } from "../execute/secret-redactor.js";
import { guardOutput } from "./output-guard.js";

export class EventLog implements EventSink {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly redactor: SecretRedactor,
    private readonly forward: (event: AgentEvent) => void,
    private readonly now: () => Date,
  ) {}

  static async open(path: string, redactor: SecretRedactor, forward: (event: AgentEvent) => void, now: () => Date): Promise<EventLog> {
    const handle = await guardOutput(path, "append to", () => openPrivateAppend(path));
    return new EventLog(path, handle, redactor, forward, now);
  }

  async emit(event: AgentEvent): Promise<void> {
    // Text deltas are many and small: the assistant message in the session has the whole text.
    if (event.type !== "text") {
      // Redacted before serializing: in JSON text a secret holding `"` or `\` is escaped, and missed.
      const line = JSON.stringify(this.redactor.redactValue({ at: this.now().toISOString(), ...event })) + "\n";
      await guardOutput(this.path, "append to", () => this.handle.write(line));
    }
    this.forward(event);
  }

  async close(): Promise<void> {
    await guardOutput(this.path, "append to", () => this.handle.close());
  }
}
