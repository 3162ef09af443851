/**
 * events.jsonl: a task's event stream, one JSON object per line, appended 0600. Each line
 * carries the time; secrets are redacted before they reach the disk.
 */
import type { FileHandle } from "node:fs/promises";
import type { AgentEvent, EventSink } from "../../core/events.js";
import { openPrivateAppend } from "../../store/private-files.js";
import type { SecretRedactor } from "../execute/secret-redactor.js";

export class EventLog implements EventSink {
  private constructor(
    private readonly handle: FileHandle,
    private readonly redactor: SecretRedactor,
    private readonly forward: (event: AgentEvent) => void,
    private readonly now: () => Date,
  ) {}

  static async open(path: string, redactor: SecretRedactor, forward: (event: AgentEvent) => void, now: () => Date): Promise<EventLog> {
    return new EventLog(await openPrivateAppend(path), redactor, forward, now);
  }

  async emit(event: AgentEvent): Promise<void> {
    // Text deltas are many and small: the assistant message in the session has the whole text.
    if (event.type !== "text") {
      // Redacted before serializing: in JSON text a secret holding `"` or `\` is escaped, and missed.
      await this.handle.write(JSON.stringify(this.redactor.redactValue({ at: this.now().toISOString(), ...event })) + "\n");
    }
    this.forward(event);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
