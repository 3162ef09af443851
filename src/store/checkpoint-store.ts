/**
 * The checkpoint store: makes every boundary of a turn durable cheaply, whatever the history's
 * size. Installed as the commit hook, it appends what each boundary changed to a journal beside
 * the session file (one JSON record per line, fsync'd), and now and then folds the journal into
 * the session file (a whole atomic rewrite), so the cost per boundary tracks what the boundary
 * added, not the history's length.
 *
 *   session.json           a valid Session (loadSession reads it alone), stamped with the
 *                          journal generation it folds in
 *   session.journal.jsonl  records {gen, seq, keep, messages, calls?, …}: keep the first `keep`
 *                          messages, then append `messages`; `calls` holds the call states
 *                          that changed (version 1: the whole map of started calls); records
 *                          of an older generation are stale; `seq` counts 1, 2, 3, … within a
 *                          generation
 *   session.journal.count  how many records of which generation were committed (journal-counter.ts)
 *   session.fingerprint.json  the workspace fingerprint of the call started last (fingerprint-file.ts)
 *
 * Loading takes the last complete record: a torn last line (a kill mid-write) is ignored; a bad
 * line before it, a gap in the sequence, or fewer records than the counter says were committed
 * is a `SessionFileError` naming the journal (and the line or the missing records). A version-1
 * checkpoint (snapshot and journal) is read as written, then upgraded (session-v1.ts); the
 * first commit after a load folds it into a current snapshot.
 */
import { readFile, unlink, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Commit, CommitHook } from "../core/commit-hook.js";
import { CodingAgentError, SessionFileError, errnoCode } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import {
  callRecordSchema, checkCallStates, messageSchema, parseStoredSession, sectionSchema, startedCallV1Schema, tokenCounterRecordSchema, transcriptStatsSchema,
  type CallRecord, type Session, type SessionV1,
} from "../core/session.js";
import { upgradeSession } from "../core/session-v1.js";
import { loadFingerprint, saveFingerprint } from "./fingerprint-file.js";
import { JournalCounter, checkJournalSequence, readJournalCount } from "./journal-counter.js";
import { saveSession } from "./session-file.js";
import { openPrivateAppend, fsyncDir, ensurePrivateDir, writeFully } from "./private-files.js";
import type { Section, TranscriptStats } from "../core/transcript-types.js";
import { z } from "zod";

export const SESSION_FILE = "session.json";
export const JOURNAL_FILE = "session.journal.jsonl";
export const COUNTER_FILE = "session.journal.count";
export const FINGERPRINT_FILE = "session.fingerprint.json";

/**
 * Where a checkpoint lives: a folder (the files get their default names in it), or the files
 * named by their owner — e.g. the runner's task folder, the one place its paths are joined
 * (the counter and the fingerprint default to their names beside the session). All must sit
 * in one folder: the store fsyncs that folder.
 */
export type CheckpointLocation =
  | string
  | { sessionPath: string; journalPath: string; counterPath?: string; fingerprintPath?: string };

export interface CheckpointStoreOptions {
  /** Fold when the journal exceeds this many bytes and the snapshot's size (default 1 MiB). */
  foldMinBytes?: number;
}

function journalRecordSchema<C extends z.ZodTypeAny>(callSchema: C) {
  return z
    .object({
      gen: z.number().int().positive(),
      /** Absent in journals written before sequence numbers: such a journal is not checked. */
      seq: z.number().int().positive().optional(),
      keep: z.number().int().nonnegative(),
      messages: z.array(messageSchema),
      environment: z.string().optional(),
      tokenCounter: tokenCounterRecordSchema.optional(),
      sections: z.array(sectionSchema).optional(),
      stats: transcriptStatsSchema.nullable(),
      /** The call states that changed at this boundary (without fingerprints); version 1: all started calls, when they changed. */
      calls: z.record(z.string(), callSchema).optional(),
      boundary: z.enum(["input", "intent", "started", "result", "flush"]),
    })
    .strict();
}
const journalRecordV2 = journalRecordSchema(callRecordSchema);
const journalRecordV1 = journalRecordSchema(startedCallV1Schema);
type JournalRecord = z.infer<typeof journalRecordV2>;
type JournalRecordV1 = z.infer<typeof journalRecordV1>;

