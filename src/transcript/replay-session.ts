/**
 * A recorded session in the shape the replay needs: the system prompt, the tools, the log, and
 * for each model request the log length it saw and when it was sent — and, for logs of real
 * harnesses, what the provider billed for it and what the harness actually sent when its own
 * compaction made that differ from the log. Built from corpus files (bench/corpus/README.md: one
 * JSON message per line, plus a `.times.json` of step times), from the harnesses' own logs
 * (`import/`), or from a rhema session (the runner reads those), and joined into one long
 * session by `chain`. Pure: the callers read the files.
 */
import type { CacheRules } from "../cache/prompt-cache-simulator.js";
import type { Message } from "../core/messages.js";
import type { Usage } from "../core/provider.js";
import type { ToolSpec } from "../core/tool.js";

/** The file formats a session is read from. */
export type SessionFormat = "corpus" | "claude-code" | "codex" | "mini-swe-agent" | "rhema-run";

/** What a request carried after the harness's own compaction: `lead` (its summary), then the log from `from`. */
export interface SentView {
  lead: Message[];
  from: number;
}

export interface ReplayRequest {
  /** The log the model had seen: `messages.slice(0, logLength)`; the reply is `messages[logLength]`. */
  logLength: number;
  atMs: number;
  /** What the provider billed for this request, when the log carries it. */
  billed?: Usage;
  model?: string;
  /** Absent: the request carried the log itself. */
  sent?: SentView;
}

export interface ReplaySession {
  name: string;
  system: string | null;
  tools: ToolSpec[];
  messages: Message[];
  /** One entry per model request, in order. */
  requests: ReplayRequest[];
  /** Absent: the corpus format. */
  format?: SessionFormat;
  /**
   * Tokens every request carried that the log does not show (a harness's system prompt and
   * tools): fitted from the first billed request, never below 0. Absent: none.
   */
  prefixTokens?: number;
  /** Lines or items the reader skipped, by kind (`progress`, `torn last line`, …). */
  skipped?: Record<string, number>;
  /** The cache rules of the provider the session ran against, when the format tells. */
  cache?: CacheRules;
}

/** The messages `request` carried: its sent view, else the log up to it. */
export function sentMessages(session: ReplaySession, request: ReplayRequest): Message[] {
  if (!request.sent) return session.messages.slice(0, request.logLength);
  return [...request.sent.lead, ...session.messages.slice(request.sent.from, request.logLength)];
}

/** Steps without recorded times are this far apart. */
export const DEFAULT_STEP_GAP_MS = 15_000;

/** A line (or field) of a session file that is not what its format says: names the file and line (null: a JSON document's field, named instead). */
export class CorpusFormatError extends Error {
  constructor(source: string, line: number | null, what: string) {
    super(`${source}${line === null ? "" : `:${line}`}: ${what}`);
    this.name = "CorpusFormatError";
  }
}

interface CorpusRow {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_name?: string | null;
  /** `{"command": …}` as an object, or as a string (JSON or a Python-literal dict). */
  tool_args?: unknown;
}

/** The shell tool the corpus agent used, as rhema declares its own. */
const CORPUS_TOOLS: ToolSpec[] = [{
  name: "bash",
  description: "Run a bash command.",
  inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
}];

/**
 * Parses a corpus session. `times` maps a 1-based step to seconds since the session started
 * (the `.times.json` file); steps it lacks are `DEFAULT_STEP_GAP_MS` after the one before.
 */
export function parseCorpusSession(name: string, jsonl: string, times: Readonly<Record<string, number>> | null): ReplaySession {
  const rows = jsonl.split("\n").map((line, i) => ({ line, no: i + 1 })).filter((r) => r.line.trim() !== "");
  let system: string | null = null;
  const messages: Message[] = [];
  const requests: ReplayRequest[] = [];
  let pendingCall: string | null = null;
  let step = 0;
  for (const { line, no } of rows) {
    const row = parseRow(name, line, no);
    switch (row.role) {
      case "system":
        system = system === null ? row.content : `${system}\n${row.content}`;
        break;
      case "user":
        pushUserText(messages, row.content);
        break;
      case "assistant": {
        step += 1;
        const seconds = times?.[String(step)];
        const previous = requests[requests.length - 1]?.atMs;
        const atMs = seconds !== undefined ? Math.round(seconds * 1000) : (previous ?? -DEFAULT_STEP_GAP_MS) + DEFAULT_STEP_GAP_MS;
        requests.push({ logLength: messages.length, atMs });
        const id = `call_${step}`;
        const command = row.tool_name ? commandOf(row.tool_args) : null;
        messages.push({
          role: "assistant",
          content: [
            { type: "text", text: row.content },
            ...(command !== null ? [{ type: "tool_call" as const, id, name: row.tool_name ?? "bash", input: { command } }] : []),
          ],
        });
        pendingCall = command !== null ? id : null;
        break;
      }
      case "tool":
        // A harness's feedback with no call before it (a reply without an action): the user's turn.
        if (pendingCall === null) {
          pushUserText(messages, row.content);
          break;
        }
        messages.push({ role: "user", content: [{ type: "tool_result", callId: pendingCall, content: row.content }] });
        pendingCall = null;
        break;
    }
  }
  dropUnansweredCall(messages, pendingCall);
  if (requests.length === 0) throw new CorpusFormatError(name, rows.length, "the session has no assistant step");
  return { name, system, tools: CORPUS_TOOLS, messages, requests, format: "corpus" };
}

