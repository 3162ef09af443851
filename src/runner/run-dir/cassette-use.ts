/**
 * cassette-used.json in a trial's folder (issue 25): which exchanges of the trial's cassette a
 * replay answered from — and, with `record-missing`, the ones it appended — so `rhema cassette
 * prune` keeps those and drops the rest. Written whole and atomically (0600) after each exchange
 * used; a resumed trial adds to what its earlier runs used.
 *
 *   {"version": 1, "used": [1, 2, 5]}
 */
import { z } from "zod";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import { readRegularFile } from "../../store/input-file.js";
import { writePrivateJson } from "../../store/private-files.js";

const cassetteUseSchema = z.strictObject({
  version: z.literal(1),
  used: z.array(z.number().int().positive()),
});

/** The exchanges recorded as used at `path`, ascending; empty when there is no record. */
export async function readCassetteUse(path: string): Promise<number[]> {
  let text: string;
  try {
    text = (await readRegularFile(path)).toString("utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw new RhemaError("invalid_input", `${path}: cannot read (${errorMessage(err)})`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RhemaError("invalid_input", `${path}: not JSON (${errorMessage(err)})`, { cause: err });
  }
  const parsed = cassetteUseSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RhemaError("invalid_input", `${path}: field ${issue.path.join(".") || "(file)"}: ${issue.message}`);
  }
  return [...new Set(parsed.data.used)].sort((a, b) => a - b);
}

export function writeCassetteUse(path: string, used: Iterable<number>): Promise<void> {
  return writePrivateJson(path, { version: 1, used: [...new Set(used)].sort((a, b) => a - b) });
}
