/**
 * Runs a selection of tasks in one run directory: takes the lock, refuses (or restarts) tasks
 * whose file changed since their checkpoint, runs the tasks through a p-queue, and rewrites the
 * reports after each finished task and at the end. An interrupt (the run's signal) lets every
 * running task checkpoint and stop; the reports then cover what finished.
 */
import { randomUUID } from "node:crypto";
import PQueue from "p-queue";
import { RhemaError } from "../../core/errors.js";
import type { TaskEvent } from "./runner-events.js";
import { RunDir, type ReportFiles } from "../run-dir/run-dir.js";
import type { RunManifest } from "../run-dir/run-manifest.js";
import { ReportWriter, probeReportCopies } from "../reports/run-reports.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { runTask, type TaskRunEnv } from "./task-executor.js";
import { isRetryableErrorCode } from "./task-failure.js";
import { compareTasks, taskKey, type ReportMeta, type SkippedTask, type TaskResult } from "../run-dir/task-result.js";

export type RunProgress =
  | { type: "run_start"; runDir: string; runId: string; tasks: number; resumed: boolean }
  | { type: "task_start"; task: TaskDefinition }
  | { type: "task_event"; task: TaskDefinition; event: TaskEvent }
  | { type: "task_end"; task: TaskDefinition; result: TaskResult; kept: boolean }
  | { type: "task_interrupted"; task: TaskDefinition }
  | { type: "run_end"; results: TaskResult[]; interrupted: boolean; reports: ReportFiles };

export interface SuiteRunOptions {
  tasks: readonly TaskDefinition[];
  /** Reported as skipped test cases (only when the user asked for them). */
  skipped?: readonly SkippedTask[];
  runDir: string;
  concurrency: number;
  restartChanged: boolean;
  /** Continue errored tasks (provider outage, timeout) from their checkpoints instead of keeping their results. */
  retryErrored?: boolean;
  reportCopies?: Partial<ReportFiles>;
  signal: AbortSignal;
  pid: number;
  env: Omit<TaskRunEnv, "runDir" | "signal" | "onEvent">;
  onProgress(progress: RunProgress): void;
}

export interface SuiteRunOutcome {
  results: TaskResult[];
  interrupted: boolean;
  reports: ReportFiles;
}

export class ChangedTasksError extends RhemaError {
  constructor(changed: readonly TaskDefinition[]) {
    const list = changed.map((t) => `  ${taskKey(t)} (${t.file})`).join("\n");
    super("task_changed", `these task files changed since their run started:\n${list}\nrun them afresh with --restart-changed, or pass another --out`);
  }
}

export async function runSuite(opts: SuiteRunOptions): Promise<SuiteRunOutcome> {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
    throw new RhemaError("usage", `Expected --concurrency to be a whole number from 1 and up, got ${opts.concurrency}`);
  }
  // A report path rhema cannot write is found now, before the lock and before any task runs.
  await probeReportCopies(opts.reportCopies ?? {}, opts.pid);
  const runDir = new RunDir(opts.runDir);
  const lock = await runDir.lock(opts.pid, opts.env.now());
  try {
    await handleChangedTasks(opts, runDir);
    if (opts.retryErrored) await reopenErroredTasks(opts, runDir);
    const manifest = await updateManifest(opts, runDir);
    opts.onProgress({ type: "run_start", runDir: opts.runDir, runId: manifest.runId, tasks: opts.tasks.length, resumed: manifest.resumes > 0 });
    return await runQueue(opts, runDir, manifest);
  } finally {
    await lock.release();
  }
}

