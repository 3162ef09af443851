/**
 * `rhema report merge DIRS… --out DIR`: the run directories of a CI matrix's shards become one
 * set of reports. The source of truth is each directory's `tasks/<suite>/<id>/result.json`;
 * each directory's `stats.json` adds its run id, times and skipped tasks (without it they are
 * taken from the results). A task present in two directories is an error. The merged meta is
 * deterministic — earliest start, latest finish, run ids joined — so merging shards 1/3, 2/3,
 * 3/3 gives the reports of the unsharded run (apart from run id and times).
 *
 * The out directory receives the results and the transcripts they point at, under the same
 * relative paths, so its reports' transcript paths resolve and it can itself be merged again.
 */
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { canonicalPath, isWithinOrSame } from "../run-dir/canonical-path.js";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import { writePrivateFileAtomic } from "../../store/private-files.js";
import { writeReports, type ReportFiles } from "./run-reports.js";
import { repositoryRelativePaths } from "./report-paths.js";
import { parseStatsReport } from "./stats-report.js";
import { guardOutput } from "../run-dir/output-guard.js";
import { RunDir } from "../run-dir/run-dir.js";
import {
  TaskResultFileError, compareTasks, taskKey,
  type ReportMeta, type SkippedTask, type TaskResult, type UnfinishedTask,
} from "../run-dir/task-result.js";

export interface MergeOptions {
  /** The merged run's id; default: the shards' run ids, sorted, joined by `+`. */
  runId?: string;
  /** Where task paths outside any repository are shown relative to (the CLI's cwd), as a run does. */
  cwd?: string;
  /** The pid the out directory's lock records; default this process's. */
  pid?: number;
}

export interface MergeOutcome {
  results: TaskResult[];
  meta: ReportMeta;
  /** The reports written in the out directory. */
  files: ReportFiles;
  /** Transcript paths (relative to a source directory) that could not be copied. */
  missingTranscripts: string[];
}

interface ShardRun {
  dir: string;
  results: TaskResult[];
  meta: ReportMeta | null;
}

/** Merges the run directories `dirs` (absolute) into `outDir` (absolute) and writes its reports. */
export async function mergeRunReports(dirs: readonly string[], outDir: string, options: MergeOptions = {}): Promise<MergeOutcome> {
  checkMergePaths(dirs, outDir);
  const shards: ShardRun[] = [];
  for (const dir of dirs) shards.push(await readShardRun(dir));
  await checkMergeOut(dirs, outDir);
  // Held while writing: a live run's directory is refused (exit 2), a dead one's lock taken over.
  const lock = await new RunDir(outDir).lock(options.pid ?? process.pid, new Date());
  try {
    return await writeMerged(shards, outDir, options);
  } finally {
    await lock.release();
  }
}

async function writeMerged(shards: readonly ShardRun[], outDir: string, options: MergeOptions): Promise<MergeOutcome> {
  const results = mergeResults(shards);
  const merged = mergeMeta(shards, results, options);
  const files = [...results, ...(merged.skipped ?? []), ...(merged.unfinished ?? [])].map((t) => t.file);
  const meta: ReportMeta = { ...merged, displayFiles: await repositoryRelativePaths(files, options.cwd ?? null) };
  const missingTranscripts: string[] = [];
  const out = new RunDir(outDir);
  for (const shard of shards) {
    for (const result of shard.results) {
      await out.task(result).writeResult(result);
      const missing = await copyTranscript(new RunDir(shard.dir), out, result.transcriptPath);
      if (missing !== null) missingTranscripts.push(missing);
    }
  }
  const reports = await writeReports(outDir, results, meta);
  return { results, meta, files: reports, missingTranscripts };
}

function checkMergePaths(dirs: readonly string[], outDir: string): void {
  if (dirs.length === 0) throw new RhemaError("usage", "Expected at least one run directory to merge, got none");
  for (const path of [...dirs, outDir]) {
    if (!isAbsolute(path)) throw new RhemaError("usage", `Expected an absolute path, got "${path}"`);
  }
  const out = resolve(outDir);
  if (dirs.some((dir) => resolve(dir) === out)) {
    throw new RhemaError("usage", `The out directory ${outDir} is also an input: merge into a new directory`);
  }
}

/**
 * The out directory, compared by real path (a link to an input is that input): not an input, not
 * inside one, not holding one; and a folder rhema may write reports in — new, empty, or an earlier
 * merge's or run's (`RunDir.inspect`), never a folder of the user's files.
 */
