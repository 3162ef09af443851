/**
 * Writing a run's three reports — `junit.xml`, `stats.json`, `summary.md` — into its run
 * directory, each atomically and 0600 through store/private-files, and to the user's copies
 * (--junit/--stats/--summary). The executor calls `writeReports` after each finished task and
 * at the end (a `ReportWriter` keeps such calls from overlapping); `report merge` calls it once.
 * The final write (the run's end or interrupt, a merge) also writes `report.html`, once: it reads
 * every trial's events, which a write after each task must not.
 * The content depends only on results + meta. A report that cannot be written is an
 * `OutputError` naming its path; `probeReportCopies` finds that out before a run starts.
 * `--summary FILE` is different: the final summary is appended to it once per run
 * (`appendSummary`), as `$GITHUB_STEP_SUMMARY` expects, keeping the file's mode.
 */
import { mkdir, open, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { OutputError, RhemaError, errnoCode } from "../../core/errors.js";
import { constants } from "node:fs";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, fsyncDir, replaceFileAtomic, writeFully, writePrivateFileAtomic } from "../../store/private-files.js";
import { renderJUnitReport } from "./junit-report.js";
import { probeInto, reportDestination, writeInto } from "./report-destination.js";
import { buildStatsReport, renderStatsReport } from "./stats-report.js";
import { renderSummaryReport } from "./summary-report.js";
import { writeReportHtml } from "./report-html-file.js";
import { guardOutput } from "../run-dir/output-guard.js";
import { RunDir, compareResults, trialKeyOf, type ReportFiles } from "../run-dir/run-dir.js";
import { type TaskResult } from "../run-dir/task-result.js";
import { taskKey } from "../tasks/task-key.js";
import { type ReportMeta } from "./report-meta.js";

export type { ReportFiles } from "../run-dir/run-dir.js";

const REPORT_KINDS = ["junit", "stats", "summary"] as const;

export interface RenderedReports {
  junit: string;
  stats: string;
  summary: string;
}

/** The three reports' text. Throws if two results are of one trial (suite/id, variant, repeat). */
export function renderReports(results: readonly TaskResult[], meta: ReportMeta): RenderedReports {
  const ordered = [...results].sort(compareResults);
  ordered.forEach((result, index) => {
    const previous = ordered[index - 1];
    if (previous !== undefined && compareResults(previous, result) === 0) {
      const key = trialKeyOf(result);
      const trial = ` trial ${key.repeat}${key.variant === null ? "" : ` of variant ${key.variant}`}`;
      throw new RhemaError("result_invalid", `two results for ${taskKey(result)}${trial}: ${previous.file} and ${result.file}`);
    }
  });
  return {
    junit: renderJUnitReport(ordered, meta),
    stats: renderStatsReport(buildStatsReport(ordered, meta)),
    summary: renderSummaryReport(ordered, meta),
  };
}

/**
 * Writes the reports into `runDir` (atomic, 0600, folder 0700), and the same text to any
 * `copies` (the CLI's --junit/--stats/--summary). A copy is 0600 and atomic too, but its
 * folder is the user's: created 0700 when missing, never re-moded when it exists. A copy
 * whose path is a link, a device or a FIFO is written into, not replaced (report-destination.ts),
 * and only when `final` (the run's last write): a reader of `/dev/stdout` or a FIFO gets one report.
 * When `final`, `report.html` is written too, from the run directory's files (report-html-file.ts).
 * Returns the paths written in the run directory.
 */
export async function writeReports(
  runDir: string,
  results: readonly TaskResult[],
  meta: ReportMeta,
  copies: Partial<ReportFiles> = {},
  options: { final: boolean } = { final: true },
): Promise<ReportFiles> {
  const rendered = renderReports(results, meta);
  const files = new RunDir(runDir).reports;
  for (const kind of REPORT_KINDS) {
    await guardOutput(files[kind], "write", () => writePrivateFileAtomic(files[kind], rendered[kind]));
    const copy = copies[kind];
    if (copy !== undefined && copy !== files[kind]) await guardOutput(copy, "write", () => writeReportCopy(copy, rendered[kind], options.final));
  }
  if (options.final) await writeReportHtml(runDir);
  return files;
}