export class CheckpointStore {
  readonly dir: string;
  readonly sessionPath: string;
  readonly journalPath: string;
  readonly counterPath: string;
  readonly fingerprintPath: string;
  private readonly foldMinBytes: number;
  private journal: FileHandle | null = null;
  /** A fold wrote its snapshot but could not start the journal after it (see `fold`). */
  private journalPending = false;
  private counter: JournalCounter | null = null;
  private generation = 0;
  /** Records of this generation in the journal. */
  private seq = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  /** What is durable: message count, the last message's JSON, sections count. */
  private persistedCount = 0;
  private persistedLastJson = "";
  private persistedEnvironment: string | undefined;
  private persistedTokenCounterJson: string | undefined;
  private persistedSectionsJson = "[]";
  /** The call records as last written, by id (records are replaced, never edited: compared by identity). */
  private persistedCalls = new Map<string, CallRecord>();

  constructor(location: CheckpointLocation, options: CheckpointStoreOptions = {}) {
    const paths = typeof location === "string"
      ? { sessionPath: join(location, SESSION_FILE), journalPath: join(location, JOURNAL_FILE) }
      : location;
    this.dir = dirname(paths.sessionPath);
    if (dirname(paths.journalPath) !== this.dir) {
      throw new CodingAgentError("invalid_config", `Expected the session and its journal in one folder, got ${paths.sessionPath} and ${paths.journalPath}`);
    }
    this.sessionPath = paths.sessionPath;
    this.journalPath = paths.journalPath;
    this.counterPath = paths.counterPath ?? join(this.dir, COUNTER_FILE);
    this.fingerprintPath = paths.fingerprintPath ?? join(this.dir, FINGERPRINT_FILE);
    for (const path of [this.counterPath, this.fingerprintPath]) {
      if (dirname(path) !== this.dir) throw new CodingAgentError("invalid_config", `Expected the checkpoint's files in one folder, got ${paths.sessionPath} and ${path}`);
    }
    this.foldMinBytes = options.foldMinBytes ?? 1024 * 1024;
  }

  /** The commit hook to install on an agent for each turn. */
  readonly hook: CommitHook = (commit) => this.commit(commit);

  /** The session as of its last complete boundary, or null when nothing was checkpointed. */
  async load(): Promise<Session | null> {
    const base = await this.readSnapshot();
    if (!base) return null;
    const generation = base.journal?.generation ?? 0;
    const records = await this.readJournal(generation, base.version);
    const seqs = records.map((r) => r.seq).filter((seq): seq is number => seq !== undefined);
    if (seqs.length === records.length) checkJournalSequence(this.journalPath, seqs, await readJournalCount(this.counterPath), generation);
    for (const r of records) {
      base.messages = [...base.messages.slice(0, r.keep), ...r.messages];
      if (r.environment !== undefined) base.environment = r.environment;
      if (r.tokenCounter !== undefined) base.tokenCounter = r.tokenCounter;
      const sections = r.sections ?? base.transcript?.sections ?? [];
      base.transcript = { sections, stats: r.stats };
      if (r.calls) applyCalls(base, r.calls);
    }
    const session = upgradeSession(base);
    if (base.version === session.version) checkCallStates(session, this.journalPath);
    this.adoptPersisted(session, generation);
    await this.attachFingerprints(session);
    return session;
  }

  /** The fingerprint of a started call lives beside the journal: put it back on its record. */
  private async attachFingerprints(session: Session): Promise<void> {
    for (const [callId, record] of Object.entries(session.calls ?? {})) {
      if (record.state !== "started") continue;
      const fingerprint = await loadFingerprint(this.fingerprintPath, callId);
      if (fingerprint) session.calls![callId] = { ...record, fingerprint };
    }
  }

