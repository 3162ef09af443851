/**
 * A task's log lines in the step's log: its setup commands, tool calls, denials, agent errors and
 * checks, each timestamped, kept while the task runs and printed as one collapsed group
 * (`::group::` … `::endgroup::`) when it ends or is interrupted, titled with its outcome. Only
 * the start and end of each task are printed live: at a concurrency above 1 live groups would
 * interleave. Pure: the edge prints what `end` returns.
 */
import type { TaskEvent } from "../runner/execute/runner-events.js";

const MAX_DETAIL = 160;

/** One line for an event worth a log line (as `rhema run`'s plain progress says it), or null. */
export function taskLogLine(event: TaskEvent): string | null {
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
    case "revived":
      return `resumed: closed ${event.callIds.length} interrupted call(s)`;
    case "turn_error":
      return `agent error ${event.code}: ${clip(event.message)}`;
    case "steer":
      return `nudged: ${clip(event.text)}`;
    default:
      return null;
  }
}

function checkVerdict(event: Extract<TaskEvent, { type: "check_end" }>): string {
  if (event.notRun !== undefined) return event.notRun;
  const verdict = event.passed ? "passed" : event.timedOut ? "timed out" : event.exitCode === null ? "was killed" : `failed (exit ${event.exitCode})`;
  return event.kept ? `${verdict} (kept from an earlier run)` : `${verdict} in ${(event.durationMs / 1000).toFixed(1)}s`;
}

function summarizeInput(input: unknown): string {
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    for (const key of ["command", "path", "pattern"]) if (typeof o[key] === "string") return o[key] as string;
  }
  return JSON.stringify(input ?? {});
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL - 1)}…` : line;
}

/** A group to print: its title and lines. */
export interface LogGroup {
  title: string;
  lines: string[];
}

/** Each running task's lines by its key, until it ends. */
export class TaskLogGroups {
  private readonly lines = new Map<string, string[]>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Keeps the event's line (if it has one) for the task `key`. */
  add(key: string, event: TaskEvent): void {
    const text = taskLogLine(event);
    if (text === null) return;
    const lines = this.lines.get(key) ?? [];
    lines.push(`${this.now().toISOString().slice(11, 19)} ${text}`);
    this.lines.set(key, lines);
  }

  /** The task's group titled `title`, or null when it logged nothing (a task kept from an earlier attempt); forgets the task. */
  end(key: string, title: string): LogGroup | null {
    const lines = this.lines.get(key);
    this.lines.delete(key);
    return lines === undefined || lines.length === 0 ? null : { title, lines };
  }
}