/**
 * Appends the run's summary to `path` (`--summary`, `$GITHUB_STEP_SUMMARY`): once per run, at
 * its end or interrupt. An existing file keeps its content and mode; a new one is made 0600
 * (its folder 0700 when missing). A blank line separates it from what the file already held.
 * `text` is the run directory's final summary.md, so the two say the same.
 */
export async function appendSummary(path: string, text: string): Promise<void> {
  await guardOutput(path, "write", async () => {
    await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
    const size = await fileSize(path);
    if ((await reportDestination(path)) === "into") {
      await writeInto(path, size > 0 ? `\n${text}` : text, { append: true });
      return;
    }
    // O_NONBLOCK: a FIFO put there since the check fails (ENXIO) instead of hanging.
    const handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, PRIVATE_FILE_MODE);
    try {
      await writeFully(handle, Buffer.from(size > 0 ? `\n${text}` : text, "utf8"));
    } finally {
      await handle.close();
    }
  });
}

/** Checks before a run that `appendSummary` will be able to append to `path`, changing nothing in it. */
export async function probeSummaryAppend(path: string, pid: number): Promise<void> {
  await guardOutput(path, "write", async () => {
    if ((await reportDestination(path)) === "into") return probeInto(path);
    if ((await fileSize(path)) >= 0) {
      if (await isFolder(path)) throw new OutputError(path, "write", "EISDIR");
      await (await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK)).close();
      return;
    }
    await probeReportCopy(path, pid);
  });
}

/** The file's size; -1 when there is none. */
async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return -1;
    throw err;
  }
}

async function writeReportCopy(path: string, text: string, final: boolean): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  if ((await reportDestination(path)) === "into") {
    if (final) await writeInto(path, text, { append: false });
    return;
  }
  await replaceFileAtomic(path, text, { mode: PRIVATE_FILE_MODE, fsync: true });
  await fsyncDir(dirname(path));
}

/**
 * Checks, before a run, that each report copy can be written: its folder made (as the write
 * would), the path not a folder, and a file creatable beside it (where the atomic write puts
 * its temp file). Nothing is left behind but the folder. Throws the OutputError the write
 * would have thrown at the end of the run.
 */
export async function probeReportCopies(copies: Partial<ReportFiles>, pid: number): Promise<void> {
  for (const kind of REPORT_KINDS) {
    const path = copies[kind];
    if (path === undefined) continue;
    await guardOutput(path, "write", () => probeReportCopy(path, pid));
  }
}

async function probeReportCopy(path: string, pid: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  if ((await reportDestination(path)) === "into") return probeInto(path);
  const probe = `${path}.rhema-probe-${pid}`;
  await (await open(probe, "w", PRIVATE_FILE_MODE)).close();
  await rm(probe, { force: true });
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return false;
    throw err;
  }
}

/**
 * Serializes report writes for a runner whose tasks finish concurrently: writes never overlap,
 * and calls that queue up behind a write are coalesced — the next write takes only the latest
 * results. Each call's promise settles once its results, or newer ones, are on disk (or with
 * the error of that write; a failed write is retried by the next queued call).
 */
export class ReportWriter {
  private latest: { results: TaskResult[]; meta: ReportMeta; final: boolean } | null = null;
  private queue: Promise<void> = Promise.resolve();

  /** `writeAll`: what writes one set of reports (the real writer; a test may wrap it to count). */
  constructor(
    private readonly runDir: string,
    private readonly copies: Partial<ReportFiles> = {},
    private readonly writeAll: typeof writeReports = writeReports,
  ) {}

  /** `final`: the run's last write (copies that are written into, not replaced, get only this one). */
  write(results: readonly TaskResult[], meta: ReportMeta, final = false): Promise<void> {
    this.latest = { results: [...results], meta: { ...meta }, final: final || (this.latest?.final ?? false) };
    const flush = this.queue.then(() => this.flushLatest());
    this.queue = flush.catch(() => undefined);
    return flush;
  }

  private async flushLatest(): Promise<void> {
    const job = this.latest;
    if (job === null) return; // an earlier flush already wrote these results or newer ones
    this.latest = null;
    try {
      await this.writeAll(this.runDir, job.results, job.meta, this.copies, { final: job.final });
    } catch (err) {
      this.latest ??= job;
      throw err;
    }
  }
}
