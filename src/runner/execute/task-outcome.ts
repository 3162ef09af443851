/**
 * A trial's result.json, built in one place (issue 21 item 2): from what its phases left — the
 * conversation, the checks, the failure — or, for a trial that never ran (the run's budget spent)
 * or stopped making progress, from what is known. Status: stopped on a budget, errored on any
 * other failure, else passed when every check passed, else failed.
 */
import { BudgetError, describeSpentBudget, type RhemaError, type SpentBudget } from "../../core/errors.js";
import { textOf, type Message } from "../../core/messages.js";
import type { Session } from "../../core/session.js";
import { policyDenials } from "./policy-denials.js";
import type { SecretRedactor } from "../run-dir/secret-redactor.js";
import type { TaskState } from "../run-dir/task-state.js";
import type { TaskFolder } from "../run-dir/task-folder.js";
import { TASK_RESULT_VERSION, type CheckOutcome, type ResultWorkspace, type TaskResult, type TaskSandboxRecord } from "../run-dir/task-result.js";
import type { Trial } from "../trials/trial.js";
import { FINAL_ANSWER_TOOL } from "./structured-answer.js";
import { acceptedOutput, stepsTaken } from "./task-turn.js";

const DENIAL_EXAMPLES = 5;

/** What the phases of a trial that ran left for its result. */
export interface TrialOutcomeParts {
  trial: Trial;
  folder: TaskFolder;
  state: TaskState;
  messages: readonly Message[];
  /** The calls' states, whose denials the result reports. */
  calls: Session["calls"];
  checks: CheckOutcome[];
  failure: RhemaError | null;
  stats: TaskResult["stats"];
  cost: TaskResult["cost"];
  /** The provider id that ran it. */
  provider: string;
  elapsedMs: number;
  sandbox: TaskSandboxRecord;
  /** The workspace's mechanism and disk figure; null when there is no workspace. */
  workspace: ResultWorkspace | null;
  finishedAt: Date;
  redactor: SecretRedactor;
}

/** The result of a trial whose phases ran (to the end, or to a failure). */
export function trialResult(p: TrialOutcomeParts): TaskResult {
  const stoppedOn = p.failure instanceof BudgetError ? p.failure.budget : null;
  const status = stoppedOn ? "stopped" : p.failure ? "errored" : p.checks.every((c) => c.passed) ? "passed" : "failed";
  const denials = policyDenials({ messages: p.messages, calls: p.calls });
  return p.redactor.redactValue<TaskResult>({
    ...identity(p.trial, p.provider),
    status,
    startedAt: p.state.startedAt,
    finishedAt: p.finishedAt.toISOString(),
    durationMs: Math.round(p.elapsedMs),
    steps: stepsTaken(p.messages),
    stats: p.stats,
    ...(p.cost ? { cost: p.cost } : {}),
    checks: p.checks,
    ...(p.failure ? { error: { code: p.failure.code, message: p.failure.message } } : {}),
    ...(stoppedOn ? { budget: stoppedOn } : {}),
    finalAnswer: finalAnswerOf(p.messages),
    ...outputOf(p.trial, p.messages),
    transcriptPath: p.folder.relativePath("events"),
    policyDenials: { count: denials.length, examples: denials.slice(0, DENIAL_EXAMPLES) },
    resumed: p.state.resumed,
    ...(p.state.changes ? { changes: p.state.changes } : {}),
    ...(p.workspace ? { workspace: p.workspace } : {}),
    sandbox: p.sandbox,
  });
}

/** `{ output }` when the trial's task has `output:` and its conversation ends on a valid answer; else nothing. */
function outputOf(trial: Trial, messages: readonly Message[]): { output?: unknown } {
  const output = acceptedOutput(trial.task, messages);
  return output === undefined ? {} : { output };
}

/** What a trial that did not run knows of itself. */
export interface UnrunTrial {
  trial: Trial;
  folder: TaskFolder;
  provider: string;
  at: Date;
}

/**
 * The result of a trial the run did not start because its budget was spent: stopped, nothing
 * run, nothing spent — a run with a larger budget starts it.
 */
export function notStartedResult(p: UnrunTrial, spent: SpentBudget): TaskResult {
  return {
    ...unrun(p),
    status: "stopped",
    error: { code: "budget", message: `not started: the ${spent.scope}'s budget was spent — ${describeSpentBudget(spent)}` },
    budget: spent,
  };
}

/** A trial that stopped making progress (stall-net.ts): errored with `error`, nothing more known of it here. */
export function stalledResult(p: UnrunTrial, error: RhemaError, redactor: SecretRedactor): TaskResult {
  return redactor.redactValue<TaskResult>({ ...unrun(p), status: "errored", error: { code: error.code, message: error.message } });
}

function unrun(p: UnrunTrial): Omit<TaskResult, "status"> {
  const at = p.at.toISOString();
  return {
    ...identity(p.trial, p.provider),
    startedAt: at, finishedAt: at, durationMs: 0, steps: 0, stats: null, checks: [],
    finalAnswer: "", transcriptPath: p.folder.relativePath("events"),
    policyDenials: { count: 0, examples: [] }, resumed: 0,
  };
}

function identity({ task, key }: Trial, provider: string) {
  return {
    version: TASK_RESULT_VERSION,
    suite: task.suite, id: task.id, file: task.file, contentHash: task.contentHash, tags: task.tags,
    provider,
    trial: { repeat: key.repeat, variant: key.variant },
  } as const;
}

/**
 * What checks read as the final answer: the text of the conversation's last assistant message,
 * and when that message gives the answer with the `final_answer` tool, the answer's JSON after it
 * (such a message often has no text at all).
 */
export function finalAnswerOf(messages: readonly Message[]): string {
  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
  if (!lastAssistant) return "";
  const answers = lastAssistant.content.flatMap((b) => (b.type === "tool_call" && b.name === FINAL_ANSWER_TOOL ? [JSON.stringify(b.input, null, 2)] : []));
  return [textOf(lastAssistant), ...answers].filter((part) => part !== "").join("\n\n");
}
