/**
 * cassette-used.json in a trial's folder (issue 25): what a replay did with the trial's cassette —
 * the exchanges it answered from (and, with `record-missing`, the ones it appended), so `rhema
 * cassette prune` keeps those and drops the rest, and a resumed replay answers identical requests
 * in their recorded order; and its first miss, which `rhema cassette show --runs` prints. A runner
 * state file (state-file.ts): written whole and atomically (0600) after each exchange used; a
 * resumed trial adds to what its earlier runs used.
 *
 *   {"version": 1, "trialStartedAt": "…", "used": [1, 2, 5], "miss": {"request": 3, "hash": "sha256:…", "detail": "…", "wentLive": false}}
 */
import { z } from "zod";
import { readStateFile, writeStateFile, type StateFileKind } from "./state-file.js";

const missSchema = z.strictObject({
  /** The trial's n-th request (of its model, or of its compaction worker: `who`). */
  request: z.number().int().positive(),
  who: z.literal("worker").optional(),
  hash: z.string(),
  /** What the miss said: where the request first differs from the nearest recorded one. */
  detail: z.string(),
  /** hybrid and record-missing: the request and the rest of the trial went to the live model. */
  wentLive: z.boolean(),
});
export type CassetteMiss = z.infer<typeof missSchema>;

const useSchema = z.strictObject({
  version: z.literal(1),
  /** The trial's task state's `startedAt`: a record of another start of the trial is not this one's. */
  trialStartedAt: z.string().optional(),
  used: z.array(z.number().int().positive()),
  miss: missSchema.optional(),
});
export type CassetteUse = z.infer<typeof useSchema>;

const CASSETTE_USE_KIND: StateFileKind<CassetteUse> = {
  schema: useSchema,
  code: "state_invalid",
  what: "a rhema record of the cassette exchanges a replay used",
  remedy: "remove it (the next replay of the trial writes it again)",
};

/** The record at `path`, its exchanges ascending; null when there is none. */
export async function readCassetteUse(path: string): Promise<CassetteUse | null> {
  const record = await readStateFile(path, CASSETTE_USE_KIND);
  return record === null ? null : { ...record, used: sortedUnique(record.used) };
}

export function writeCassetteUse(path: string, use: Omit<CassetteUse, "version">): Promise<void> {
  return writeStateFile(path, { version: 1, ...use, used: sortedUnique(use.used) });
}

function sortedUnique(used: Iterable<number>): number[] {
  return [...new Set(used)].sort((a, b) => a - b);
}
