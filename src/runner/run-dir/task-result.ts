/**
 * The result of one task, as the executor writes it to `tasks/<suite>/<id>/result.json` and as
 * reports and `report merge` read it back (validated: a corrupt or foreign file is a clear error
 * naming it). Also the small shared vocabulary of reports: task order, skipped tasks, run meta.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { RhemaError, errorMessage } from "../../core/errors.js";
import { writePrivateJson } from "../../store/private-files.js";
import { transcriptStatsSchema } from "../../core/session.js";

export const TASK_RESULT_VERSION = 1;

const count = z.number().int().nonnegative();
const isoTime = z.iso.datetime({ offset: true });

/** The one schema of TranscriptStats (core/session.ts), re-exported for the runner's files. */
export { transcriptStatsSchema };

export const checkOutcomeSchema = z.strictObject({
  name: z.string(),
  command: z.string(),
  /** null when the check was killed (timeout, signal) before it exited. */
  exitCode: z.number().int().nullable(),
  passed: z.boolean(),
  durationMs: count,
  /** The last part of stdout+stderr, already cut to size by the executor. */
  outputTail: z.string(),
  timedOut: z.boolean(),
});

export const policyDenialSchema = z.strictObject({
  tool: z.string(),
  /** The rule that decided; null for the policy's default. */
  rule: z.string().nullable(),
  reason: z.string(),
});

export const taskResultSchema = z.strictObject({
  version: z.literal(TASK_RESULT_VERSION),
  suite: z.string().min(1),
  id: z.string().min(1),
  /** Absolute path of the task file. */
  file: z.string(),
  /** sha256 of the task file the result was produced from. */
  contentHash: z.string(),
  tags: z.array(z.string()),
  /** The provider id that ran the task, e.g. `anthropic:claude-sonnet-4-5`. */
  provider: z.string(),
  status: z.enum(["passed", "failed", "errored"]),
  startedAt: isoTime,
  finishedAt: isoTime,
  durationMs: count,
  /** Model steps of the turn (resumed segments included). */
  steps: count,
  /** null with the transcript off. */
  stats: transcriptStatsSchema.nullable(),
  checks: z.array(checkOutcomeSchema),
  /** Why the agent failed (provider, step_cap, timeout, cancelled, …); present iff errored. */
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  finalAnswer: z.string(),
  /** The task's transcript (event log), relative to the run directory. */
  transcriptPath: z.string(),
  policyDenials: z.strictObject({
    count,
    /** A few of the denials, for the reports; `count` is the total. */
    examples: z.array(policyDenialSchema),
  }),
  /** How many times the task was resumed from a checkpoint. */
  resumed: count,
}).superRefine((result, ctx) => {
  if ((result.status === "errored") !== (result.error !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["error"], message: "error is present exactly when status is errored" });
  }
  const allChecksPassed = result.checks.every((check) => check.passed);
  if (result.status === "failed" && allChecksPassed) {
    ctx.addIssue({ code: "custom", path: ["status"], message: "a failed task has a failed check" });
  }
  if (result.status === "passed" && !allChecksPassed) {
    ctx.addIssue({ code: "custom", path: ["status"], message: "a passed task has no failed check" });
  }
});

export type TaskResult = z.infer<typeof taskResultSchema>;
export type CheckOutcome = z.infer<typeof checkOutcomeSchema>;
export type PolicyDenial = z.infer<typeof policyDenialSchema>;
export type TaskStatus = TaskResult["status"];

/** A task left out of the run by `--filter` or `--tag` (tasks of other shards are not). */
export interface SkippedTask {
  suite: string;
  id: string;
  file: string;
  reason: "filter" | "tag";
}

/**
 * What reports know beyond the results. Reports depend only on results + meta, so a merge
 * of shards (startedAt = earliest, finishedAt = latest) reproduces an unsharded run's.
 */
export interface ReportMeta {
  runId: string;
  /** ISO time the run started. */
  startedAt: string;
  /** ISO time of this write (the run's end, once it has ended). */
  finishedAt: string;
  /** Reported as skipped test cases when given. */
  skipped?: readonly SkippedTask[];
}

/** A result file that cannot be read back; names the file and what is wrong with it. */
export class TaskResultFileError extends RhemaError {
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super("result_invalid", `${path}: ${message}`, options);
    this.path = path;
  }
}

/** `suite/id`: the key filters, shards and duplicate checks work on. */
export function taskKey(task: { suite: string; id: string }): string {
  return `${task.suite}/${task.id}`;
}

/** The one order of tasks in every output: by suite, then id (code-unit order, locale-free). */
export function compareTasks(a: { suite: string; id: string }, b: { suite: string; id: string }): number {
  return compareText(a.suite, b.suite) || compareText(a.id, b.id);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function taskResultPath(runDir: string, suite: string, id: string): string {
  return join(runDir, "tasks", suite, id, "result.json");
}

/** Validates `result` and writes it to its place in `runDir` (atomic, 0600). */
export async function writeTaskResult(runDir: string, result: TaskResult): Promise<string> {
  const path = taskResultPath(runDir, result.suite, result.id);
  const checked = taskResultSchema.safeParse(result);
  if (!checked.success) throw new TaskResultFileError(path, `refusing to write an invalid result: ${describeIssues(checked.error)}`);
  await writePrivateJson(path, checked.data);
  return path;
}

/** Reads and validates one result file. */
export async function readTaskResult(path: string): Promise<TaskResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new TaskResultFileError(path, `cannot read: ${errorMessage(err)}`, { cause: err });
  }
  return parseTaskResult(text, path);
}

export function parseTaskResult(text: string, path: string): TaskResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new TaskResultFileError(path, `not valid JSON (${errorMessage(err)})`, { cause: err });
  }
  const checked = taskResultSchema.safeParse(data);
  if (!checked.success) throw new TaskResultFileError(path, `not a task result: ${describeIssues(checked.error)}`);
  return checked.data;
}

/** The task's result in `runDir`, or null when it has none yet; a bad file is still an error. */
export async function readTaskResultIfPresent(runDir: string, suite: string, id: string): Promise<TaskResult | null> {
  try {
    return await readTaskResult(taskResultPath(runDir, suite, id));
  } catch (err) {
    if (err instanceof TaskResultFileError && isMissing(err.cause)) return null;
    throw err;
  }
}

/**
 * Every `tasks/<suite>/<id>/result.json` in `runDir`, sorted by suite then id. A folder without
 * a result (a task not finished) is passed over; a result whose suite/id disagree with its
 * folder is an error. A run directory without `tasks/` has no results.
 */
export async function readRunResults(runDir: string): Promise<TaskResult[]> {
  const results: TaskResult[] = [];
  for (const suite of await listFolders(join(runDir, "tasks"))) {
    for (const id of await listFolders(join(runDir, "tasks", suite))) {
      const result = await readTaskResultIfPresent(runDir, suite, id);
      if (result === null) continue;
      if (result.suite !== suite || result.id !== id) {
        throw new TaskResultFileError(taskResultPath(runDir, suite, id), `holds ${taskKey(result)}, not ${suite}/${id}`);
      }
      results.push(result);
    }
  }
  return results.sort(compareTasks);
}

async function listFolders(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort(compareText);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

function isMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "ENOENT";
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}
