/** An event sink that keeps events in memory: for tests and for small drivers. */
import type { AgentEvent, EventSink } from "../core/events.js";

/** Collects events in memory, in the order they were emitted. */
export class MemorySink implements EventSink {
  readonly events: AgentEvent[] = [];
  emit(event: AgentEvent): void {
    this.events.push(event);
  }
}
