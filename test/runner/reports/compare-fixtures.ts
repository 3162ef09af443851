/** Run directories for `report compare` tests: results with chosen pass counts per task and cell, written in layout 2. */
import { mkdir } from "node:fs/promises";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import type { TaskResult } from "../../../src/runner/run-dir/task-result.js";
import { sampleResult } from "../sample-results.js";

/** A cell of a task: `passes` of `trials` passed (the rest failed), each trial costing `usd` (null: unpriced). */
export interface CellSpec {
  suite?: string;
  id: string;
  variant?: string | null;
  passes: number;
  trials: number;
  usd?: number | null;
  steps?: number;
}

/** The results of the cells: repeats 1..trials, the first `passes` of them passed. */
export function cellResults(cells: readonly CellSpec[]): TaskResult[] {
  return cells.flatMap((cell) => Array.from({ length: cell.trials }, (_, i) => {
    const result = sampleResult(cell.suite ?? "s", cell.id, i < cell.passes ? "passed" : "failed", 1);
    const usd = cell.usd === undefined ? 0.01 : cell.usd;
    return {
      ...result,
      steps: cell.steps ?? 3,
      trial: { repeat: i + 1, variant: cell.variant ?? null },
      cost: { usd, workerUsd: 0, unpricedRequests: usd === null ? 1 : 0, pricedAs: usd === null ? null : "anthropic/claude-sonnet-4-6", workerPricedAs: null, simulated: false, prices: { source: "test", version: "1", pricingFile: null } },
    } satisfies TaskResult;
  }));
}

/**
 * Writes a layout-2 run directory at `dir` holding the cells' results, its manifest as a run writes
 * it: one task entry per (task, variant) pair planning that cell's trials, and the variants listed.
 */
export async function writeCompareRun(dir: string, cells: readonly CellSpec[]): Promise<void> {
  const run = new RunDir(dir);
  await mkdir(dir, { recursive: true });
  const tasks = new Map<string, { suite: string; id: string; variant?: string; trials: number }>();
  for (const cell of cells) {
    const suite = cell.suite ?? "s";
    const key = `${suite}/${cell.id}@${cell.variant ?? ""}`;
    tasks.set(key, { suite, id: cell.id, ...(cell.variant ? { variant: cell.variant } : {}), trials: Math.max(tasks.get(key)?.trials ?? 0, cell.trials) });
  }
  const variants = [...new Set(cells.flatMap((c) => (c.variant ? [c.variant] : [])))].sort();
  await run.writeManifest({
    version: 1, layout: 2, runId: `run-${dir.length}`, startedAt: "2025-01-02T03:00:00.000Z", resumes: 0, activeMs: 0, hashScheme: "content-v2", shard: null,
    ...(variants.length > 0 ? { variants } : {}),
    tasks: [...tasks.values()].map((t) => ({
      suite: t.suite, id: t.id, ...(t.variant ? { variant: t.variant } : {}), file: `/repo/tasks/${t.suite}/${t.id}.yaml`,
      contentHash: "ab".repeat(32), trials: t.trials, gate: { kind: "every" as const },
    })),
  });
  for (const result of cellResults(cells)) await run.folderOf(result).writeResult(result);
}
