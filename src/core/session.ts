/**
 * The session: everything a conversation is, versioned and validated (its file lives in
 * src/store/session-file.ts). A foreign or future value is a `SessionFileError` naming its source.
 *
 * Version 2 records each tool call's state (`calls`); a version-1 session (no states: only the
 * started calls' records) is upgraded on read by session-v1.ts, its states inferred as version 1
 * did (a call with a result is answered, one with a started record started, the rest pending).
 */
import { z } from "zod";
import type { Denial } from "./approval.js";
import { SessionFileError } from "./errors.js";
import { IMAGE_MEDIA_TYPES, toolCallsOf, type Message } from "./messages.js";
import type { PidScope } from "./tool.js";
import type { Section, TranscriptStats } from "./transcript-types.js";
import type { TokenCounterRecord } from "./token-counter.js";
import type { ToolSpec } from "./tool.js";

export const SESSION_VERSION = 2;

export interface Session {
  version: typeof SESSION_VERSION;
  id: string;
  /** ISO time the conversation started. */
  createdAt: string;
  /**
   * The environment report, stamped at the first turn and reused byte for byte afterwards,
   * so a resumed conversation's request prefix equals the uninterrupted one.
   */
  environment?: string;
  /**
   * The token counter the conversation is counted with, stamped at the first turn: a resume
   * counts with it whatever it is given, so sections and flush points stay where they were.
   * Absent in a session with messages: it was counted with chars4 (before counters were).
   */
  tokenCounter?: TokenCounterRecord;
  messages: Message[];
  /** The transcript mirror as of the last save: restored with adoptTranscriptSections. */
  transcript?: { sections: Section[]; stats: TranscriptStats | null };
  /** Set by the checkpoint store: which journal generation this snapshot folds in. */
  journal?: { generation: number };
  /**
   * Every tool call of `messages` with its state, by call id (absent: no call yet). Kept in step
   * with the messages at each boundary, never sent to the model. A call with no record (a
   * session built by hand) is read as its messages say (`withCallStates`).
   */
  calls?: Record<string, CallRecord>;
  /**
   * The tool specs of each MCP server the conversation uses, by server name, stamped at the first
   * turn (absent: none). A resume compares the servers' specs listed again with these: a server
   * whose specs changed is an `mcp_changed` error, so the request prefix never changes silently.
   */
  mcpTools?: Record<string, ToolSpec[]>;
}

/**
 * A tool call's state: `pending` (in the intent, not started: a resume runs it) → `started`
 * (approved, about to run: a resume never runs it again behind the model's back) → `completed`
 * (its result is in the messages) or `error` (its result is an error: the tool's own, a denial,
 * a cancel, an interruption).
 */
export type CallState = CallRecord["state"];
export type CallRecord = PendingCall | StartedCall | CompletedCall | ErroredCall;

export interface PendingCall {
  state: "pending";
}

/** A call's `started` record. */
export interface StartedCall {
  state: "started";
  /** ISO time of the `started` boundary. */
  at: string;
  /** For a call that runs a process group (the shell): where, to stop it on resume. */
  host?: string;
  pgid?: number;
  startTime?: number;
  /** Where `pgid` means that group (boot and pid namespace); absent in older checkpoints. */
  pidScope?: PidScope;
  /**
   * The workspace as it was just before the call began (write and exec calls). The checkpoint
   * store keeps it in a file beside the checkpoint, not in the journal line.
   */
  fingerprint?: WorkspaceFingerprint;
}

export interface CompletedCall {
  state: "completed";
  /** ISO time its result was appended; absent when inferred from a version-1 session. */
  at?: string;
}

export interface ErroredCall {
  state: "error";
  /** ISO time its result was appended; absent when inferred from a version-1 session. */
  at?: string;
  /** Set when the approval denied the call: the decision as data, for the reports. */
  denial?: Denial;
}

