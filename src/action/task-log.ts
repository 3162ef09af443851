/**
 * A task's log lines in the step's log: its setup commands, tool calls, denials, agent errors and
 * checks, each timestamped, kept while the task runs and printed as one collapsed group
 * (`::group::` … `::endgroup::`) when it ends or is interrupted, titled with its outcome. Only
 * the start and end of each task are printed live: at a concurrency above 1 live groups would
 * interleave. Pure: the edge prints what `end` returns.
 */
import type { TaskEvent } from "../runner/run-dir/runner-events.js";
import { describeEvent } from "../runner/reports/event-lines.js";

/** Lines in a collapsed group can say more than a live line. */
const DETAIL_CHARS = 160;

/** One line for an event worth a log line, worded as `rhema run`'s plain progress words it, or null. */
export function taskLogLine(event: TaskEvent): string | null {
  return describeEvent(event, DETAIL_CHARS);
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