  async commit(c: Commit): Promise<void> {
    // A journal a fold could not start is started first: failing again, this commit fails
    // before anything of its boundary is written.
    if (this.journalPending) await this.startJournal();
    if (!this.journal || this.generation === 0 || this.callsDropped(c.session)) {
      await this.fold(c.session, c.sections, c.stats);
      return;
    }
    await this.saveNewFingerprint(c);
    const record = this.recordFor(c);
    const line = JSON.stringify(record) + "\n";
    await writeFully(this.journal, Buffer.from(line));
    await this.journal.datasync();
    // The boundary is on disk: what follows is bookkeeping, and it may not fail the commit — the
    // engine would undo what the record already says (a call recorded as started would be
    // discarded, never run, and closed as interrupted on resume). A counter that lags is allowed
    // (the loader takes records past it, and the next commit writes it again); a fold that failed
    // before its snapshot left the journal as it was, to be folded later.
    this.seq = record.seq!;
    this.journalBytes += Buffer.byteLength(line);
    this.markPersisted(c.session, c.sections);
    try {
      await this.counter!.write({ generation: this.generation, count: this.seq });
      if (this.journalBytes > Math.max(this.foldMinBytes, this.snapshotBytes)) await this.fold(c.session, c.sections, c.stats);
    } catch {
      // the journal holds the boundary
    }
  }

  /**
   * Writes the whole session as the new snapshot — the boundary is durable once it is renamed
   * into place, and a failure before that changes nothing — then starts an empty journal. A
   * journal that cannot be started then is not this commit's failure: the next commit starts it
   * first, and fails (before writing) if it still cannot.
   */
  async fold(session: Session, sections: Section[], stats: TranscriptStats | null): Promise<void> {
    await ensurePrivateDir(this.dir);
    if (session.calls) await this.saveNewFingerprint({ session });
    const generation = this.generation + 1;
    const { journal: _old, calls, ...rest } = session;
    const snapshot: Session = {
      ...rest, ...(calls ? { calls: withoutFingerprints(calls) } : {}), transcript: { sections, stats }, journal: { generation },
    };
    await saveSession(snapshot, this.sessionPath);
    this.generation = generation;
    this.seq = 0;
    this.journalBytes = 0;
    this.snapshotBytes = JSON.stringify(snapshot).length;
    this.markPersisted(session, sections);
    await this.startJournal().catch(() => {
      this.journalPending = true;
    });
  }

  /** An empty journal for the current generation (the last one's lines removed), its counter at 0. */
  private async startJournal(): Promise<void> {
    this.journalPending = true;
    await this.journal?.close();
    this.journal = null;
    // The last generation's lines removed for good; nothing to make durable where there were none (a first fold).
    const removed = await unlink(this.journalPath).then(() => true, (err: unknown) => {
      if (errnoCode(err) === "ENOENT") return false;
      throw err;
    });
    if (removed) await fsyncDir(this.dir);
    const journal = await openPrivateAppend(this.journalPath);
    try {
      this.counter ??= await JournalCounter.open(this.counterPath);
      await this.counter.write({ generation: this.generation, count: 0 });
    } catch (err) {
      await journal.close().catch(() => {});
      throw err;
    }
    this.journal = journal;
    this.journalPending = false;
  }

  async close(): Promise<void> {
    await this.journal?.close();
    this.journal = null;
    await this.counter?.close();
    this.counter = null;
  }

  /** A call that has just started: its fingerprint goes to its own file, before the record. */
  private async saveNewFingerprint(c: Pick<Commit, "session">): Promise<void> {
    for (const [callId, record] of Object.entries(c.session.calls ?? {})) {
      if (record.state === "started" && record.fingerprint && this.persistedCalls.get(callId)?.state !== "started") {
        await saveFingerprint(this.fingerprintPath, callId, record.fingerprint);
      }
    }
  }

  /** True when a call record written before is gone from the session: a patch cannot say it, a fold can. */
  private callsDropped(session: Session): boolean {
    const calls = session.calls ?? {};
    for (const id of this.persistedCalls.keys()) if (!(id in calls)) return true;
    return false;
  }

  private recordFor(c: Commit): JournalRecord {
    const messages = c.session.messages;
    let keep = Math.min(this.persistedCount, messages.length);
    if (keep > 0 && JSON.stringify(messages[keep - 1]) !== this.persistedLastJson) keep -= 1;
    const sectionsJson = JSON.stringify(c.sections);
    const calls = this.changedCalls(c.session);
    return {
      gen: this.generation,
      seq: this.seq + 1,
      keep,
      messages: messages.slice(keep) as Message[],
      ...(c.session.environment !== this.persistedEnvironment && c.session.environment !== undefined ? { environment: c.session.environment } : {}),
      ...(c.session.tokenCounter !== undefined && JSON.stringify(c.session.tokenCounter) !== this.persistedTokenCounterJson ? { tokenCounter: c.session.tokenCounter } : {}),
      ...(sectionsJson !== this.persistedSectionsJson ? { sections: c.sections } : {}),
      stats: c.stats,
      ...(Object.keys(calls).length > 0 ? { calls } : {}),
      boundary: c.boundary,
    };
  }