/** A cheap picture of the workspace: each file's size and mtime, by workspace-relative path. */
export interface WorkspaceFingerprint {
  files: Record<string, [sizeBytes: number, mtimeMs: number]>;
  /** True when the walk stopped at its file cap: changes beyond it are unknown. */
  capped: boolean;
  /**
   * The workspace paths it covers — a write tool's planned paths (`ToolPlan.paths`), each one's
   * file in `files` when it was one — taken again for the same paths on resume; absent: the walk
   * of the whole workspace.
   */
  paths?: string[];
}

const textBlock = z.object({ type: z.literal("text"), text: z.string() }).strict();
const imageBlock = z
  .object({ type: z.literal("image"), mediaType: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"] satisfies typeof IMAGE_MEDIA_TYPES), data: z.string() })
  .strict();
const toolCallBlock = z.object({ type: z.literal("tool_call"), id: z.string().min(1), name: z.string(), input: z.unknown() }).strict();
const toolResultBlock = z
  .object({
    type: z.literal("tool_result"),
    callId: z.string().min(1),
    content: z.union([z.string(), z.array(z.union([textBlock, imageBlock]))]),
    isError: z.boolean().optional(),
  })
  .strict();
const reasoningBlock = z
  .object({ type: z.literal("reasoning"), provider: z.string().min(1), id: z.string(), data: z.string(), summary: z.string() })
  .strict();
export const messageSchema = z
  .object({
    role: z.enum(["user", "assistant"]),
    content: z.array(z.discriminatedUnion("type", [textBlock, imageBlock, toolCallBlock, toolResultBlock, reasoningBlock])),
  })
  .strict();

const nonNegative = z.number().nonnegative();
/** Fields added after the first release default to 0, so older checkpoints and results still read. */
const added = nonNegative.default(0);
export const transcriptStatsSchema = z.object({
  requests: nonNegative, flushes: nonNegative, freeFlushes: added, summaryMerges: added,
  blockTokens: nonNegative, sections: nonNegative,
  inputTokens: nonNegative, cacheReadTokens: nonNegative, cacheWriteTokens: nonNegative, cacheWrite1hTokens: added,
  outputTokens: nonNegative, reasoningTokens: added, peakRequestTokens: added, requestTokens: added,
  workerRequests: nonNegative, workerInputTokens: nonNegative, workerCacheReadTokens: added, workerCacheWriteTokens: added,
  workerOutputTokens: nonNegative, newTokens: added, budgetedTokens: added,
  costUsd: added, workerCostUsd: added, unpricedRequests: added,
  oneHourRequests: added, ttlChoicesRight: added, ttlChoicesWrong: added,
  cacheHitRate: z.number().min(0).max(1), limitHitRate: z.number().min(0).max(1).default(0),
});
export const fingerprintSchema = z
  .object({ files: z.record(z.string(), z.tuple([nonNegative, z.number()])), capped: z.boolean(), paths: z.array(z.string().min(1)).optional() })
  .strict();
const pidScopeSchema = z.object({ bootId: z.string().min(1), pidNamespace: z.string().min(1) }).strict();
const processFields = {
  at: z.string().min(1),
  host: z.string().optional(),
  pgid: z.number().int().positive().optional(),
  startTime: z.number().nonnegative().optional(),
  pidScope: pidScopeSchema.optional(),
  fingerprint: fingerprintSchema.optional(),
};
export const denialSchema = z.object({ rule: z.string().min(1).nullable(), reason: z.string() }).strict();
export const callRecordSchema = z.discriminatedUnion("state", [
  z.object({ state: z.literal("pending") }).strict(),
  z.object({ state: z.literal("started"), ...processFields }).strict(),
  z.object({ state: z.literal("completed"), at: z.string().min(1).optional() }).strict(),
  z.object({ state: z.literal("error"), at: z.string().min(1).optional(), denial: denialSchema.optional() }).strict(),
]);
/** A version-1 `started` record: a `StartedCall` without its `state`. */
export const startedCallV1Schema = z.object(processFields).strict();

export const sectionSchema = z.object({
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
  hash: z.string(),
  tokens: nonNegative,
  summary: z.string().nullable(),
});

const perChar = z.number().nonnegative().finite();
export const tokenCounterRecordSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("chars4") }).strict(),
  z.object({ kind: z.literal("tokenizer"), encoding: z.enum(["o200k_base", "cl100k_base"]) }).strict(),
  z.object({
    kind: z.literal("calibrated"),
    id: z.string().min(1),
    factors: z.object({
      perChar: z.object({ prose: perChar, code: perChar, json: perChar, tool_result: perChar }).strict(),
      perMessage: perChar,
      perToolBlock: perChar,
    }).strict(),
  }).strict(),
]);