async function runQueue(opts: SuiteRunOptions, runDir: RunDir, manifest: RunManifest): Promise<SuiteRunOutcome> {
  const writer = new ReportWriter(opts.runDir, opts.reportCopies ?? {});
  const results = new Map<string, TaskResult>();
  const meta = (): ReportMeta => ({
    runId: manifest.runId, startedAt: manifest.startedAt, finishedAt: opts.env.now().toISOString(),
    ...(opts.skipped ? { skipped: opts.skipped } : {}),
  });
  const sorted = () => [...results.values()].sort(compareTasks);
  const env: TaskRunEnv = { ...opts.env, runDir: opts.runDir, signal: opts.signal, onEvent: (task, event) => opts.onProgress({ type: "task_event", task, event }) };
  let interrupted = false;
  const runOne = async (task: TaskDefinition): Promise<void> => {
    if (opts.signal.aborted) {
      interrupted = true;
      return;
    }
    opts.onProgress({ type: "task_start", task });
    const outcome = await runTask(task, env);
    if (outcome.kind === "interrupted") {
      interrupted = true;
      opts.onProgress({ type: "task_interrupted", task });
      return;
    }
    results.set(taskKey(task), outcome.result);
    opts.onProgress({ type: "task_end", task, result: outcome.result, kept: outcome.kept });
    await writer.write(sorted(), meta());
  };
  // A task that throws (rather than finishing errored: a corrupt result.json, a full disk)
  // stops the run: no further task starts, and the error is rethrown once the running ones
  // are done, so the caller releases the lock and reports it instead of crashing.
  const thrown: unknown[] = [];
  const queue = new PQueue({ concurrency: opts.concurrency });
  for (const task of opts.tasks) {
    void queue.add(async () => {
      if (thrown.length > 0) return;
      try {
        await runOne(task);
      } catch (err) {
        thrown.push(err);
      }
    });
  }
  await queue.onIdle();
  if (thrown.length > 0) throw thrown[0];
  interrupted ||= opts.signal.aborted;
  await writer.write(sorted(), meta());
  const outcome = { results: sorted(), interrupted, reports: runDir.reports };
  opts.onProgress({ type: "run_end", ...outcome });
  return outcome;
}

/** Tasks whose file changed since their folder was made: an error, or wiped with --restart-changed. */
async function handleChangedTasks(opts: SuiteRunOptions, runDir: RunDir): Promise<void> {
  const changed: TaskDefinition[] = [];
  for (const task of opts.tasks) {
    const hash = await recordedHash(runDir, task);
    if (hash !== null && hash !== task.contentHash) changed.push(task);
  }
  if (changed.length === 0) return;
  if (!opts.restartChanged) throw new ChangedTasksError(changed);
  for (const task of changed) await runDir.task(task).remove();
}

/**
 * Drops the results of tasks errored by an outage or a timeout, keeping their checkpoints: the
 * run then continues each from where it stopped (revive, then the request that failed), as
 * after a kill. A task errored by a bug (`internal`), a step cap or a failed setup is kept:
 * running it again would only repeat it.
 */
async function reopenErroredTasks(opts: SuiteRunOptions, runDir: RunDir): Promise<void> {
  for (const task of opts.tasks) {
    const folder = runDir.task(task);
    const result = await folder.readResult();
    if (result?.status === "errored" && isRetryableErrorCode(result.error?.code ?? "")) await folder.removeResult();
  }
}

/** The content hash the task's folder was made for: its state's, else its result's; null for a new task. */
async function recordedHash(runDir: RunDir, task: TaskDefinition): Promise<string | null> {
  const folder = runDir.task(task);
  const state = await folder.readState();
  if (state) return state.contentHash;
  return (await folder.readResult())?.contentHash ?? null;
}

async function updateManifest(opts: SuiteRunOptions, runDir: RunDir): Promise<RunManifest> {
  const previous = await runDir.readManifest();
  const manifest: RunManifest = {
    version: 1,
    runId: previous?.runId ?? randomUUID(),
    startedAt: previous?.startedAt ?? opts.env.now().toISOString(),
    resumes: previous ? previous.resumes + 1 : 0,
    tasks: opts.tasks.map((t) => ({ suite: t.suite, id: t.id, file: t.file, contentHash: t.contentHash })),
  };
  await runDir.writeManifest(manifest);
  return manifest;
}
