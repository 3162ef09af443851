/**
 * manifest.json: what a run directory holds — the run's id and start, and the tasks it was
 * asked to run (by content hash). A resumed run keeps the id and start of the first.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { RhemaError } from "../core/errors.js";
import { writePrivateJson } from "../core/private-files.js";

const manifestSchema = z.strictObject({
  version: z.literal(1),
  runId: z.string(),
  startedAt: z.string(),
  /** How many times this run directory was resumed. */
  resumes: z.number().int().nonnegative(),
  tasks: z.array(z.strictObject({ suite: z.string(), id: z.string(), file: z.string(), contentHash: z.string() })),
});
export type RunManifest = z.infer<typeof manifestSchema>;

export const MANIFEST_FILE = "manifest.json";

export async function readManifest(runDir: string): Promise<RunManifest | null> {
  const path = join(runDir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    return manifestSchema.parse(JSON.parse(text));
  } catch (err) {
    throw new RhemaError("session_invalid", `${path}: not a rhema run manifest (${(err as Error).message.split("\n")[0]}); pass another --out or remove the folder`);
  }
}

export async function writeManifest(runDir: string, manifest: RunManifest): Promise<void> {
  await writePrivateJson(join(runDir, MANIFEST_FILE), manifest);
}
