/**
 * cassette-used.json in a trial's folder (issue 25): which exchanges of the trial's cassette a
 * replay answered from — and, with `record-missing`, the ones it appended — so `rhema cassette
 * prune` keeps those and drops the rest. A runner state file (state-file.ts): written whole and
 * atomically (0600) after each exchange used; a resumed trial adds to what its earlier runs used.
 *
 *   {"version": 1, "used": [1, 2, 5]}
 */
import { z } from "zod";
import { readStateFile, writeStateFile, type StateFileKind } from "./state-file.js";

const CASSETTE_USE_KIND: StateFileKind<{ version: 1; used: number[] }> = {
  schema: z.strictObject({ version: z.literal(1), used: z.array(z.number().int().positive()) }),
  code: "state_invalid",
  what: "a rhema record of the cassette exchanges a replay used",
  remedy: "remove it (the next replay of the trial writes it again)",
};

/** The exchanges recorded as used at `path`, ascending; empty when there is no record. */
export async function readCassetteUse(path: string): Promise<number[]> {
  const record = await readStateFile(path, CASSETTE_USE_KIND);
  return [...new Set(record?.used ?? [])].sort((a, b) => a - b);
}

export function writeCassetteUse(path: string, used: Iterable<number>): Promise<void> {
  return writeStateFile(path, { version: 1, used: [...new Set(used)].sort((a, b) => a - b) });
}
