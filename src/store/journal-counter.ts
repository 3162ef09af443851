/**
 * The journal's counter file: how many records of which generation were committed, kept
 * outside the journal so a journal cut short (truncated in its middle, restored from an older
 * copy) is detected instead of silently replaying less. A small fixed-size text file,
 * `"<generation> <count>"` padded to COUNTER_BYTES, rewritten in place and fsync'd after each
 * journal record: a kill between the two leaves the journal one record ahead, which is fine;
 * a journal behind the counter was cut.
 */
import { open, readFile, type FileHandle } from "node:fs/promises";
import { SessionFileError } from "../core/errors.js";
import { PRIVATE_FILE_MODE } from "./private-files.js";

export const COUNTER_BYTES = 32;
const COUNTER_LINE = /^(\d+) (\d+) *\n$/;

export interface JournalCount {
  generation: number;
  count: number;
}

/** An open counter file, written in place. */
export class JournalCounter {
  private constructor(private readonly handle: FileHandle) {}

  /** Opens (creating 0600) the counter at `path`; its folder must exist. */
  static async open(path: string): Promise<JournalCounter> {
    const handle = await open(path, "a+", PRIVATE_FILE_MODE);
    await handle.close();
    // "a+" only creates it: positional writes need a handle opened without O_APPEND.
    return new JournalCounter(await open(path, "r+"));
  }

  /** Records that `count` records of `generation` are committed, durably. */
  async write(value: JournalCount): Promise<void> {
    await this.handle.write(encodeCount(value), 0, COUNTER_BYTES, 0);
    await this.handle.datasync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

export function encodeCount({ generation, count }: JournalCount): Buffer {
  const text = `${generation} ${count}`;
  return Buffer.from(text.padEnd(COUNTER_BYTES - 1, " ") + "\n", "ascii");
}

/** The committed count at `path`, or null when there is no counter (or it is empty: never written). */
export async function readJournalCount(path: string): Promise<JournalCount | null> {
  let text: string;
  try {
    text = await readFile(path, "ascii");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new SessionFileError(path, `cannot read: ${(err as Error).message}`, { cause: err });
  }
  if (text === "") return null;
  const match = COUNTER_LINE.exec(text);
  if (!match) throw new SessionFileError(path, `not a journal counter (expected "<generation> <count>", got ${JSON.stringify(text.slice(0, 40))})`);
  return { generation: Number(match[1]), count: Number(match[2]) };
}

/**
 * Checks the sequence numbers of one generation's records against the counter: they must run
 * 1, 2, 3, … with no gap, and reach at least the committed count. Throws a `SessionFileError`
 * naming the journal and the missing records.
 */
export function checkJournalSequence(journalPath: string, seqs: readonly number[], committed: JournalCount | null, generation: number): void {
  for (const [k, seq] of seqs.entries()) {
    const expected = k + 1;
    if (seq !== expected) {
      const what = seq > expected ? missingText(expected, seq - 1) : `record ${seq} appears again after record ${seqs[k - 1]}`;
      throw new SessionFileError(journalPath, `the journal has a gap: ${what}; it was edited or damaged — restore it or start the task afresh`);
    }
  }
  if (committed && committed.generation === generation && seqs.length < committed.count) {
    throw new SessionFileError(
      journalPath,
      `the journal was cut: ${committed.count} records were committed but it holds ${seqs.length}; ${missingText(seqs.length + 1, committed.count)} — restore it or start the task afresh`,
    );
  }
}

function missingText(from: number, to: number): string {
  return from === to ? `record ${from} is missing` : `records ${from}–${to} are missing`;
}