async function checkMergeOut(dirs: readonly string[], outDir: string): Promise<void> {
  const out = await canonicalPath(outDir);
  for (const dir of dirs) {
    const input = await canonicalPath(dir);
    if (input === out) throw new RhemaError("usage", `The out directory ${outDir} is the input ${dir}${outDir === dir ? "" : ` (both are ${out})`}: merge into a new directory`);
    if (isWithin(input, out) || isWithin(out, input)) {
      throw new RhemaError("usage", `The out directory ${outDir} (${out}) and the input ${dir} (${input}) are one inside the other: merge into a directory apart from the inputs`);
    }
  }
  const contents = await new RunDir(outDir).inspect();
  if (contents.kind === "not_folder" || contents.kind === "dangling_link" || contents.kind === "foreign") {
    const what = contents.kind === "foreign" ? `holds files that are not rhema's (${contents.entries.slice(0, 5).map((e) => JSON.stringify(e)).join(", ")})`
      : contents.kind === "dangling_link" ? `is a link to ${contents.target}, which does not exist` : "is not a folder";
    throw new RhemaError("usage", `Expected --out to be a new, empty or earlier merge's folder, got ${outDir}, which ${what}: nothing was written`);
  }
}

function isWithin(folder: string, path: string): boolean {
  return folder !== path && isWithinOrSame(folder, path);
}

async function readShardRun(dir: string): Promise<ShardRun> {
  const info = await stat(dir).catch(() => null);
  if (info === null || !info.isDirectory()) throw new RhemaError("usage", `Run directory not found: ${dir}`);
  const run = new RunDir(dir);
  const results = await run.readResults();
  const statsPath = run.reports.stats;
  const text = await run.readReport("stats");
  if (text === null) return { dir, results, meta: null };
  try {
    const stats = parseStatsReport(text);
    return { dir, results, meta: { runId: stats.runId, startedAt: stats.startedAt, finishedAt: stats.finishedAt, skipped: stats.skipped, unfinished: stats.unfinished } };
  } catch (err) {
    throw new TaskResultFileError(statsPath, `not a rhema stats.json: ${errorMessage(err).slice(0, 500)}`, { cause: err });
  }
}

function mergeResults(shards: readonly ShardRun[]): TaskResult[] {
  const owner = new Map<string, string>();
  const results: TaskResult[] = [];
  for (const shard of shards) {
    for (const result of shard.results) {
      const key = taskKey(result);
      const first = owner.get(key);
      if (first !== undefined) {
        throw new RhemaError("result_invalid", `Task ${key} is in two run directories: ${first} and ${shard.dir} (were the shards run with distinct --shard i/n?)`);
      }
      owner.set(key, shard.dir);
      results.push(result);
    }
  }
  return results.sort(compareTasks);
}

function mergeMeta(shards: readonly ShardRun[], results: readonly TaskResult[], options: MergeOptions): ReportMeta {
  const starts = [...shards.flatMap((s) => (s.meta ? [s.meta.startedAt] : [])), ...results.map((r) => r.startedAt)];
  const ends = [...shards.flatMap((s) => (s.meta ? [s.meta.finishedAt] : [])), ...results.map((r) => r.finishedAt)];
  if (starts.length === 0 || ends.length === 0) {
    throw new RhemaError("usage", `No results and no stats.json in ${shards.map((s) => s.dir).join(", ")}: nothing to merge`);
  }
  const runIds = [...new Set(shards.flatMap((s) => (s.meta ? [s.meta.runId] : [])))].sort();
  const ran = new Set(results.map(taskKey));
  const skipped = new Map<string, SkippedTask>();
  for (const task of shards.flatMap((s) => s.meta?.skipped ?? [])) {
    if (!ran.has(taskKey(task))) skipped.set(taskKey(task), task);
  }
  // A shard's task without a result (interrupted, not started) stays listed unless another shard finished it.
  const unfinished = new Map<string, UnfinishedTask>();
  for (const task of shards.flatMap((s) => s.meta?.unfinished ?? [])) {
    if (!ran.has(taskKey(task))) unfinished.set(taskKey(task), task);
  }
  return {
    runId: options.runId ?? (runIds.length > 0 ? runIds.join("+") : "merged"),
    startedAt: earliest(starts),
    finishedAt: latest(ends),
    skipped: [...skipped.values()].sort(compareTasks),
    ...(unfinished.size > 0 ? { unfinished: [...unfinished.values()].sort(compareTasks) } : {}),
  };
}

function earliest(times: readonly string[]): string {
  return times.reduce((best, time) => (Date.parse(time) < Date.parse(best) ? time : best));
}

function latest(times: readonly string[]): string {
  return times.reduce((best, time) => (Date.parse(time) > Date.parse(best) ? time : best));
}

/** Copies a result's transcript into the out directory; returns its source path when it is missing (or escapes), else null. */
async function copyTranscript(from: RunDir, out: RunDir, transcriptPath: string): Promise<string | null> {
  const source = from.resolveInside(transcriptPath);
  const target = out.resolveInside(transcriptPath);
  if (source === null || target === null) return resolve(from.path, transcriptPath);
  let bytes: Buffer;
  try {
    bytes = await readFile(source);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return source;
    throw new TaskResultFileError(source, `cannot read the transcript: ${errorMessage(err)}`, { cause: err });
  }
  await guardOutput(target, "write", () => writePrivateFileAtomic(target, bytes));
  return null;
}
