/**
 * The result of one task: the shape of `result.json` (written and read back by `TaskFolder`,
 * validated both ways: a corrupt or foreign file is a clear error naming it). Also the small
 * unfinished trials and their plans, which the reports read.
 */
import { z } from "zod";
import { RhemaError, type RefusalReason } from "../../core/errors.js";
import { transcriptStatsSchema } from "../../core/session.js";
import { parseJsonText } from "./state-file.js";
import type { TrialGate } from "../trials/trial-gate.js";

export const TASK_RESULT_VERSION = 1;

const count = z.number().int().nonnegative();
const isoTime = z.iso.datetime({ offset: true });

/** The one schema of TranscriptStats (core/session.ts), re-exported for the runner's files. */
export { transcriptStatsSchema };

/**
 * TranscriptStats as the runner's files record them (result.json, stats.json): the dollars are
 * null where there was no price — unpriced, never $0 (a result written before this read its 0s).
 */
export const resultStatsSchema = transcriptStatsSchema.extend({
  costUsd: z.number().nonnegative().nullable().describe("Dollars of the task model's priced requests; null when it had no price (unpriced, not $0)."),
  workerCostUsd: z.number().nonnegative().nullable().describe("Dollars of the compaction worker's priced requests; null when it had no price."),
});

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
  /** Why the check did not run (the task's timeout passed first); absent when it ran. */
  notRun: z.string().optional(),
  line: z.number().int().positive().optional().describe("The line of the task file the check is written on (1-based); absent in results of older rhemas."),
});

/** The budget a stopped task stopped on (core/errors.ts `SpentBudget`). */
export const spentBudgetSchema = z.strictObject({
  /** `cell`: a matrix cell's budget, spent by all its trials together. */
  scope: z.enum(["task", "cell", "run"]),
  measure: z.enum(["cost", "tokens"]),
  /** Dollars for `cost`, tokens for `tokens`. */
  limit: z.number().positive(),
  spent: z.number().nonnegative(),
});

export const policyDenialSchema = z.strictObject({
  tool: z.string(),
  /** The rule that decided; null for the policy's default. */
  rule: z.string().nullable(),
  reason: z.string(),
});

/**
 * What the task's commands (shell tool, setup, checks) actually ran in: `bwrap`, `none` (the
 * sandbox was auto and bwrap unusable: `reason` says why) or `off` (asked for). `network` is what
 * the shell tool and checks had: `deny` only inside bwrap; unsandboxed they had the host's.
 */
export const taskSandboxSchema = z.strictObject({
  mode: z.enum(["bwrap", "none", "off"]),
  network: z.enum(["allow", "deny"]),
  reason: z.string().optional(),
  fix: z.string().optional(),
});

/** Which prices a cost was computed with: the bundled table's version, and the pricing file if one was given. */
export const priceSourceSchema = z.strictObject({
  source: z.string(),
  version: z.string(),
  pricingFile: z.strictObject({ path: z.string(), sha256: z.string() }).nullable(),
});

/**
 * What a task cost (its transcript stats hold the same dollars, split task/worker). `usd` is
 * null when no request had a price — unpriced, never $0; with some requests unpriced it is
 * the priced part (a lower bound) and `unpricedRequests` says how many are missing.
 */
export const taskCostSchema = z.strictObject({
  usd: z.number().nonnegative().nullable(),
  /** Of `usd`, the compaction worker's dollars. */
  workerUsd: z.number().nonnegative(),
  unpricedRequests: count,
  /** The model the task's requests were priced as (`anthropic/claude-sonnet-4-6`); null: unpriced. */
  pricedAs: z.string().nullable(),
  /** The model the worker's requests were priced as; null: unpriced. */
  workerPricedAs: z.string().nullable(),
  /** A scripted task priced as a real model (`model.priceAs`): the figures are simulated. */
  simulated: z.boolean(),
  /** Answered from a cassette (`--cassette`, a replay mode): the recorded usage priced, not money spent by this run. Absent: live. */
  replayed: z.boolean().optional(),
  prices: priceSourceSchema,
});

/**
 * The trial's changes.patch (workspace-changes.ts): its path relative to the run directory and the
 * whole change's figures (a cut patch's too: `truncated`, and `leftOut` files not in it); or
 * `path: null` and why there is none (git missing, no snapshot after setup).
 */
