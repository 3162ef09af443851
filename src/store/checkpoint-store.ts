/**
 * The checkpoint store: makes every boundary of a turn durable cheaply, whatever the history's
 * size. Installed as the commit hook, it appends what each boundary changed to a journal beside
 * the session file (one JSON record per line, fsync'd), and now and then folds the journal into
 * the session file (a whole atomic rewrite), so the cost per boundary tracks what the boundary
 * added, not the history's length.
 *
 *   session.json           a valid Session (loadSession reads it alone), stamped with the
 *                          journal generation it folds in
 *   session.journal.jsonl  records {gen, keep, messages, …}: keep the first `keep` messages,
 *                          then append `messages`; records of an older generation are stale
 *
 * Loading takes the last complete record: a torn last line (a kill mid-write) is ignored; a bad
 * line before it is a `SessionFileError` naming the journal and the line.
 */
import { readFile, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Commit, CommitHook } from "../core/commit-hook.js";
import { CodingAgentError, SessionFileError } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import { messageSchema, parseSession, sectionSchema, transcriptStatsSchema, type Session } from "../core/session.js";
import { saveSession } from "./session-file.js";
import { openPrivateAppend, fsyncDir, ensurePrivateDir } from "./private-files.js";
import type { Section, TranscriptStats } from "../core/transcript-types.js";
import { z } from "zod";

export const SESSION_FILE = "session.json";
export const JOURNAL_FILE = "session.journal.jsonl";

/**
 * Where a checkpoint lives: a folder (the files get their default names in it), or the two
 * files named by their owner — e.g. the runner's task folder, the one place its paths are
 * joined. Both files must sit in one folder: the store fsyncs that folder.
 */
export type CheckpointLocation = string | { sessionPath: string; journalPath: string };

export interface CheckpointStoreOptions {
  /** Fold when the journal exceeds this many bytes and the snapshot's size (default 1 MiB). */
  foldMinBytes?: number;
}

const journalRecordSchema = z
  .object({
    gen: z.number().int().positive(),
    keep: z.number().int().nonnegative(),
    messages: z.array(messageSchema),
    environment: z.string().optional(),
    sections: z.array(sectionSchema).optional(),
    stats: transcriptStatsSchema.nullable(),
    boundary: z.enum(["input", "intent", "result", "flush"]),
  })
  .strict();
type JournalRecord = z.infer<typeof journalRecordSchema>;

export class CheckpointStore {
  readonly dir: string;
  readonly sessionPath: string;
  readonly journalPath: string;
  private readonly foldMinBytes: number;
  private journal: FileHandle | null = null;
  private generation = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  /** What is durable: message count, the last message's JSON, sections count. */
  private persistedCount = 0;
  private persistedLastJson = "";
  private persistedEnvironment: string | undefined;
  private persistedSectionsJson = "[]";

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
    this.foldMinBytes = options.foldMinBytes ?? 1024 * 1024;
  }

  /** The commit hook to install on an agent for each turn. */
  readonly hook: CommitHook = (commit) => this.commit(commit);

  /** The session as of its last complete boundary, or null when nothing was checkpointed. */
  async load(): Promise<Session | null> {
    const base = await this.readSnapshot();
    if (!base) return null;
    const records = await this.readJournal(base.journal?.generation ?? 0);
    const session = base;
    for (const r of records) {
      session.messages = [...session.messages.slice(0, r.keep), ...r.messages];
      if (r.environment !== undefined) session.environment = r.environment;
      const sections = r.sections ?? session.transcript?.sections ?? [];
      session.transcript = { sections, stats: r.stats };
    }
    this.adoptPersisted(session, base.journal?.generation ?? 0);
    return session;
  }

  async commit(c: Commit): Promise<void> {
    if (!this.journal || this.generation === 0) {
      await this.fold(c.session, c.sections, c.stats);
      return;
    }
    const record = this.recordFor(c);
    const line = JSON.stringify(record) + "\n";
    await this.journal.write(line);
    await this.journal.datasync();
    this.journalBytes += Buffer.byteLength(line);
    this.markPersisted(c.session, c.sections);
    if (this.journalBytes > Math.max(this.foldMinBytes, this.snapshotBytes)) await this.fold(c.session, c.sections, c.stats);
  }

  /** Writes the whole session as the new snapshot and starts an empty journal. */
  async fold(session: Session, sections: Section[], stats: TranscriptStats | null): Promise<void> {
    await ensurePrivateDir(this.dir);
    const generation = this.generation + 1;
    const { journal: _old, ...rest } = session;
    const snapshot: Session = { ...rest, transcript: { sections, stats }, journal: { generation } };
    await saveSession(snapshot, this.sessionPath);
    await this.journal?.close();
    this.journal = null;
    await rm(this.journalPath, { force: true });
    await fsyncDir(this.dir);
    this.journal = await openPrivateAppend(this.journalPath);
    this.generation = generation;
    this.journalBytes = 0;
    this.snapshotBytes = JSON.stringify(snapshot).length;
    this.markPersisted(session, sections);
  }

  async close(): Promise<void> {
    await this.journal?.close();
    this.journal = null;
  }

  private recordFor(c: Commit): JournalRecord {
    const messages = c.session.messages;
    let keep = Math.min(this.persistedCount, messages.length);
    if (keep > 0 && JSON.stringify(messages[keep - 1]) !== this.persistedLastJson) keep -= 1;
    const sectionsJson = JSON.stringify(c.sections);
    return {
      gen: this.generation,
      keep,
      messages: messages.slice(keep) as Message[],
      ...(c.session.environment !== this.persistedEnvironment && c.session.environment !== undefined ? { environment: c.session.environment } : {}),
      ...(sectionsJson !== this.persistedSectionsJson ? { sections: c.sections } : {}),
      stats: c.stats,
      boundary: c.boundary,
    };
  }

  private markPersisted(session: Session, sections: Section[]): void {
    this.persistedCount = session.messages.length;
    this.persistedLastJson = JSON.stringify(session.messages[session.messages.length - 1] ?? null);
    this.persistedEnvironment = session.environment;
    this.persistedSectionsJson = JSON.stringify(sections);
  }

  /** After a load: later commits append to the existing journal of that generation. */
  private adoptPersisted(session: Session, generation: number): void {
    this.generation = generation;
    this.markPersisted(session, session.transcript?.sections ?? []);
    this.snapshotBytes = 0;
    this.journal = null; // reopened by the first commit's fold, which also drops stale records
  }

  private async readSnapshot(): Promise<Session | null> {
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
    return parseSession(value, this.sessionPath);
  }

  private async readJournal(generation: number): Promise<JournalRecord[]> {
    let text: string;
    try {
      text = await readFile(this.journalPath, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new SessionFileError(this.journalPath, `cannot read: ${(err as Error).message}`, { cause: err });
    }
    // The piece after the last newline is either empty or a record torn by a kill: dropped.
    const complete = text.split("\n").slice(0, -1);
    const records: JournalRecord[] = [];
    for (const [i, line] of complete.entries()) {
      const record = parseRecord(line, this.journalPath, i + 1);
      if (record.gen === generation) records.push(record);
    }
    return records;
  }
}

function parseRecord(line: string, path: string, lineNo: number): JournalRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new SessionFileError(path, `line ${lineNo} is not JSON: the journal is corrupt before its last line`);
  }
  const parsed = journalRecordSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SessionFileError(path, `line ${lineNo}: ${issue.path.join(".") || "(record)"}: ${issue.message}`);
  }
  return parsed.data;
}
