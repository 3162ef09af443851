/**
 * The run history `rhema report trend DIRS…` reads: each run directory (a run's, or a merge's)
 * becomes one `HistoryRun` — its id, when it started, and its tasks over their trials, judged as
 * its own reports judge them (task-trials.ts: results, the manifest's planned trials and gates,
 * stats.json's unfinished trials and quarantine list).
 *
 * Order: oldest first by the time each run started — its manifest's `startedAt` (a resumed run
 * keeps its first start), else its stats.json's (a merge: the earliest shard's), else its
 * earliest result's — whatever order the directories are given in; two runs that started at the
 * same moment keep the order given. A folder that is not a run directory (no manifest, no
 * stats.json, no result) is exit 2 naming it; so is one directory given twice.
 */
import { stat } from "node:fs/promises";
import { RhemaError, errorMessage } from "../../core/errors.js";
import { checkDistinctDirs } from "./input-dirs.js";
import { RunDir } from "../run-dir/run-dir.js";
import { TaskResultFileError } from "../run-dir/task-result.js";
import { EVERY_TRIAL } from "../trials/trial-gate.js";
import { parseStatsReport } from "./stats-report.js";
import { groupTaskTrials, type TaskTrials } from "./task-trials.js";
import type { QuarantineRecord, ReportMeta } from "./report-meta.js";

/** One run of the history. */
export interface HistoryRun {
  /** The run directory, as given (absolute). */
  dir: string;
  runId: string;
  /** ISO time it started (see the header for where it is read from). */
  startedAt: string;
  /** Its tasks with their trials and verdicts, by suite then id. */
  tasks: TaskTrials[];
  /** The quarantine list it ran with; null without one. */
  quarantine: QuarantineRecord | null;
}

/** Reads the run directories `dirs` (absolute) and returns their runs, oldest first. */
export async function readRunHistory(dirs: readonly string[]): Promise<HistoryRun[]> {
  if (dirs.length === 0) throw new RhemaError("usage", "Expected at least one run directory, got none");
  for (const dir of dirs) {
    const info = await stat(dir).catch(() => null);
    if (info === null || !info.isDirectory()) throw new RhemaError("usage", `Run directory not found: ${dir}`);
  }
  await checkDistinctDirs(dirs, "give each run once");
  const runs: HistoryRun[] = [];
  for (const dir of dirs) runs.push(await readHistoryRun(dir));
  // Array.prototype.sort is stable: runs that started at the same moment keep the order given.
  return runs.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
}

async function readHistoryRun(dir: string): Promise<HistoryRun> {
  const run = new RunDir(dir);
  const manifest = await run.readManifest();
  const results = await run.readResults();
  const text = await run.readReport("stats");
  let stats: ReturnType<typeof parseStatsReport> | null = null;
  if (text !== null) {
    try {
      stats = parseStatsReport(text);
    } catch (err) {
      if (err instanceof RhemaError) throw err;
      throw new TaskResultFileError(run.reports.stats, `not a rhema stats.json: ${errorMessage(err).slice(0, 500)}`, { cause: err });
    }
  }
  const startedAt = manifest?.startedAt ?? stats?.startedAt ?? results.map((r) => r.startedAt).sort((a, b) => Date.parse(a) - Date.parse(b))[0];
  if (startedAt === undefined) throw new RhemaError("usage", `${dir} is not a rhema run directory (no manifest.json, stats.json or result): pass run directories`);
  const meta: Pick<ReportMeta, "trialPlans" | "unfinished" | "quarantine"> = {
    trialPlans: (manifest?.tasks ?? []).map((t) => ({ suite: t.suite, id: t.id, trials: t.trials ?? 1, gate: t.gate ?? EVERY_TRIAL })),
    unfinished: stats?.unfinished ?? [],
    quarantine: stats?.quarantine ?? null,
  };
  return { dir, runId: manifest?.runId ?? stats?.runId ?? dir, startedAt, tasks: groupTaskTrials(results, meta), quarantine: stats?.quarantine ?? null };
}