export const resultChangesSchema = z.union([
  z.strictObject({
    path: z.string().describe("changes.patch, relative to the run directory."),
    files: count.describe("Files changed (excluded paths not counted)."),
    insertions: count,
    deletions: count,
    binary: count.describe("Binary files: named in the patch, not inlined."),
    bytes: count.describe("The patch's size."),
    truncated: z.boolean().describe("Cut at workspace.changes.maxBytes at a file boundary; a marker line names what was left out."),
    leftOut: count.describe("Files of the change not in the cut patch."),
  }),
  z.strictObject({ path: z.null(), reason: z.string() }),
]);
export type ResultChanges = z.infer<typeof resultChangesSchema>;

/** How the trial's workspace was made and the disk it holds at the end (workspace-disk.ts). */
export const resultWorkspaceSchema = z.strictObject({
  mechanism: z.enum(["copy", "overlay", "fuse-overlayfs"]).describe("How the workspace was made: copy (the fixture copied, fixture-copy.ts; a git clone; an empty folder), or a layer of the trial's own over a shared read-only base mounted with the kernel's overlay or fuse-overlayfs (layer-mounts.ts)."),
  diskBytes: count.describe("Allocated bytes the trial's own workspace holds once checks ran, du-style: st_blocks × 512, holes not counted, hard links once. A copy: the copy, setup and agent's writes; a layer: what setup and the agent wrote (files copied up when changed), not the shared base."),
  reason: z.string().optional().describe("Why a copy, when layers were asked for (--workspace-layers auto) and could not be mounted."),
});
export type ResultWorkspace = z.infer<typeof resultWorkspaceSchema>;

export const taskResultSchema = z.strictObject({
  version: z.literal(TASK_RESULT_VERSION),
  suite: z.string().min(1),
  id: z.string().min(1),
  /** Absolute path of the task file. */
  file: z.string(),
  /** sha256 of the task file the result was produced from. */
  contentHash: z.string(),
  tags: z.array(z.string()),
  /** The provider id that ran the task, e.g. `anthropic:claude-sonnet-4-6`. */
  provider: z.string(),
  /** `stopped`: a budget was spent (resumable with a larger one); never a failure of the agent. */
  status: z.enum(["passed", "failed", "errored", "stopped"]),
  startedAt: isoTime,
  finishedAt: isoTime,
  durationMs: count,
  /** Model steps of the turn (resumed segments included). */
  steps: count,
  /** null with the transcript off. */
  stats: resultStatsSchema.nullable(),
  /** Absent in results written before costs were counted, and with the transcript off. */
  cost: taskCostSchema.optional(),
  checks: z.array(checkOutcomeSchema),
  /** Why the agent failed (provider, step_cap, timeout, cancelled, …) or stopped (`budget`); present iff errored or stopped. */
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  /** The budget the task stopped on; present iff stopped. */
  budget: spentBudgetSchema.optional(),
  finalAnswer: z.string(),
  output: z.unknown().optional()
    .describe("A task with `output:`: the accepted answer (the final_answer call's input, or the JSON of a text answer), secrets redacted; also in output.json beside this file. Absent without `output:` or when no valid answer came (the trial errored: output_invalid, or another failure)."),
  /** The task's transcript (event log), relative to the run directory. */
  transcriptPath: z.string(),
  policyDenials: z.strictObject({
    count,
    /** A few of the denials, for the reports; `count` is the total. */
    examples: z.array(policyDenialSchema),
  }),
  /** How many times the task was resumed from a checkpoint. */
  resumed: count,
  /** The agent's changes (changes.patch) and their figures; absent when the turn never ended (or in results of older rhemas). */
  changes: resultChangesSchema.optional(),
  /** The workspace's mechanism and disk figure; absent when it was never made (or in results of older rhemas). */
  workspace: resultWorkspaceSchema.optional(),
  /** The sandbox its commands ran in (absent in results of older rhemas). */
  sandbox: taskSandboxSchema.optional(),
  /**
   * Which trial of its task this is (issue 21): its repeat from 1 and its variant (null: none).
   * Absent in results of run directories made before trials (layout 1): the task's one trial.
   */
  trial: z.strictObject({
    repeat: z.number().int().positive(),
    variant: z.string().nullable(),
  }).optional(),
}).superRefine((result, ctx) => {
  if ((result.status === "errored" || result.status === "stopped") !== (result.error !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["error"], message: "error is present exactly when status is errored or stopped" });
  }
  if ((result.status === "stopped") !== (result.budget !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["budget"], message: "budget is present exactly when status is stopped" });
  }
  if (result.status === "stopped" && result.error?.code !== "budget") {
    ctx.addIssue({ code: "custom", path: ["error", "code"], message: "a stopped task's error code is budget" });
  }
  const allChecksPassed = result.checks.every((check) => check.passed);
  if (result.status === "stopped" && result.checks.length > 0) {
    ctx.addIssue({ code: "custom", path: ["checks"], message: "a stopped task ran no checks" });
  }
  if (result.status === "failed" && allChecksPassed) {
    ctx.addIssue({ code: "custom", path: ["status"], message: "a failed task has a failed check" });
  }
  if (result.status === "passed" && !allChecksPassed) {
    ctx.addIssue({ code: "custom", path: ["status"], message: "a passed task has no failed check" });
  }
});