const sessionFields = {
  id: z.string().min(1),
  createdAt: z.string().min(1),
  environment: z.string().optional(),
  tokenCounter: tokenCounterRecordSchema.optional(),
  messages: z.array(messageSchema),
  transcript: z.object({ sections: z.array(sectionSchema), stats: transcriptStatsSchema.nullable() }).optional(),
  journal: z.object({ generation: z.number().int().nonnegative() }).optional(),
  mcpTools: z.record(z.string(), z.array(z.object({ name: z.string(), description: z.string(), inputSchema: z.record(z.string(), z.unknown()) }).strict())).optional(),
};
export const sessionSchema = z.object({ version: z.literal(SESSION_VERSION), ...sessionFields, calls: z.record(z.string(), callRecordSchema).optional() }).passthrough();
export const sessionV1Schema = z.object({ version: z.literal(1), ...sessionFields, calls: z.record(z.string(), startedCallV1Schema).optional() }).passthrough();

/** A version-1 session as written: `calls` holds only the started calls, without states. */
export type SessionV1 = Omit<Session, "version" | "calls"> & { version: 1; calls?: Record<string, Omit<StartedCall, "state">> };

export function newSession(id: string, createdAt: Date): Session {
  return { version: SESSION_VERSION, id, createdAt: createdAt.toISOString(), messages: [] };
}

/**
 * Checks a parsed value is a session this version reads, as written (version 1 or 2, not
 * upgraded: the checkpoint store applies its journal first); `source` names it in errors.
 */
export function parseStoredSession(value: unknown, source: string): Session | SessionV1 {
  const version = typeof value === "object" && value !== null && "version" in value ? (value as { version: unknown }).version : undefined;
  if (version !== SESSION_VERSION && version !== 1) {
    throw new SessionFileError(source, `unsupported session version ${JSON.stringify(version)} (this rhema reads versions 1 and ${SESSION_VERSION})`);
  }
  const parsed = (version === 1 ? sessionV1Schema : sessionSchema).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join(".") : "(top level)";
    throw new SessionFileError(source, `not a valid rhema session: ${where}: ${issue.message}`);
  }
  if (version === 1) return parsed.data as SessionV1;
  const session = parsed.data as Session;
  checkCallStates(session, source);
  return session;
}

/**
 * A session's call states agree with its messages: a call is answered exactly when its state
 * is `completed` or `error`, and every record names a call of the messages.
 */
export function checkCallStates(session: Session, source: string): void {
  if (!session.calls) return;
  const answered = new Set(session.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [b.callId] : []))));
  const ids = new Set(session.messages.flatMap(toolCallsOf).map((c) => c.id));
  for (const [id, record] of Object.entries(session.calls)) {
    const bad = !ids.has(id)
      ? "names no tool call of the messages"
      : answered.has(id) !== (record.state === "completed" || record.state === "error")
        ? `is ${record.state} but ${answered.has(id) ? "has" : "has no"} result`
        : null;
    if (bad) throw new SessionFileError(source, `not a valid rhema session: calls.${id}: the call ${bad}`);
  }
}
