/**
 * How a run shows its progress: a live view on a terminal (one line per running task: step,
 * last tool, tokens, dollars so far), plain timestamped lines in CI logs, or the event stream as JSON lines
 * (`--json`). Progress goes to stderr; JSON lines and the final summary go to stdout.
 */
import type { TaskEvent } from "../runner/run-dir/runner-events.js";
import type { RunProgress } from "../runner/execute/suite-runner.js";
import { describeWorkspaces } from "../runner/execute/workspace-layers.js";
import { taskKey } from "../runner/tasks/task-key.js";
import { formatTaskCost, formatUsd } from "../runner/pricing/cost-figures.js";
import { counted } from "../core/counted.js";
import { isScriptedProvider } from "../providers/provider-registry.js";
import { checkVerdict, clipLine as clip, describeEvent, describeRetry, summarizeInput } from "../runner/reports/event-lines.js";

export interface ProgressView {
  update(progress: RunProgress): void;
  /** Stops any live drawing; called before the final summary. */
  close(): void;
}

export interface ViewStreams {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export function chooseProgressView(opts: { json: boolean; ci: boolean; color: boolean; streams: ViewStreams; now?: () => Date }): ProgressView {
  if (opts.json) return new JsonLinesView(opts.streams.out);
  if (opts.streams.err.isTTY && !opts.ci) return new LiveView(opts.streams.err, opts.color);
  return new PlainView(opts.streams.err, opts.now ?? (() => new Date()));
}


export function describeEnd(progress: Extract<RunProgress, { type: "task_end" }>): string {
  const r = progress.result;
  const stats = r.stats ? `, cache ${(r.stats.cacheHitRate * 100).toFixed(0)}%` : "";
  const denials = r.policyDenials.count ? `, ${r.policyDenials.count} denied` : "";
  const cost = r.cost ? `, ${formatTaskCost(r.cost)}` : "";
  const why = r.status === "errored" || r.status === "stopped" ? ` (${r.error?.code})` : r.status === "failed" ? ` (check "${r.checks.find((c) => !c.passed)?.name}")` : "";
  return `${r.status}${why}${progress.kept ? " (kept from an earlier run)" : ""} in ${(r.durationMs / 1000).toFixed(1)}s, ${counted(r.steps, "step")}${stats}${cost}${denials}`;
}

/** `5 tasks`, or `5 tasks (25 trials)` when some repeat. */
function tasksAndTrials(p: Extract<RunProgress, { type: "run_start" }>): string {
  return `${counted(p.tasks, "task")}${p.trials !== p.tasks ? ` (${counted(p.trials, "trial")})` : ""}`;
}

/**
 * The version of the `--json` line format (schema/events.schema.json), on its first line
 * (`run_start`'s `eventsVersion`). It changes only when a field is removed, renamed or retyped;
 * new event types and fields come without a change, and a reader skips what it does not know.
 */
export const EVENTS_VERSION = 1;

class JsonLinesView implements ProgressView {
  constructor(private readonly out: NodeJS.WritableStream) {}
  update(p: RunProgress): void {
    const line = "trial" in p ? { ...p, task: taskKey(p.task), trial: p.trial.label, repeat: p.trial.key.repeat }
      : p.type === "run_start" ? { ...p, eventsVersion: EVENTS_VERSION } : p;
    this.out.write(JSON.stringify(line) + "\n");
  }
  close(): void {}
}

class PlainView implements ProgressView {
  constructor(private readonly err: NodeJS.WritableStream, private readonly now: () => Date) {}
  private line(text: string): void {
    this.err.write(`${this.now().toISOString().slice(11, 19)} ${text}\n`);
  }
  update(p: RunProgress): void {
    switch (p.type) {
      case "run_start":
        this.line(`${p.resumed ? "resuming" : "starting"} run ${p.runId.slice(0, 8)}: ${tasksAndTrials(p)} in ${p.runDir}${p.workspaces ? `; workspaces: ${describeWorkspaces(p.workspaces)}` : ""}`);
        break;
      case "task_start":
        this.line(`[${p.trial.label}] started`);
        break;
      case "task_event": {
        const text = describeEvent(p.event);
        if (text) this.line(`[${p.trial.label}] ${text}`);
        break;
      }
      case "task_end":
        this.line(`[${p.trial.label}] ${describeEnd(p)}`);
        break;
      case "task_interrupted":
        this.line(`[${p.trial.label}] interrupted; checkpointed, a rerun continues it`);
        break;
      case "trial_skipped":
        this.line(`[${p.trial.label}] skipped (gate decided): its task's gate was decided by its other trials`);
        break;
      case "run_end":
        break;
    }
  }
  close(): void {}
}

/**
 * `costUsd`: dollars of the task's priced requests so far; null once one was unpriced; absent before any was priced.
 * `simulated`: a scripted task's dollars (`priceAs`), shown as such, not money spent.
 */
interface LiveTask { key: string; step: number; tool: string; tokens: number; costUsd?: number | null; simulated?: boolean }

class LiveView implements ProgressView {
  private readonly running = new Map<string, LiveTask>();
  private drawn = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly err: NodeJS.WritableStream & { columns?: number }, private readonly color: boolean) {}

