/**
 * What `report.html` embeds: the run's figures (from its stats.json) and each trial as the viewer
 * shows it — its result, prompt, steps (model text, tool calls with inputs, policy decisions,
 * results, compaction flushes, per-request usage and cost), checks, patch and timing — built from
 * the trial's redacted files only (result.json, events.jsonl, the checkpoint's messages,
 * changes.patch) — and each trial without a result (interrupted, not started: the run's
 * stats.json lists them) with its state and, when it started, its partial conversation. Pure: the same inputs give the same data, so a page rendered again is the same
 * byte for byte. Every payload (a tool's input or result, a step's text, the patch, an event) is
 * cut at `MAX_PAYLOAD_BYTES` with a marker naming the file that holds it whole.
 */
import { counted } from "../../core/counted.js";
import type { Usage } from "../../core/provider.js";
import type { Message } from "../../core/messages.js";
import type { TaskEvent } from "../run-dir/runner-events.js";
import type { TaskResult, UnfinishedTask } from "../run-dir/task-result.js";
import { compareTrials } from "../trials/trial-key.js";
import type { StatsReport } from "./stats-report.js";

/** The most of one payload the page embeds; the rest is left in the run directory's file. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** A trial's files, as read from its folder (all redacted by the runner). */
export interface HtmlTrialInput {
  result: TaskResult;
  /** events.jsonl's lines, parsed (each with its `at`); torn or foreign lines already left out. */
  events: ReadonlyArray<TaskEvent & { at?: string }>;
  /** The checkpoint's messages; null when the trial has none (the transcript off, or no checkpoint). */
  messages: readonly Message[] | null;
  /** changes.patch's text; null when there is none. */
  patch: string | null;
}

/** A trial of the run without a result (stats.json's `unfinished`), with what its folder holds so far. */
export interface HtmlUnfinishedInput {
  task: UnfinishedTask;
  /** Its events.jsonl's lines so far (an interrupted trial's; empty for one never started). */
  events: ReadonlyArray<TaskEvent & { at?: string }>;
  /** Its checkpoint's messages so far; null without one. */
  messages: readonly Message[] | null;
}

export interface HtmlReportInput {
  stats: StatsReport;
  trials: readonly HtmlTrialInput[];
  /** The trials without a result; absent: none read (each is then shown from stats.json alone, without its conversation). */
  unfinished?: readonly HtmlUnfinishedInput[];
}

export interface CallView {
  id: string;
  name: string;
  input: string;
  decision: { decision: "allow" | "deny"; rule: string | null; reason: string | null } | null;
  result: string | null;
  isError: boolean;
  durationMs: number | null;
}

export interface StepView {
  n: number;
  at: string | null;
  text: string;
  calls: CallView[];
  usage: Usage | null;
  /** The request's dollars; null: unpriced; absent: nothing priced requests. */
  costUsd?: number | null;
  flushes: string[];
  notes: string[];
  stop: string | null;
}

export interface TrialView {
  key: string;
  suite: string;
  id: string;
  variant: string | null;
  repeat: number;
  /** A result's status, or the state of a trial without one (interrupted, not_started, not_selected, gate_decided). */
  status: TaskResult["status"] | UnfinishedTask["state"];
  flaky: boolean;
  denials: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  costUsd: number | null;
  tokens: number | null;
  cacheHitRate: number | null;
  error: { code: string; message: string } | null;
  prompt: string | null;
  finalAnswer: string;
  /** A task with `output:`: its accepted answer as indented JSON (output.json); null without one. */
  output: string | null;
  checks: { name: string; command: string; passed: boolean; exitCode: number | null; durationMs: number; output: string; notRun: string | null }[];
  patch: string | null;
  notes: string[];
  steps: StepView[];
}

export interface RunView {
  runId: string;
  startedAt: string;
  finishedAt: string;
  wallTimeMs: number;
  counts: StatsReport["total"]["counts"];
  flakyTasks: number;
  costUsd: number | null;
  tokens: number | null;
  cacheHitRate: number | null;
  unfinished: { key: string; state: string }[];
}

export interface HtmlReportData {
  run: RunView;
  trials: TrialView[];
}

/** The trial's key as the page names it: `suite/id@variant#repeat` (may hold `#`, `=`, `,`). */
export function trialKeyText(entry: { suite: string; id: string; trial?: { repeat: number; variant: string | null } | undefined }): string {
  const variant = entry.trial?.variant ?? null;
  return `${entry.suite}/${entry.id}${variant === null ? "" : `@${variant}`}#${entry.trial?.repeat ?? 1}`;
}

/** `text` cut to `maxBytes` of UTF-8 (at a character boundary) with a marker naming `source`; unchanged when it fits. */
export function cutPayload(text: string, source: string, maxBytes = MAX_PAYLOAD_BYTES): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const kept = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8").replace(/\uFFFD$/, "");
  return `${kept}\n[rhema: cut at ${maxBytes / 1024} KB of ${Math.ceil(bytes / 1024)} KB: see ${source}]`;
}

