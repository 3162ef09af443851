/**
 * `rhema report merge DIRS… --out DIR`: the run directories of a CI matrix's shards become one
 * set of reports. The source of truth is each directory's `tasks/<suite>/<id>/result.json`;
 * each directory's `stats.json` adds its run id, times, wall time, shard and skipped tasks
 * (without it they are taken from the results, and the shard from `manifest.json`); each
 * directory's `manifest.json` gives its tasks' planned trials and gates. A task present in two
 * directories (any of its trials, with a result or not) is an error, and so is one directory
 * given twice (by any path). `--pass-at` and `--junit-cases` shape the merged reports as they
 * shape a run's.
 * The merged meta is deterministic — earliest start, latest finish, the longest input's wall
 * time (the jobs of a matrix run side by side), run ids joined — so merging shards 1/3, 2/3,
 * 3/3 gives the reports of the unsharded run (apart from run id, times and the shard record).
 *
 * Shards (`checkShards`): inputs that record one (`i/n`, or an earlier merge's shards) must be
 * all of one `n`, none twice, and together every `i` — else exit 2 naming them; with
 * `allowPartial` missing shards are allowed and the merged reports name them. Inputs that record
 * none (unsharded runs, run directories of rhemas before the record) merge unchecked among
 * themselves, as before; beside sharded inputs they need `allowPartial` (which shard they were
 * cannot be told).
 *
 * The out directory receives the results, the transcripts and patches they point at and each
 * trial's checkpoint (an interrupted trial's transcript and checkpoint too), under the same
 * relative paths, so its reports' paths resolve, its report.html shows every conversation, and
 * it can itself be merged again: a merged directory stands on its own.
 */
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { canonicalPath, isWithinOrSame } from "../tasks/canonical-path.js";
import { checkDistinctDirs } from "./input-dirs.js";
import { RhemaError, errnoCode, errorMessage, type ProviderRefusal } from "../../core/errors.js";
import { writePrivateFileAtomic } from "../../store/private-files.js";
import { writeReports, type ReportFiles } from "./run-reports.js";
import { repositoryRelativeDir, repositoryRelativePaths } from "./report-paths.js";
import { parseStatsReport } from "./stats-report.js";
import { formatShard, parseShard } from "../tasks/suite-loader.js";
import { guardOutput } from "../run-dir/output-guard.js";
import { RunDir } from "../run-dir/run-dir.js";
import { TaskResultFileError, type TaskResult, type TaskTrialPlan, type UnfinishedTask } from "../run-dir/task-result.js";
import { compareTasks, taskKey, type SkippedTask } from "../tasks/task-key.js";
import { type JunitCases, type ReportMeta, type ShardCoverage } from "./report-meta.js";
import { cellKeyOf, trialKeyOf } from "./task-trials.js";
import { compareTrials, trialLabel } from "../trials/trial-key.js";
import { EVERY_TRIAL } from "../trials/trial-gate.js";
import type { QuarantineEntry } from "../tasks/quarantine-file.js";

export interface MergeOptions {
  /** The merged run's id; default: the shards' run ids, sorted, joined by `+`. */
  runId?: string;
  /** Where task paths outside any repository are shown relative to (the CLI's cwd), as a run does. */
  cwd?: string;
  /** The pid the out directory's lock records; default this process's. */
  pid?: number;
  /** Merge although shards are missing (or inputs record no shard); the merged reports name the missing ones. */
  allowPartial?: boolean;
  /** The k's of pass@k and pass^k the merged reports show (`--pass-at`); default none. */
  passAt?: readonly number[];
  /** The JUnit testcase granularity of the merged junit.xml (`--junit-cases`); default task. */
  junitCases?: JunitCases;
}

export interface MergeOutcome {
  results: TaskResult[];
  meta: ReportMeta;
  /** The reports written in the out directory. */
  files: ReportFiles;
  /** Transcript paths (relative to a source directory) that could not be copied. */
  missingTranscripts: string[];
}