export type TaskResult = z.infer<typeof taskResultSchema>;

/** The published JSON Schema of `result.json` (`schema/result.schema.json`). */
export function resultJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(taskResultSchema.meta({ title: "rhema task result", description: "result.json: the outcome, figures and cost of one task of a rhema run." })) as Record<string, unknown>;
}
export type CheckOutcome = z.infer<typeof checkOutcomeSchema>;
export type PolicyDenial = z.infer<typeof policyDenialSchema>;
export type TaskSandboxRecord = z.infer<typeof taskSandboxSchema>;
export type ResultBudget = z.infer<typeof spentBudgetSchema>;
export type TaskStatus = TaskResult["status"];
export type TaskCost = z.infer<typeof taskCostSchema>;
export type ResultStats = z.infer<typeof resultStatsSchema>;

/**
 * What a task without a result (interrupted, or an earlier run's that was) spent so far, read
 * from its checkpoint and task state: reports count it as they count a result's figures.
 */
export const taskSpendSchema = z.strictObject({
  durationMs: count.describe("Time spent on the task so far, over every run that worked on it."),
  steps: count.describe("Model steps taken so far."),
  stats: resultStatsSchema.nullable().describe("Its TranscriptStats so far; null with the transcript off or before any request."),
  cost: taskCostSchema.nullable().describe("What it cost so far; null when no cost was counted."),
});
export type TaskSpend = z.infer<typeof taskSpendSchema>;
export type PriceSource = z.infer<typeof priceSourceSchema>;


/**
 * A trial of the run (its manifest) without a result, as the reports show it:
 *   interrupted   it was running when the run was interrupted (or killed); the next run continues it
 *   not_started   the run was interrupted before it started
 *   not_selected  this run's selection (a --filter, fewer paths) left it out, and no earlier run finished it
 *   gate_decided  its task's gate was decided before it started (`--stop-early`): it never runs,
 *                 on resume neither, and is left out of the task's figures
 * Interrupted is a report state, never a result: no result.json is written for it.
 */
export interface UnfinishedTask {
  suite: string;
  id: string;
  file: string;
  /** The trial's repeat from 1 and its variant; absent: the task's one trial (layout 1). */
  trial?: { repeat: number; variant: string | null };
  state: "interrupted" | "not_started" | "not_selected" | "gate_decided";
  /** What it spent before the run stopped (its checkpoint's figures); absent or null when it spent nothing. */
  spent?: TaskSpend | null;
  /** The provider whose refusal of the run (its key, its quota) left it unfinished; absent or null: none did. */
  refusedBy?: { provider: string; reason: RefusalReason } | null;
}



/** A task's trials as planned: how many, and the gate that makes the task pass (trial-gate.ts). */
export interface TaskTrialPlan {
  suite: string;
  id: string;
  /** The matrix cell it is planned for; absent: the task as written. */
  variant?: string;
  trials: number;
  gate: TrialGate;
}


/** A result file that cannot be read back; names the file and what is wrong with it. */
export class TaskResultFileError extends RhemaError {
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super("result_invalid", `${path}: ${message}`, options);
    this.path = path;
  }
}


/** `result` validated for writing; an inconsistent one is refused, naming where it was to go. */
export function checkTaskResult(result: TaskResult, path: string): TaskResult {
  const checked = taskResultSchema.safeParse(result);
  if (!checked.success) throw new TaskResultFileError(path, `refusing to write an invalid result: ${describeIssues(checked.error)}`);
  return checked.data;
}

/** A result file's text, parsed and validated; `path` names it in the error. */
export function parseTaskResult(text: string, path: string): TaskResult {
  const parsed = parseJsonText(text);
  if (!parsed.ok) throw new TaskResultFileError(path, `not valid JSON (${parsed.error})`);
  const checked = taskResultSchema.safeParse(parsed.value);
  if (!checked.success) throw new TaskResultFileError(path, `not a task result: ${describeIssues(checked.error)}`);
  return checked.data;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}
