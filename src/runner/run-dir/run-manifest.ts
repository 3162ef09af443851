/**
 * manifest.json: what a run directory holds — the run's id and start, and the tasks it was
 * asked to run (by content hash). A resumed run keeps the id and start of the first.
 */
import { join } from "node:path";
import { z } from "zod";
import { writePrivateJson } from "../../store/private-files.js";
import { readStateFile } from "./state-file.js";

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
  return readStateFile(join(runDir, MANIFEST_FILE), manifestSchema, "a rhema run manifest", "pass another --out or remove the folder");
}

export async function writeManifest(runDir: string, manifest: RunManifest): Promise<void> {
  await writePrivateJson(join(runDir, MANIFEST_FILE), manifest);
}
