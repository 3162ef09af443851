/**
 * What the engine tells the outside while it works. The library never prints: a CLI renders
 * these, a runner writes them to events.jsonl.
 */
import type { Decision } from "./approval.js";
import type { StopReason, Usage } from "./provider.js";

export type AgentEvent =
  | { type: "turn_start"; sessionId: string; at: string }
  | { type: "request"; step: number; messages: number }
  | { type: "text"; step: number; delta: string }
  | { type: "tool_call"; step: number; callId: string; name: string; input: unknown }
  | { type: "approval"; step: number; callId: string; name: string; decision: Decision }
  | { type: "tool_result"; step: number; callId: string; name: string; isError: boolean; durationMs: number; preview: string }
  /** `costUsd`: the request's dollars, null when its model is unpriced; absent when nothing prices requests. */
  | { type: "usage"; step: number; usage: Usage; costUsd?: number | null }
  | { type: "revived"; callIds: string[] }
  | { type: "steer"; text: string }
  /** Old messages were compacted into a summary before the step's request (`free`: the cache had expired anyway). */
  | { type: "flush"; step: number; start: number; end: number; mode: "append" | "replace"; free: boolean; summaryTokens: number; worker: "model" | "elider"; note?: string }
  | { type: "step_end"; step: number; stopReason: StopReason }
  | { type: "turn_end"; steps: number; stopReason: StopReason; usage: Usage }
  | { type: "turn_error"; code: string; message: string };

/** Contract: `emit` is awaited; a sink that throws fails the turn, so keep it simple. */
export interface EventSink {
  emit(event: AgentEvent): void | Promise<void>;
}

export const nullSink: EventSink = { emit() {} };
