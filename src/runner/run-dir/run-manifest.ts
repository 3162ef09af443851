/**
 * manifest.json: what a run directory holds — the run's id and start, the time it has run,
 * and the run's whole selection of tasks (by content hash). A resumed run keeps the id and
 * start of the first. A later run may select a subset of the manifest's tasks; a selection
 * with tasks the manifest lacks is refused unless the run is extended (`--add`) or started
 * over (`--restart`) — `planManifestTasks` decides which; a run of another `--shard` is
 * refused (`shardChange`). The hashes are in the scheme the
 * manifest names (`hashScheme`). `RunDir` (run-dir.ts) reads and
 * writes the file; this module owns its shape.
 */
import { z } from "zod";
import type { StateFileKind } from "./state-file.js";
import { compareTasks, taskKey } from "../tasks/task-key.js";
import { trialGateSchema } from "../trials/trial-gate.js";
import { VARIANT_NAME_PATTERN, type TrialKey } from "../trials/trial-key.js";

const manifestTaskSchema = z.strictObject({
  suite: z.string(), id: z.string(),
  /** The matrix cell this entry runs the task as (its hash then covers the cell's overrides); absent: the task as written. */
  variant: z.string().regex(VARIANT_NAME_PATTERN).optional(),
  file: z.string(), contentHash: z.string(),
  /** How many trials (repeats) of the task the run plans; absent (layout 1): one. */
  trials: z.number().int().positive().optional(),
  /** What makes the task pass over its trials; absent: every counted trial (trial-gate.ts). */
  gate: trialGateSchema.optional(),
});

const manifestSchema = z.strictObject({
  version: z.literal(1),
  /**
   * How the run directory lays out its tasks: 2, one folder per trial
   * (`tasks/<suite>/<id>/<variant|default>/<n>/`); absent, layout 1 (`tasks/<suite>/<id>/`,
   * made before trials: reports, merge and replay read it; a run does not resume it).
   */
  layout: z.literal(2).optional(),
  /** The run's variants (the matrix's cells, by id); empty or absent: none. */
  variants: z.array(z.string()).optional(),
  /** Each variant's overrides (per axis, as the matrix file set them), their hash, and its budget (absent: none); absent: no matrix. */
  cells: z.array(z.strictObject({
    variant: z.string(), overrides: z.record(z.string(), z.unknown()), hash: z.string(),
    budget: z.strictObject({ maxCostUsd: z.number().positive().optional(), maxTokens: z.number().int().positive().optional() }).optional(),
  })).optional(),
  runId: z.string(),
  startedAt: z.string(),
  /** How many times this run directory was resumed. */
  resumes: z.number().int().nonnegative(),
  /**
   * Wall time the run has been running, summed over its invocations (updated at each report
   * write, so a killed invocation loses at most the time since its last one). Not the span
   * since `startedAt`, which would count the gaps between resumes.
   */
  activeMs: z.number().int().nonnegative().default(0),
  /**
   * Which content hash the tasks' hashes are in (content-hash.ts); a manifest written before
   * the field is `file-bytes`, and a run directory keeps its scheme for its whole life.
   */
  hashScheme: z.enum(["file-bytes", "content-v2"]).default("file-bytes"),
  /**
   * The run's shard as `--shard` gave it, `i/n`; null for an unsharded run. A manifest written
   * before the field has none (unknown): the next run records its own. Resuming with another
   * shard is refused (`shardChange`), `--restart` starts the run over as the new one.
   */
  shard: z.string().nullable().optional(),
  /** The run's whole selection: every task its reports cover. */
  tasks: z.array(manifestTaskSchema),
});
export type RunManifest = z.infer<typeof manifestSchema>;
export type ManifestTask = z.infer<typeof manifestTaskSchema>;

export const MANIFEST_KIND: StateFileKind<RunManifest> = {
  schema: manifestSchema,
  code: "manifest_invalid",
  what: "a rhema run manifest",
  remedy: "pass another --out or remove the folder",
};

/** The trials a manifest task plans: its variant's (none: null) repeats 1..`trials`. */
export function plannedTrials(task: Pick<ManifestTask, "suite" | "id" | "trials"> & { variant?: string | undefined }): TrialKey[] {
  return Array.from({ length: task.trials ?? 1 }, (_, i) => ({ suite: task.suite, id: task.id, variant: task.variant ?? null, repeat: i + 1 }));
}

/**
 * How a run treats a run directory that already holds a run: `resume` (the selection must be
 * among the manifest's tasks), `add` (tasks the manifest lacks join the run), `restart` (the
 * run directory's tasks and manifest are wiped first).
 */
export type SelectionMode = "resume" | "add" | "restart";

export type ManifestPlan =
  | { kind: "ok"; tasks: ManifestTask[] }
  /** Selected tasks the manifest does not hold, in task order. */
  | { kind: "outside"; missing: ManifestTask[] };

/**
 * The manifest's tasks after this run's selection: the previous ones (the selected among them
 * updated to their current file and hash) plus, with `add`, the new ones; with `restart` or no
 * previous manifest, the selection itself. Sorted by suite, then id.
 */
export function planManifestTasks(previous: readonly ManifestTask[] | null, selected: readonly ManifestTask[], mode: SelectionMode): ManifestPlan {
  if (previous === null || mode === "restart") return { kind: "ok", tasks: [...selected].sort(compareTasks) };
  const known = new Set(previous.map(taskKey));
  const missing = selected.filter((task) => !known.has(taskKey(task))).sort(compareTasks);
  if (missing.length > 0 && mode !== "add") return { kind: "outside", missing };
  const merged = new Map(previous.map((task) => [taskKey(task), task]));
  for (const task of selected) merged.set(taskKey(task), task);
  return { kind: "ok", tasks: [...merged.values()].sort(compareTasks) };
}

/**
 * Why a run with shard `shard` (`i/n`, null unsharded) may not resume the run `previous`
 * recorded: the message naming both, or null when it may (the same shard, or a manifest too old
 * to say). A shard's tasks are another shard's tasks' complement: resuming would mix them.
 */
export function shardChange(runDir: string, previous: Pick<RunManifest, "shard">, shard: string | null): string | null {
  if (previous.shard === undefined || previous.shard === shard) return null;
  const was = (s: string | null) => (s === null ? "an unsharded run (no --shard)" : `shard ${s} (--shard ${s})`);
  return `${runDir} holds ${was(previous.shard)}, and this run is ${was(shard)}: run the same shard to resume it, ` +
    "start the run over with --restart, or pass another --out";
}