  /** The call records that changed since the last write, without fingerprints. */
  private changedCalls(session: Session): Record<string, CallRecord> {
    const changed: Record<string, CallRecord> = {};
    for (const [id, record] of Object.entries(session.calls ?? {})) {
      const was = this.persistedCalls.get(id);
      if (was === record) continue;
      const bare = withoutFingerprint(record);
      if (was === undefined || JSON.stringify(withoutFingerprint(was)) !== JSON.stringify(bare)) changed[id] = bare;
    }
    return changed;
  }

  private markPersisted(session: Session, sections: Section[]): void {
    this.persistedCount = session.messages.length;
    this.persistedLastJson = JSON.stringify(session.messages[session.messages.length - 1] ?? null);
    this.persistedEnvironment = session.environment;
    this.persistedTokenCounterJson = session.tokenCounter === undefined ? undefined : JSON.stringify(session.tokenCounter);
    this.persistedSectionsJson = JSON.stringify(sections);
    this.persistedCalls = new Map(Object.entries(session.calls ?? {}));
  }

  /** After a load: later commits append to the existing journal of that generation. */
  private adoptPersisted(session: Session, generation: number): void {
    this.generation = generation;
    this.markPersisted(session, session.transcript?.sections ?? []);
    this.snapshotBytes = 0;
    this.journal = null; // reopened by the first commit's fold, which also drops stale records
  }

  /** The snapshot as written (version 1 or current), not yet upgraded: its journal applies first. */
  private async readSnapshot(): Promise<Session | SessionV1 | null> {
    let text: string;
    try {
      text = await readFile(this.sessionPath, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new SessionFileError(this.sessionPath, `cannot read: ${(err as Error).message}`, { cause: err });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new SessionFileError(this.sessionPath, `not JSON (truncated or corrupt): ${(err as Error).message}`, { cause: err });
    }
    return parseStoredSession(value, this.sessionPath);
  }

  private async readJournal(generation: number, version: Session["version"] | SessionV1["version"]): Promise<Array<JournalRecord | JournalRecordV1>> {
    let text: string;
    try {
      text = await readFile(this.journalPath, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new SessionFileError(this.journalPath, `cannot read: ${(err as Error).message}`, { cause: err });
    }
    // The piece after the last newline is either empty or a record torn by a kill: dropped.
    const complete = text.split("\n").slice(0, -1);
    const records: Array<JournalRecord | JournalRecordV1> = [];
    for (const [i, line] of complete.entries()) {
      const record = parseRecord(line, this.journalPath, i + 1, version === 1 ? journalRecordV1 : journalRecordV2);
      if (record.gen === generation) records.push(record);
    }
    return records;
  }
}

function withoutFingerprint(record: CallRecord): CallRecord {
  if (record.state !== "started" || !record.fingerprint) return record;
  const { fingerprint: _fp, ...rest } = record;
  return rest;
}

function withoutFingerprints(calls: Record<string, CallRecord>): Record<string, CallRecord> {
  return Object.fromEntries(Object.entries(calls).map(([id, record]) => [id, withoutFingerprint(record)]));
}

/** A record's calls onto the session: version 1 replaces the started calls, the current version merges the changed ones. */
function applyCalls(session: Session | SessionV1, calls: Record<string, unknown>): void {
  const next = session.version === 1 ? structuredClone(calls) : { ...session.calls, ...structuredClone(calls) };
  if (Object.keys(next).length === 0) delete session.calls;
  else (session as { calls?: unknown }).calls = next;
}

function parseRecord(line: string, path: string, lineNo: number, schema: typeof journalRecordV1 | typeof journalRecordV2): JournalRecord | JournalRecordV1 {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new SessionFileError(path, `line ${lineNo} is not JSON: the journal is corrupt before its last line`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SessionFileError(path, `line ${lineNo}: ${issue.path.join(".") || "(record)"}: ${issue.message}`);
  }
  return parsed.data;
}