/** The data the page embeds (see the header). */
export function buildHtmlReportData(input: HtmlReportInput): HtmlReportData {
  const flakyCells = new Set(input.stats.taskTrials.filter((t) => t.flaky).map((t) => cellOf(t.suite, t.id, t.variant ?? null)));
  const total = input.stats.total;
  return {
    run: {
      runId: input.stats.runId, startedAt: input.stats.startedAt, finishedAt: input.stats.finishedAt, wallTimeMs: input.stats.wallTimeMs,
      counts: total.counts, flakyTasks: total.trials?.flakyTasks ?? 0,
      costUsd: total.cost?.usd ?? null, tokens: total.stats ? tokensOf(total.stats) : null, cacheHitRate: total.stats?.cacheHitRate ?? null,
      unfinished: input.stats.unfinished.map((u) => ({ key: trialKeyText(u), state: u.state })),
    },
    trials: [
      ...input.trials.map((trial) => trialView(trial, flakyCells.has(cellOf(trial.result.suite, trial.result.id, trial.result.trial?.variant ?? null)))),
      ...unfinishedInputs(input).map(unfinishedView),
    ].sort(byTrial),
  };
}

function byTrial(a: TrialView, b: TrialView): number {
  return compareTrials(a, b);
}

/** The unfinished trials read, and those stats.json lists that were not read (shown without a conversation). */
function unfinishedInputs(input: HtmlReportInput): HtmlUnfinishedInput[] {
  const read = [...(input.unfinished ?? [])];
  const seen = new Set(read.map((u) => trialKeyText(u.task)));
  for (const task of input.stats.unfinished) if (!seen.has(trialKeyText(task))) read.push({ task, events: [], messages: null });
  return read;
}

/** What each state of a trial without a result means, as the page says it. */
const UNFINISHED_NOTES: Record<UnfinishedTask["state"], string> = {
  interrupted: "interrupted: it was running when the run stopped; no result yet (the same command continues it). Its conversation so far:",
  not_started: "not started: the run stopped before it started (the same command starts it)",
  not_selected: "not run: this run's selection left it out, and no earlier run finished it",
  gate_decided: "not run: its task's gate was decided before it started (--stop-early)",
};

function unfinishedView(trial: HtmlUnfinishedInput): TrialView {
  const { task, events } = trial;
  const spent = task.spent ?? null;
  const times = events.flatMap((e) => (typeof e.at === "string" ? [e.at] : []));
  return {
    key: trialKeyText(task), suite: task.suite, id: task.id, variant: task.trial?.variant ?? null, repeat: task.trial?.repeat ?? 1,
    status: task.state, flaky: false,
    denials: events.filter((e) => e.type === "approval" && e.decision.decision === "deny").length,
    startedAt: times[0] ?? "", finishedAt: times.at(-1) ?? "", durationMs: spent?.durationMs ?? 0,
    costUsd: spent?.cost?.usd ?? spent?.stats?.costUsd ?? null, tokens: spent?.stats ? tokensOf(spent.stats) : null, cacheHitRate: spent?.stats?.cacheHitRate ?? null,
    error: null,
    prompt: promptOf(trial.messages),
    finalAnswer: "",
    output: null,
    checks: [],
    patch: null,
    notes: [UNFINISHED_NOTES[task.state], ...trialNotes(events)],
    steps: stepsOf(events, trial.messages),
  };
}

function cellOf(suite: string, id: string, variant: string | null): string {
  return JSON.stringify([suite, id, variant]);
}

function tokensOf(stats: Pick<Usage, "inputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "outputTokens">): number {
  return stats.inputTokens + stats.cacheReadTokens + stats.cacheWriteTokens + stats.outputTokens;
}

function trialView(trial: HtmlTrialInput, flaky: boolean): TrialView {
  const { result } = trial;
  const steps = stepsOf(trial.events, trial.messages);
  return {
    key: trialKeyText(result), suite: result.suite, id: result.id, variant: result.trial?.variant ?? null, repeat: result.trial?.repeat ?? 1,
    status: result.status, flaky, denials: result.policyDenials.count,
    startedAt: result.startedAt, finishedAt: result.finishedAt, durationMs: result.durationMs,
    costUsd: result.cost?.usd ?? result.stats?.costUsd ?? null, tokens: result.stats ? tokensOf(result.stats) : null, cacheHitRate: result.stats?.cacheHitRate ?? null,
    error: result.error ?? null,
    prompt: promptOf(trial.messages),
    finalAnswer: cutPayload(result.finalAnswer, "final-answer.txt"),
    output: result.output === undefined ? null : cutPayload(JSON.stringify(result.output, null, 2), "output.json"),
    checks: result.checks.map((c) => ({
      name: c.name, command: c.command, passed: c.passed, exitCode: c.exitCode, durationMs: c.durationMs, output: cutPayload(c.outputTail, "result.json"), notRun: c.notRun ?? null,
    })),
    patch: trial.patch === null ? null : cutPayload(trial.patch, "changes.patch"),
    notes: trialNotes(trial.events),
    steps,
  };
}

