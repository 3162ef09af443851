/**
 * `report.html` in a run directory: its trials' redacted files read (result.json, events.jsonl,
 * the checkpoint's messages, changes.patch; never the workspace or its layer) — a trial without
 * a result (stats.json's `unfinished`) its events and checkpoint so far — the run's figures
 * from its stats.json, and the page written atomically, 0600 (report-html.ts renders it). The
 * runner writes it once at the run's end or interrupt and `report merge` once (run-reports.ts,
 * the final write); `rhema report html DIR` writes it for any run directory, old or merged.
 */
import { lstat, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import type { Message } from "../../core/messages.js";
import { writePrivateFileAtomic } from "../../store/private-files.js";
import { guardOutput, machineReadError } from "../run-dir/output-guard.js";
import { RUN_FILES, RunDir } from "../run-dir/run-dir.js";
import type { TaskEvent } from "../run-dir/runner-events.js";
import { TaskResultFileError, type TaskResult } from "../run-dir/task-result.js";
import type { HtmlReportInput, HtmlTrialInput, HtmlUnfinishedInput } from "./report-html-data.js";
import { renderReportHtml } from "./report-html.js";
import { parseStatsReport } from "./stats-report.js";

/**
 * Renders the run directory `runDir` (absolute) into `out` (default `runDir/report.html`);
 * returns the path written. A run directory without stats.json has no finished reports to
 * show: an error naming it, as is a folder that is no run directory (`checkRunDirForHtml`).
 */
export async function writeReportHtml(runDir: string, out: string = join(runDir, RUN_FILES.html)): Promise<string> {
  const html = renderReportHtml(await readHtmlReportInput(runDir));
  await guardOutput(out, "write", () => writePrivateFileAtomic(out, html));
  return out;
}

/** What `rhema report html` checks before reading: `dir` is a run directory, `out` a path a file may be written at. */
export async function checkReportHtmlPaths(dir: string, out: string): Promise<void> {
  const info = await stat(dir).catch((err: unknown) => {
    if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return null;
    throw machineReadError(err, dir) ?? err;
  });
  if (info === null) throw new RhemaError("usage", `Run directory not found: ${dir}`);
  if (!info.isDirectory()) throw new RhemaError("usage", `Expected a run directory, got ${dir}, which is not a folder`);
  const contents = await new RunDir(dir).inspect();
  if (contents.kind !== "run" && contents.kind !== "merged" && contents.kind !== "own") {
    throw new RhemaError("usage", `Expected a run directory (a rhema run's or merge's --out), got ${dir}, which holds no ${RUN_FILES.manifest} or ${RUN_FILES.stats}`);
  }
  const target = await lstat(out).catch((err: unknown) => {
    if (errnoCode(err) === "ENOENT") return null;
    throw machineReadError(err, out) ?? err;
  });
  if (target !== null && !target.isFile()) {
    const what = target.isDirectory() ? "a folder" : target.isFIFO() ? "a FIFO" : target.isSymbolicLink() ? "a link" : "not a regular file";
    throw new RhemaError("usage", `Expected --out to be a file to write report.html to, got ${out}, which is ${what}: nothing was written; name a new or regular file`);
  }
}

/** The page's input, read from the run directory (see the header). */
export async function readHtmlReportInput(runDir: string): Promise<HtmlReportInput> {
  const run = new RunDir(runDir);
  const statsText = await run.readReport("stats");
  if (statsText === null) {
    throw new RhemaError("usage", `${run.reports.stats}: not found; a run directory has it once its run wrote its first reports (run it again to continue it)`);
  }
  let stats;
  try {
    stats = parseStatsReport(statsText);
  } catch (err) {
    throw new TaskResultFileError(run.reports.stats, `not a rhema stats.json: ${errorMessage(err).slice(0, 500)}`, { cause: err });
  }
  const trials: HtmlTrialInput[] = [];
  for (const result of await run.readResults()) trials.push(await readTrial(run, result));
  const unfinished: HtmlUnfinishedInput[] = [];
  // A trial never started has no folder: no events, no checkpoint.
  for (const task of stats.unfinished) {
    const events = parseEventLines(await readOptional(run.folderOf(task).path("events")) ?? "");
    unfinished.push({ task, events, messages: await readMessages(run, task) });
  }
  return { stats, trials, unfinished };
}

async function readTrial(run: RunDir, result: TaskResult): Promise<HtmlTrialInput> {
  const eventsPath = run.resolveInside(result.transcriptPath);
  const patchPath = result.changes?.path ? run.resolveInside(result.changes.path) : null;
  return {
    result,
    events: eventsPath === null ? [] : parseEventLines(await readOptional(eventsPath) ?? ""),
    messages: await readMessages(run, result),
    patch: patchPath === null ? null : await readOptional(patchPath),
  };
}

/** events.jsonl's whole lines that are events; a torn or foreign line is passed over (the page shows what can be read). */
export function parseEventLines(text: string): Array<TaskEvent & { at?: string }> {
  const events: Array<TaskEvent & { at?: string }> = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === "object" && typeof (value as { type?: unknown }).type === "string") events.push(value as TaskEvent & { at?: string });
    } catch {
      // a torn last line of a killed run
    }
  }
  return events;
}

/** The trial's checkpointed messages (redacted when committed); null without a checkpoint, or one that cannot be read. */
async function readMessages(run: RunDir, result: Pick<TaskResult, "suite" | "id" | "trial">): Promise<Message[] | null> {
  try {
    return (await run.folderOf(result).openCheckpoint().load())?.messages ?? null;
  } catch {
    return null;
  }
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw machineReadError(err, path) ?? new RhemaError("result_invalid", `${path}: cannot read (${errorMessage(err)})`, { cause: err });
  }
}
