/**
 * The one wording of a task's events as log lines, shared by `rhema run`'s progress (plain lines,
 * the live view) and the Action's per-task log groups: setup commands, checks, tool calls,
 * denials, retries, resumed calls, agent errors and nudges. Pure.
 */
import { counted } from "../../core/counted.js";
import type { TaskEvent } from "../run-dir/runner-events.js";

/** Longest detail (a command, a message) a line quotes, unless the caller gives its own. */
export const DEFAULT_DETAIL_CHARS = 100;

/** A one-line account of an agent or runner event worth a log line, or null. */
export function describeEvent(event: TaskEvent, detailChars = DEFAULT_DETAIL_CHARS): string | null {
  const clip = (text: string): string => clipLine(text, detailChars);
  switch (event.type) {
    case "setup_start":
      return `setup ${event.index + 1}/${event.total}: ${clip(event.command)}${event.rerun ? " (interrupted by a kill; it may have partly run: running it again)" : ""}`;
    case "setup_end":
      return event.exitCode === 0 ? null : `setup ${event.index + 1}/${event.total} ${event.timedOut ? "timed out" : `exited ${event.exitCode ?? "on a signal"}`}`;
    case "check_start":
      return `check ${event.index + 1}/${event.total} "${event.name}"${event.rerun ? " (interrupted by a kill: running it again)" : ""}`;
    case "check_end":
      return `check ${event.index + 1}/${event.total} "${event.name}" ${checkVerdict(event)}`;
    case "tool_call":
      return `step ${event.step} ${event.name}: ${clip(summarizeInput(event.input))}`;
    case "approval":
      return event.decision.decision === "deny" ? `denied ${event.name} by ${event.decision.rule ?? "policy"}: ${event.decision.reason ?? ""}` : null;
    case "retry":
      return describeRetry(event);
    case "cassette_live":
      return `cassette: ${clip(event.reason)}`;
    case "revived":
      return `resumed: closed ${counted(event.callIds.length, "interrupted call")}`;
    case "turn_error":
      // A cancelled turn is said once, by the task's own line: interrupted, or why it ended (a timeout);
      // a provider's refusal of the run once, at the run's end.
      return event.code === "cancelled" || event.code === "provider_refused" ? null : `agent error ${event.code}: ${clip(event.message)}`;
    case "steer":
      return `nudged: ${clip(event.text)}`;
    default:
      return null;
  }
}

/** `retrying after 503 (attempt 2/4, 1.0 s)`; the compaction worker's retries say whose they are. */
export function describeRetry(event: Extract<TaskEvent, { type: "retry" }>): string {
  const who = event.who === "worker" ? "compaction worker: " : "";
  return `${who}retrying after ${event.reason} (attempt ${event.attempt}/${event.of}, ${(event.delayMs / 1000).toFixed(1)} s)`;
}

/** How a check ended: `passed in 1.2s`, `failed (exit 1) in 0.4s`, `timed out …`, kept, or why it did not run. */
export function checkVerdict(event: Extract<TaskEvent, { type: "check_end" }>): string {
  if (event.notRun !== undefined) return event.notRun;
  const verdict = event.passed ? "passed" : event.timedOut ? "timed out" : event.exitCode === null ? "was killed" : `failed (exit ${event.exitCode})`;
  return event.kept ? `${verdict} (kept from an earlier run)` : `${verdict} in ${(event.durationMs / 1000).toFixed(1)}s`;
}

/** The part of a tool call's input a line shows: its command, path or pattern, else the input as JSON. */
export function summarizeInput(input: unknown): string {
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    for (const key of ["command", "path", "pattern"]) if (typeof o[key] === "string") return o[key] as string;
  }
  return JSON.stringify(input ?? {});
}

/** The text on one line (whitespace runs made one space), cut to `maxChars` with an ellipsis. */
export function clipLine(text: string, maxChars = DEFAULT_DETAIL_CHARS): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}
