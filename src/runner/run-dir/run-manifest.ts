/**
 * manifest.json: what a run directory holds — the run's id and start, and the tasks it was
 * asked to run (by content hash). A resumed run keeps the id and start of the first.
 * `RunDir` (run-dir.ts) reads and writes it; this module owns its shape.
 */
import { z } from "zod";
import type { StateFileKind } from "./state-file.js";

const manifestSchema = z.strictObject({
  version: z.literal(1),
  runId: z.string(),
  startedAt: z.string(),
  /** How many times this run directory was resumed. */
  resumes: z.number().int().nonnegative(),
  tasks: z.array(z.strictObject({ suite: z.string(), id: z.string(), file: z.string(), contentHash: z.string() })),
});
export type RunManifest = z.infer<typeof manifestSchema>;

export const MANIFEST_KIND: StateFileKind<RunManifest> = {
  schema: manifestSchema,
  code: "manifest_invalid",
  what: "a rhema run manifest",
  remedy: "pass another --out or remove the folder",
};