/** Which shards an input holds: one (`--shard i/n`), an earlier merge's, or none recorded. */
type InputShards =
  | { kind: "shard"; count: number; indexes: number[] }
  | { kind: "merged"; count: number; indexes: number[] }
  | { kind: "none" };

/** An input run directory as `report merge` (and `report compare`) reads it. */
export interface ShardRun {
  dir: string;
  results: TaskResult[];
  meta: ReportMeta | null;
  shards: InputShards;
  /** Its manifest's tasks' planned trials and gates; empty without a manifest. */
  trialPlans: TaskTrialPlan[];
}

/** Merges the run directories `dirs` (absolute) into `outDir` (absolute) and writes its reports. */
export async function mergeRunReports(dirs: readonly string[], outDir: string, options: MergeOptions = {}): Promise<MergeOutcome> {
  checkMergePaths(dirs, outDir);
  const shards: ShardRun[] = [];
  for (const dir of dirs) shards.push(await readShardRun(dir));
  await checkDistinctDirs(dirs, "give each shard's directory once");
  const coverage = checkShards(shards, options.allowPartial ?? false);
  await checkMergeOut(dirs, outDir);
  // Held while writing: a live run's directory is refused (exit 2), a dead one's lock taken over.
  const lock = await new RunDir(outDir).lock(options.pid ?? process.pid, new Date());
  try {
    return await writeMerged(shards, coverage, outDir, options);
  } finally {
    await lock.release();
  }
}