/** The text of the conversation's first user message: the task's prompt. */
function promptOf(messages: readonly Message[] | null): string | null {
  const first = messages?.find((m) => m.role === "user");
  if (!first) return null;
  const text = first.content.map((b) => (b.type === "text" ? b.text : b.type === "image" ? `[${b.mediaType}]` : "")).join("");
  return cutPayload(text, "session.json");
}

/** The runner's own lines that belong to no step: setup commands, retries, errors. */
function trialNotes(events: HtmlTrialInput["events"]): string[] {
  const notes: string[] = [];
  for (const e of events) {
    if (e.type === "setup_end") notes.push(`setup ${e.index + 1}/${e.total}: ${e.command} → ${e.timedOut ? "timed out" : `exit ${e.exitCode ?? "signal"}`} in ${e.durationMs} ms`);
    else if (e.type === "turn_error") notes.push(cutPayload(`agent error ${e.code}: ${e.message}`, "events.jsonl"));
    else if (e.type === "cassette_live") notes.push(`cassette: ${e.reason}`);
  }
  return notes;
}

/**
 * The steps of the trial, from its events (requests, calls, decisions, results, usage, flushes)
 * and its messages (each step's model text and each call's whole result, which events carry
 * only a preview of). A step the events do not name but the messages hold (a log cut by a kill)
 * is left out: the events are the record of what happened.
 */
export function stepsOf(events: HtmlTrialInput["events"], messages: readonly Message[] | null): StepView[] {
  const steps = new Map<number, StepView>();
  const calls = new Map<string, CallView>();
  const step = (n: number): StepView => {
    let s = steps.get(n);
    if (!s) steps.set(n, (s = { n, at: null, text: "", calls: [], usage: null, flushes: [], notes: [], stop: null }));
    return s;
  };
  let current = 0;
  for (const e of events) {
    switch (e.type) {
      case "request":
        current = e.step;
        step(e.step).at ??= e.at ?? null;
        break;
      case "tool_call": {
        const call: CallView = { id: e.callId, name: e.name, input: cutPayload(JSON.stringify(e.input ?? {}, null, 2), "events.jsonl"), decision: null, result: null, isError: false, durationMs: null };
        calls.set(e.callId, call);
        step(e.step).calls.push(call);
        break;
      }
      case "approval": {
        const call = calls.get(e.callId);
        if (call) call.decision = { decision: e.decision.decision, rule: e.decision.rule ?? null, reason: e.decision.reason ?? null };
        break;
      }
      case "tool_result": {
        const call = calls.get(e.callId);
        if (call) Object.assign(call, { result: cutPayload(e.preview, "events.jsonl"), isError: e.isError, durationMs: e.durationMs });
        break;
      }
      case "usage":
        Object.assign(step(e.step), { usage: e.usage, ...(e.costUsd !== undefined ? { costUsd: e.costUsd } : {}) });
        break;
      case "flush":
        step(e.step).flushes.push(`compacted messages ${e.start}–${e.end} (${e.mode}, ${e.worker}${e.free ? ", free: the cache had expired" : ""}) into ${e.summaryTokens} summary tokens${e.note ? `: ${e.note}` : ""}`);
        break;
      case "step_end":
        step(e.step).stop = e.stopReason;
        break;
      case "retry":
        step(current).notes.push(`${e.who === "worker" ? "compaction worker: " : ""}retry ${e.attempt}/${e.of} after ${e.reason} (${e.delayMs} ms)`);
        break;
      case "revived":
        step(current).notes.push(`resumed: closed ${counted(e.callIds.length, "interrupted call")}`);
        break;
      case "steer":
        step(current).notes.push(cutPayload(`nudged: ${e.text}`, "events.jsonl"));
        break;
      default:
        break;
    }
  }
  addMessages(steps, calls, messages ?? []);
  return [...steps.values()].filter((s) => s.n > 0).sort((a, b) => a.n - b.n);
}

/** Each assistant message's text onto its step (the step of its calls, else the one after the last), and each call's whole result. */
function addMessages(steps: Map<number, StepView>, calls: Map<string, CallView>, messages: readonly Message[]): void {
  const stepOfCall = new Map<string, number>();
  for (const s of steps.values()) for (const c of s.calls) stepOfCall.set(c.id, s.n);
  let last = 0;
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const call = calls.get(block.callId);
      const text = typeof block.content === "string" ? block.content : block.content.map((b) => (b.type === "text" ? b.text : `[${b.mediaType}]`)).join("\n");
      if (call) call.result = cutPayload(text, "session.json");
    }
    if (message.role !== "assistant") continue;
    const callStep = message.content.flatMap((b) => (b.type === "tool_call" ? [stepOfCall.get(b.id)] : [])).find((n) => n !== undefined);
    const n = callStep ?? last + 1;
    last = n;
    const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    const s = steps.get(n);
    if (s && text !== "") s.text = cutPayload(text, "session.json");
  }
}