  update(p: RunProgress): void {
    switch (p.type) {
      case "task_start":
        this.running.set(p.trial.label, { key: p.trial.label, step: 0, tool: "", tokens: 0, simulated: p.task.model ? isScriptedProvider(p.task.model.provider) : false });
        break;
      case "task_event":
        this.track(p.trial.label, p.event);
        break;
      case "task_end":
        this.running.delete(p.trial.label);
        this.print(`${this.mark(p.result.status)} ${p.trial.label}  ${describeEnd(p)}`);
        break;
      case "task_interrupted":
        this.running.delete(p.trial.label);
        this.print(`… ${p.trial.label}  interrupted; a rerun continues it`);
        break;
      case "trial_skipped":
        this.print(`- ${p.trial.label}  skipped (gate decided)`);
        break;
      case "run_start":
        this.print(`${p.resumed ? "Resuming" : "Running"} ${tasksAndTrials(p)} in ${p.runDir}`);
        break;
      case "run_end":
        break;
    }
    this.schedule();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.clear();
  }

  private track(key: string, event: TaskEvent): void {
    const task = this.running.get(key);
    if (!task) return;
    if (event.type === "setup_start") task.tool = `setup ${event.index + 1}/${event.total} ${clip(event.command).slice(0, 40)}`;
    if (event.type === "check_start") task.tool = `check ${event.index + 1}/${event.total} ${clip(event.name).slice(0, 40)}`;
    if (event.type === "check_end" && !event.passed) this.print(`  ${key}  check "${event.name}" ${checkVerdict(event)}`);
    if (event.type === "retry") this.print(`  ${key}  ${describeRetry(event)}`);
    if (event.type === "request") task.step = event.step;
    if (event.type === "tool_call") task.tool = `${event.name} ${clip(summarizeInput(event.input)).slice(0, 40)}`;
    if (event.type === "usage") {
      task.tokens += event.usage.inputTokens + event.usage.cacheReadTokens + event.usage.cacheWriteTokens + event.usage.outputTokens;
      if (event.costUsd === null) task.costUsd = null;
      else if (event.costUsd !== undefined && task.costUsd !== null) task.costUsd = (task.costUsd ?? 0) + event.costUsd;
    }
  }

  private mark(status: string): string {
    const symbol = status === "passed" ? "✓" : status === "failed" ? "✗" : "!";
    if (!this.color) return symbol;
    const code = status === "passed" ? 32 : status === "failed" ? 31 : 33;
    return `\x1b[${code}m${symbol}\x1b[0m`;
  }

  private print(line: string): void {
    this.clear();
    this.err.write(line + "\n");
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.draw();
    }, 100);
  }

  private draw(): void {
    this.clear();
    const width = Math.max(30, (this.err.columns || 100) - 1);
    const lines = [...this.running.values()].map((t) => liveLine(t, width));
    if (lines.length) this.err.write(lines.join("\n") + "\n");
    this.drawn = lines.length;
  }

  private clear(): void {
    if (this.drawn > 0) this.err.write(`\x1b[${this.drawn}A\x1b[0J`);
    this.drawn = 0;
  }
}

/**
 * One running task's live line, at most `width` characters: the figures (step, tokens, dollars) are kept
 * whole; the tool summary gives way first, then the task name (cut with `…`).
 */
export function liveLine(task: LiveTask, width: number): string {
  const step = `step ${task.step}`;
  const dollars = task.costUsd === undefined ? "" : task.costUsd === null ? "  unpriced" : `  ${formatUsd(task.costUsd)}${task.simulated ? " (simulated)" : ""}`;
  const tokens = `${(task.tokens / 1000).toFixed(1)}k tok${dollars}`;
  const line = (name: string, tool: string) => `  ${name}  ${step}  ${tool}  ${tokens}`;
  if (line(task.key, task.tool).length <= width) return line(task.key, task.tool);
  const toolRoom = width - line(task.key, "").length;
  if (toolRoom >= 8) return line(task.key, `${task.tool.slice(0, toolRoom - 1)}…`);
  const nameRoom = width - `  ${step}  ${tokens}`.length - 2;
  const name = task.key.length <= nameRoom ? task.key : `${task.key.slice(0, Math.max(1, nameRoom - 1))}…`;
  return `  ${name}  ${step}  ${tokens}`;
}