function parseRow(source: string, line: string, no: number): CorpusRow {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new CorpusFormatError(source, no, `not JSON: ${(err as Error).message}`);
  }
  const row = value as Partial<CorpusRow>;
  if (typeof value !== "object" || value === null) throw new CorpusFormatError(source, no, "not a JSON object");
  if (!["system", "user", "assistant", "tool"].includes(row.role as string)) {
    throw new CorpusFormatError(source, no, `field "role": expected system, user, assistant or tool, got ${JSON.stringify(row.role)}`);
  }
  if (typeof row.content !== "string") throw new CorpusFormatError(source, no, `field "content": expected a string, got ${JSON.stringify(row.content)}`);
  return row as CorpusRow;
}

/**
 * The command of a recorded call: `tool_args` is an object `{"command": "ls"}`, or that as text —
 * JSON or a Python-literal dict such as `{'command': 'ls'}`.
 */
function commandOf(args: unknown): string {
  if (typeof args === "object" && args !== null) {
    const command = (args as { command?: unknown }).command;
    return typeof command === "string" ? command : JSON.stringify(args);
  }
  if (typeof args !== "string" || args === "") return "";
  try {
    const parsed = JSON.parse(args) as { command?: unknown };
    if (typeof parsed.command === "string") return parsed.command;
  } catch {
    // A Python literal: take the text of the command value as it stands.
  }
  const m = /['"]command['"]\s*:\s*(['"])([\s\S]*)\1\s*}\s*$/.exec(args);
  return m ? m[2]! : args;
}

/** Appends user text, into the last message when that is the user's already. */
export function pushUserText(messages: Message[], text: string): void {
  const last = messages[messages.length - 1];
  if (last?.role === "user") last.content.push({ type: "text", text });
  else messages.push({ role: "user", content: [{ type: "text", text }] });
}

/** A session that ends on a call with no recorded result keeps the assistant's text only. */
function dropUnansweredCall(messages: Message[], callId: string | null): void {
  if (callId === null) return;
  const last = messages[messages.length - 1];
  if (last?.role === "assistant") last.content = last.content.filter((b) => !(b.type === "tool_call" && b.id === callId));
}

/**
 * Joins sessions into one long one: the first one's system prompt and task, then each later
 * one's task as a user message and its steps, its times continuing `gapMs` after the previous
 * session's last step. The chain's requests carry no bills (no harness sent them).
 */
export function chainSessions(sessions: readonly ReplaySession[], gapMs: number): ReplaySession {
  if (sessions.length === 0) throw new Error("chainSessions: no sessions");
  const first = sessions[0]!;
  const messages: Message[] = [];
  const requests: ReplayRequest[] = [];
  let offsetMs = 0;
  for (const [k, s] of sessions.entries()) {
    const base = messages.length;
    const startMs = s.requests[0]?.atMs ?? 0;
    for (const m of s.messages) {
      const copy: Message = { role: m.role, content: m.content.map((b) => (b.type === "tool_call" ? { ...b, id: `s${k}_${b.id}` } : b.type === "tool_result" ? { ...b, callId: `s${k}_${b.callId}` } : b)) };
      if (copy.role === "user" && messages[messages.length - 1]?.role === "user") messages[messages.length - 1]!.content.push(...copy.content);
      else messages.push(copy);
    }
    // Merging a task into the previous tool result shifts this session's indexes by one.
    const shift = messages.length - base - s.messages.length;
    // A chain sends what no harness sent: bills and sent views do not carry over.
    for (const r of s.requests) requests.push({ logLength: base + r.logLength + shift, atMs: offsetMs + r.atMs - startMs, ...(r.model ? { model: r.model } : {}) });
    offsetMs = (requests[requests.length - 1]?.atMs ?? offsetMs) + gapMs;
  }
  return {
    name: sessions.map((s) => s.name).join("+"), system: first.system, tools: first.tools, messages, requests,
    ...(first.prefixTokens !== undefined ? { prefixTokens: first.prefixTokens } : {}),
    ...(first.cache !== undefined ? { cache: first.cache } : {}),
  };
}

/**
 * A rhema session as a replay: each assistant message was one request, sent at the matching
 * entry of `requestTimesMs` (missing ones `DEFAULT_STEP_GAP_MS` after the one before).
 */
export function sessionFromLog(name: string, system: string | null, messages: readonly Message[], requestTimesMs: readonly number[]): ReplaySession {
  const requests: ReplayRequest[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role !== "assistant") continue;
    const previous = requests[requests.length - 1]?.atMs;
    const atMs = requestTimesMs[requests.length] ?? (previous === undefined ? 0 : previous + DEFAULT_STEP_GAP_MS);
    requests.push({ logLength: i, atMs });
  }
  return { name, system, tools: [], messages: messages.slice(), requests };
}
