/**
 * The session: everything a conversation is, versioned and validated (its file lives in
 * src/store/session-file.ts). A foreign or future value is a `SessionFileError` naming its source.
 */
import { z } from "zod";
import { SessionFileError } from "./errors.js";
import { IMAGE_MEDIA_TYPES, type Message } from "./messages.js";
import type { PidScope } from "./tool.js";
import type { Section, TranscriptStats } from "./transcript-types.js";

export const SESSION_VERSION = 1;

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
  messages: Message[];
  /** The transcript mirror as of the last save: restored with adoptTranscriptSections. */
  transcript?: { sections: Section[]; stats: TranscriptStats | null };
  /** Set by the checkpoint store: which journal generation this snapshot folds in. */
  journal?: { generation: number };
  /**
   * The calls that have *started* (approved, about to run) and have no result yet, by call id.
   * A call leaves this map when its result is appended; absent when no call is running.
   */
  calls?: Record<string, StartedCall>;
}

/**
 * A call's `started` record. A call in the intent with no record never ran; one with a record
 * may have, and is never run again behind the model's back.
 */
export interface StartedCall {
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

/** A cheap picture of the workspace: each file's size and mtime, by workspace-relative path. */
export interface WorkspaceFingerprint {
  files: Record<string, [sizeBytes: number, mtimeMs: number]>;
  /** True when the walk stopped at its file cap: changes beyond it are unknown. */
  capped: boolean;
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
export const messageSchema = z
  .object({
    role: z.enum(["user", "assistant"]),
    content: z.array(z.discriminatedUnion("type", [textBlock, imageBlock, toolCallBlock, toolResultBlock])),
  })
  .strict();

const nonNegative = z.number().nonnegative();
/** Fields added after the first release default to 0, so older checkpoints and results still read. */
const added = nonNegative.default(0);
export const transcriptStatsSchema = z.object({
  requests: nonNegative, flushes: nonNegative, freeFlushes: added, summaryMerges: added,
  blockTokens: nonNegative, sections: nonNegative,
  inputTokens: nonNegative, cacheReadTokens: nonNegative, cacheWriteTokens: nonNegative, cacheWrite1hTokens: added,
  outputTokens: nonNegative, peakRequestTokens: added, requestTokens: added,
  workerRequests: nonNegative, workerInputTokens: nonNegative, workerCacheReadTokens: added, workerCacheWriteTokens: added,
  workerOutputTokens: nonNegative, newTokens: added, budgetedTokens: added,
  costUsd: added, workerCostUsd: added, unpricedRequests: added,
  cacheHitRate: z.number().min(0).max(1), limitHitRate: z.number().min(0).max(1).default(0),
});
export const fingerprintSchema = z
  .object({ files: z.record(z.string(), z.tuple([nonNegative, z.number()])), capped: z.boolean() })
  .strict();
export const startedCallSchema = z
  .object({
    at: z.string().min(1),
    host: z.string().optional(),
    pgid: z.number().int().positive().optional(),
    startTime: z.number().nonnegative().optional(),
    pidScope: z.object({ bootId: z.string().min(1), pidNamespace: z.string().min(1) }).strict().optional(),
    fingerprint: fingerprintSchema.optional(),
  })
  .strict();

export const sectionSchema = z.object({
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
  hash: z.string(),
  tokens: nonNegative,
  summary: z.string().nullable(),
});

export const sessionSchema = z
  .object({
    version: z.literal(SESSION_VERSION),
    id: z.string().min(1),
    createdAt: z.string().min(1),
    environment: z.string().optional(),
    messages: z.array(messageSchema),
    transcript: z.object({ sections: z.array(sectionSchema), stats: transcriptStatsSchema.nullable() }).optional(),
    journal: z.object({ generation: z.number().int().nonnegative() }).optional(),
    calls: z.record(z.string(), startedCallSchema).optional(),
  })
  .passthrough();

export function newSession(id: string, createdAt: Date): Session {
  return { version: SESSION_VERSION, id, createdAt: createdAt.toISOString(), messages: [] };
}

/** Checks a parsed value is a session this version understands; `source` names it in errors. */
export function parseSession(value: unknown, source: string): Session {
  if (typeof value === "object" && value !== null && "version" in value) {
    const version = (value as { version: unknown }).version;
    if (version !== SESSION_VERSION) {
      throw new SessionFileError(source, `unsupported session version ${JSON.stringify(version)} (this rhema reads version ${SESSION_VERSION})`);
    }
  }
  const parsed = sessionSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join(".") : "(top level)";
    throw new SessionFileError(source, `not a valid rhema session: ${where}: ${issue.message}`);
  }
  return parsed.data as Session;
}