async function writeMerged(shards: readonly ShardRun[], coverage: ShardCoverage | null, outDir: string, options: MergeOptions): Promise<MergeOutcome> {
  const results = mergeResults(shards);
  const merged = { ...mergeMeta(shards, results, options), shard: null, shards: coverage };
  const files = [...results, ...(merged.skipped ?? []), ...(merged.unfinished ?? [])].map((t) => t.file);
  const runDirShown = await repositoryRelativeDir(outDir, options.cwd ?? null);
  const meta: ReportMeta = { ...merged, displayFiles: await repositoryRelativePaths(files, options.cwd ?? null), ...(runDirShown !== null ? { runDirShown } : {}) };
  const missingTranscripts: string[] = [];
  const out = new RunDir(outDir);
  for (const shard of shards) {
    for (const result of shard.results) {
      await out.folderOf(result).writeResult(result);
      const missing = await copyTranscript(new RunDir(shard.dir), out, result.transcriptPath);
      if (missing !== null) missingTranscripts.push(missing);
      // The patch comes along, so the merged reports attach what the shard's did; one gone is not attached elsewhere.
      if (result.changes?.path) await copyTranscript(new RunDir(shard.dir), out, result.changes.path);
      await copyCheckpoint(new RunDir(shard.dir), out, result);
    }
    // An interrupted trial's partial conversation comes along too: the page shows what it did.
    for (const task of shard.meta?.unfinished ?? []) {
      if (task.state !== "interrupted") continue;
      await copyTranscript(new RunDir(shard.dir), out, new RunDir(shard.dir).folderOf(task).relativePath("events"));
      await copyCheckpoint(new RunDir(shard.dir), out, task);
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

/**
 * Reads the run directory `dir` (absolute): its results, its stats.json's meta, its shard record
 * and its manifest's trial plans. A path that is not a folder is exit 2, and so is a result,
 * manifest or stats.json that does not validate.
 */
export async function readShardRun(dir: string): Promise<ShardRun> {
  const info = await stat(dir).catch(() => null);
  if (info === null || !info.isDirectory()) throw new RhemaError("usage", `Run directory not found: ${dir}`);
  const run = new RunDir(dir);
  const results = await run.readResults();
  const statsPath = run.reports.stats;
  const text = await run.readReport("stats");
  const manifest = await run.readManifest();
  // A task the manifest gives no trial count (layout 1) has one trial and the every-trial gate.
  const trialPlans = (manifest?.tasks ?? []).map((t) => ({ suite: t.suite, id: t.id, ...(t.variant !== undefined ? { variant: t.variant } : {}), trials: t.trials ?? 1, gate: t.gate ?? EVERY_TRIAL }));
  if (text === null) {
    // No reports yet (killed before its first write): the manifest, if any, says its shard.
    return { dir, results, meta: null, shards: inputShards(manifest?.shard ?? null, null, join(dir, "manifest.json")), trialPlans };
  }
  try {
    const stats = parseStatsReport(text);
    return {
      dir, results,
      meta: {
        runId: stats.runId, startedAt: stats.startedAt, finishedAt: stats.finishedAt, wallTimeMs: stats.wallTimeMs, skipped: stats.skipped, unfinished: stats.unfinished,
        quarantine: stats.quarantine, refusals: stats.refusals,
      },
      shards: inputShards(stats.shard, stats.shards, statsPath),
      trialPlans,
    };
  } catch (err) {
    if (err instanceof RhemaError) throw err;
    throw new TaskResultFileError(statsPath, `not a rhema stats.json: ${errorMessage(err).slice(0, 500)}`, { cause: err });
  }
}

/** An input's shards from its record: `shard` (`i/n`) or an earlier merge's `shards`; neither is none. */
function inputShards(shard: string | null, merged: ShardCoverage | null, file: string): InputShards {
  try {
    if (shard !== null) {
      const { index, count } = parseShard(shard);
      return { kind: "shard", count, indexes: [index] };
    }
    if (merged !== null) {
      const indexes = merged.merged.map((text) => parseShard(text)).map((s) => {
        if (s.count !== merged.count) throw new RhemaError("usage", `shard ${formatShard(s)} is not one of ${merged.count}`);
        return s.index;
      });
      return { kind: "merged", count: merged.count, indexes };
    }
  } catch (err) {
    throw new TaskResultFileError(file, `its shard record is not i/n: ${errorMessage(err)}`, { cause: err });
  }
  return { kind: "none" };
}


/**
 * The shards the merge holds, checked (see the header): null when no input records a shard.
 * Mixed totals and a shard given twice are errors always; missing shards, and inputs that record
 * none beside sharded ones, unless `allowPartial`.
 */
function checkShards(inputs: readonly Pick<ShardRun, "dir" | "shards">[], allowPartial: boolean): ShardCoverage | null {
  const sharded = inputs.flatMap((input) => (input.shards.kind === "none" ? [] : [{ dir: input.dir, ...input.shards }]));
  if (sharded.length === 0) return null;
  const describe = (input: (typeof sharded)[number]) =>
    `${input.dir} (${input.kind === "shard" ? `shard ${input.indexes[0]}/${input.count}` : `merged shards ${input.indexes.map((i) => `${i}/${input.count}`).join(", ") || "none"}`})`;
  const counts = [...new Set(sharded.map((input) => input.count))].sort((a, b) => a - b);
  if (counts.length > 1) {
    throw new RhemaError("usage", `Expected shards of one matrix, got shards of ${counts.join(" and ")}: ${sharded.map(describe).join(", ")}`);
  }
  const count = counts[0]!;
  const owner = new Map<number, (typeof sharded)[number]>();
  for (const input of sharded) {
    for (const index of input.indexes) {
      const first = owner.get(index);
      if (first !== undefined) throw new RhemaError("usage", `Shard ${index}/${count} is given twice: ${describe(first)} and ${describe(input)}`);
      owner.set(index, input);
    }
  }
  const unrecorded = inputs.filter((input) => input.shards.kind === "none").map((input) => input.dir);
  if (unrecorded.length > 0 && !allowPartial) {
    throw new RhemaError("usage", `These inputs record no shard (unsharded runs, or run by an older rhema): ${unrecorded.join(", ")}; ` +
      `the others are shards of ${count}: ${sharded.map(describe).join(", ")}. Merge them apart, or pass --allow-partial to merge them unchecked`);
  }
  const all = Array.from({ length: count }, (_, k) => k + 1);
  const missing = all.filter((index) => !owner.has(index));
  if (missing.length > 0 && !allowPartial) {
    throw new RhemaError("usage", `Missing shard${missing.length === 1 ? "" : "s"} ${missing.map((i) => `${i}/${count}`).join(", ")}: ` +
      `the inputs hold ${sharded.map(describe).join(", ")}. Merge every shard's directory, or pass --allow-partial to merge without ${missing.length === 1 ? "it" : "them"}`);
  }
  return { count, merged: all.filter((index) => owner.has(index)).map((i) => `${i}/${count}`), missing: missing.map((i) => `${i}/${count}`) };
}

/**
 * Every shard's results; a task whose trials are in two inputs is refused (shards hold every
 * trial of a task: its figures and its gate need all of them in one place), whether its results
 * or its unfinished trials are there.
 */
function mergeResults(shards: readonly ShardRun[]): TaskResult[] {
  const owner = new Map<string, string>();
  const results: TaskResult[] = [];
  for (const shard of shards) {
    const tasks = [...shard.results, ...(shard.meta?.unfinished ?? [])];
    for (const key of new Set(tasks.map(cellKeyOf))) {
      const first = owner.get(key);
      if (first !== undefined) {
        throw new RhemaError("result_invalid", `Task ${key} is in two run directories: ${first} and ${shard.dir} (were the shards run with distinct --shard i/n?)`);
      }
      owner.set(key, shard.dir);
    }
    results.push(...shard.results);
  }
  return results.sort((a, b) => compareTrials(trialKeyOf(a), trialKeyOf(b)));
}

/** Each task's planned trials and gate, from the manifest of the input that holds it (else the first that lists it). */
function mergeTrialPlans(shards: readonly ShardRun[]): TaskTrialPlan[] {
  const plans = new Map<string, TaskTrialPlan>();
  const holds = (shard: ShardRun, key: string) => [...shard.results, ...(shard.meta?.unfinished ?? [])].some((t) => cellKeyOf(t) === key);
  for (const shard of shards) {
    for (const plan of shard.trialPlans) {
      const key = taskKey(plan);
      if (!plans.has(key) || holds(shard, key)) plans.set(key, plan);
    }
  }
  return [...plans.values()].sort(compareTasks);
}

function mergeMeta(shards: readonly ShardRun[], results: readonly TaskResult[], options: MergeOptions): ReportMeta {
  const starts = [...shards.flatMap((s) => (s.meta ? [s.meta.startedAt] : [])), ...results.map((r) => r.startedAt)];
  const ends = [...shards.flatMap((s) => (s.meta ? [s.meta.finishedAt] : [])), ...results.map((r) => r.finishedAt)];
  if (starts.length === 0 || ends.length === 0) {
    throw new RhemaError("usage", `No results and no stats.json in ${shards.map((s) => s.dir).join(", ")}: nothing to merge`);
  }
  const runIds = [...new Set(shards.flatMap((s) => (s.meta ? [s.meta.runId] : [])))].sort();
  const ran = new Set(results.map((r) => taskKey(r)));
  const skipped = new Map<string, SkippedTask>();
  for (const task of shards.flatMap((s) => s.meta?.skipped ?? [])) {
    if (!ran.has(taskKey(task))) skipped.set(taskKey(task), task);
  }
  // A shard's trial without a result (interrupted, not started, gate decided) stays listed (its task is in no other shard).
  const unfinished = new Map<string, UnfinishedTask>();
  for (const task of shards.flatMap((s) => s.meta?.unfinished ?? [])) {
    const key = trialLabel(trialKeyOf(task), { repeats: 2, variants: true });
    unfinished.set(key, task);
  }
  return {
    runId: options.runId ?? (runIds.length > 0 ? runIds.join("+") : "merged"),
    startedAt: earliest(starts),
    finishedAt: latest(ends),
    wallTimeMs: Math.max(...shards.map(inputWallTimeMs)),
    skipped: [...skipped.values()].sort(compareTasks),
    ...(unfinished.size > 0 ? { unfinished: [...unfinished.values()].sort((a, b) => compareTrials(trialKeyOf(a), trialKeyOf(b))) } : {}),
    trialPlans: mergeTrialPlans(shards),
    ...(options.passAt !== undefined && options.passAt.length > 0 ? { passAt: [...options.passAt] } : {}),
    ...(options.junitCases !== undefined ? { junitCases: options.junitCases } : {}),
    ...mergeQuarantine(shards),
    ...mergeRefusals(shards),
  };
}

/** Each provider's refusal from the inputs (the first input's, when several shards met it): the merged summary says it once. */
function mergeRefusals(shards: readonly ShardRun[]): { refusals?: ProviderRefusal[] } {
  const byProvider = new Map<string, ProviderRefusal>();
  for (const refusal of shards.flatMap((s) => s.meta?.refusals ?? [])) if (!byProvider.has(refusal.provider)) byProvider.set(refusal.provider, refusal);
  return byProvider.size > 0 ? { refusals: [...byProvider.values()] } : {};
}

/**
 * The inputs' quarantine lists together (the merged reports keep each quarantined task marked):
 * every entry once, in the order first met (the first input's reason), the files named once each, joined by `, `.
 */
function mergeQuarantine(shards: readonly ShardRun[]): Pick<ReportMeta, "quarantine"> {
  const lists = shards.flatMap((s) => (s.meta?.quarantine ? [s.meta.quarantine] : []));
  if (lists.length === 0) return {};
  const entries = new Map<string, QuarantineEntry>();
  for (const entry of lists.flatMap((list) => list.entries)) if (!entries.has(taskKey(entry))) entries.set(taskKey(entry), entry);
  return { quarantine: { file: [...new Set(lists.map((list) => list.file))].join(", "), entries: [...entries.values()] } };
}

/**
 * How long an input ran: its stats.json's wall time (resumes summed, gaps between them not);
 * without one, the span of its results. The merged wall time is the longest input's, as the
 * shards of a matrix run side by side: not the span from the first start to the last finish,
 * which counts the time between jobs queued apart.
 */
function inputWallTimeMs(shard: ShardRun): number {
  if (shard.meta?.wallTimeMs !== undefined) return shard.meta.wallTimeMs;
  if (shard.results.length === 0) return 0;
  const span = Date.parse(latest(shard.results.map((r) => r.finishedAt))) - Date.parse(earliest(shard.results.map((r) => r.startedAt)));
  return Number.isFinite(span) ? Math.max(0, span) : 0;
}

function earliest(times: readonly string[]): string {
  return times.reduce((best, time) => (Date.parse(time) < Date.parse(best) ? time : best));
}

function latest(times: readonly string[]): string {
  return times.reduce((best, time) => (Date.parse(time) > Date.parse(best) ? time : best));
}

/**
 * Copies a trial's checkpoint (session.json, its journal and the journal's counter) into the
 * merged directory, those present: report.html reads each trial's prompt, model text and whole
 * tool results from it, so the merged directory's page (and `report html` on it, or on a merge
 * of merges) shows the conversations without the shards' directories.
 */
async function copyCheckpoint(from: RunDir, out: RunDir, trial: Pick<TaskResult, "suite" | "id" | "trial">): Promise<void> {
  const folder = from.folderOf(trial);
  for (const role of ["session", "journal", "counter"] as const) await copyTranscript(from, out, folder.relativePath(role));
}

/** Copies a trial's file (its transcript, its changes.patch) into the merged directory; the source path when it is gone. */
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
