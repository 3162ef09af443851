/**
 * Runs one task in its folder of the run directory, from wherever an earlier run left it:
 *
 *   result.json present        → finished: kept as it is
 *   checkpoint present         → the turn continues (revive, then retry) or, if it had
 *                                ended, only the checks run
 *   otherwise                  → workspace copied, setup run once, turn started
 *
 * A run interrupted (SIGINT/SIGTERM: the run's signal) leaves no result, so the next run
 * continues the task; a timeout, step cap, provider failure or bug (`internal`) is an errored
 * result; a failure to write the run's own files stops the run (task-failure.ts).
 */
import type { CodingAgent } from "../../agent.js";
import { readDenial, type Approval } from "../../core/approval.js";
import { CodingAgentError, type RhemaError } from "../../core/errors.js";
import type { AgentEvent } from "../../core/events.js";
import { textOf, toolCallsOf, type Message } from "../../core/messages.js";
import type { ModelProvider } from "../../core/provider.js";
import type { CommandRunner } from "./command-runner.js";
import type { SecretRedactor } from "./secret-redactor.js";
import { runChecks } from "./task-checks.js";
import { classifyTaskFailure } from "./task-failure.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { RunDir } from "../run-dir/run-dir.js";
import type { TaskFolder } from "../run-dir/task-folder.js";
import { TASK_RESULT_VERSION, type CheckOutcome, type TaskResult } from "../run-dir/task-result.js";
import type { TaskState } from "../run-dir/task-state.js";
import { DEFAULT_MAX_STEPS, runTaskTurn, stepsTaken } from "./task-turn.js";
import { prepareWorkspace } from "./task-workspace.js";

export interface TaskRunEnv {
  runDir: string;
  /** The run's interrupt: aborting it stops every task resumably. */
  signal: AbortSignal;
  now: () => Date;
  redactor: SecretRedactor;
  runCommand: CommandRunner;
  providerFor(task: TaskDefinition): ModelProvider;
  /** The model that writes compaction summaries when the task names one (`transcript.worker`). */
  workerProviderFor?(task: TaskDefinition): ModelProvider | null;
  approvalFor(task: TaskDefinition): Approval;
  defaults: { maxSteps?: number; timeoutMs?: number };
  /** The environment tool commands start from (the CLI's), and names let through despite looking secret. */
  shellEnv: Readonly<Record<string, string | undefined>>;
  allowEnv: readonly string[];
  onEvent(task: TaskDefinition, event: AgentEvent): void;
}

export type TaskRunOutcome =
  /** `kept`: the result was already on disk from an earlier run. */
  | { kind: "finished"; result: TaskResult; kept: boolean }
  | { kind: "interrupted" };

const DENIAL_EXAMPLES = 5;

export async function runTask(task: TaskDefinition, env: TaskRunEnv): Promise<TaskRunOutcome> {
  const folder = new RunDir(env.runDir).task(task);
  const existing = await folder.readResult();
  if (existing) return { kind: "finished", result: existing, kept: true };
  const started = Date.now();
  let state = await startState(task, folder, env.now());
  // Active time recorded at each boundary: a SIGKILL loses at most the time since the last one.
  const checkpoint = folder.openCheckpoint({}, () => folder.recordState({ ...state, activeMs: state.activeMs + (Date.now() - started) }));
  const timeout = taskTimeout(task, env, state.activeMs);
  const interrupted = async (): Promise<TaskRunOutcome> => {
    await folder.writeState({ ...state, activeMs: state.activeMs + (Date.now() - started) });
    return { kind: "interrupted" };
  };
  const signal = timeout.signal ? AbortSignal.any([env.signal, timeout.signal]) : env.signal;
  const provider = env.providerFor(task);
  const events = await folder.openEventLog(env.redactor, (e) => env.onEvent(task, e), env.now);
  let agent: CodingAgent | null = null;
  let failure: RhemaError | null = null;
  try {
    state = await prepareWorkspace(task, folder, state, { runCommand: env.runCommand, signal });
    const saved = await checkpoint.load();
    agent = await runTaskTurn({
      task, workspace: folder.workspace, provider, approval: env.approvalFor(task),
      store: checkpoint, saved, sink: events, signal, maxSteps: task.limits.maxSteps ?? env.defaults.maxSteps ?? DEFAULT_MAX_STEPS, now: env.now,
      shellEnv: env.shellEnv, allowEnv: env.allowEnv, filterToolOutput: (text) => env.redactor.redact(text),
      workerProvider: env.workerProviderFor?.(task) ?? null,
    });
  } catch (err) {
    if (env.signal.aborted) return interrupted();
    // A disk that is full, a checkpoint that is corrupt: not the task's outcome but the run's
    // end (exit 3 or 2, naming the file), so the same command continues once it is fixed.
    const classified = classifyTaskFailure(err, signal.aborted ? signal.reason : undefined);
    if (classified.kind === "stop") throw classified.error;
    failure = classified.error;
  } finally {
    timeout.clear();
    await checkpoint.close();
    await events.close();
  }
  const checks = failure ? [] : await runChecks(task, folder.workspace, { runCommand: env.runCommand, signal: env.signal, redactor: env.redactor });
  if (env.signal.aborted) return interrupted();
  // A failed turn leaves no agent: its conversation and stats are in the checkpoint.
  const saved = agent ? null : await checkpoint.load();
  const messages = agent?.session.messages ?? saved?.messages ?? [];
  const stats = agent?.transcriptStats() ?? saved?.transcript?.stats ?? null;
  const result = buildResult({ task, folder, state, env, messages, checks, failure, stats, provider: provider.id, elapsedMs: state.activeMs + (Date.now() - started) });
  await folder.writeResult(result);
  return { kind: "finished", result, kept: false };
}

async function startState(task: TaskDefinition, folder: TaskFolder, now: Date): Promise<TaskState> {
  const previous = await folder.readState();
  const state: TaskState = previous
    ? { ...previous, resumed: previous.resumed + 1 }
    : { version: 1, contentHash: task.contentHash, setupDone: false, resumed: 0, startedAt: now.toISOString(), activeMs: 0 };
  await folder.writeState(state);
  return state;
}

/** The task's timeout, less what earlier interrupted runs already spent on it. */
function taskTimeout(task: TaskDefinition, env: TaskRunEnv, usedMs: number): { signal: AbortSignal | null; clear(): void } {
  const ms = task.limits.timeoutMs ?? env.defaults.timeoutMs;
  if (ms === undefined) return { signal: null, clear() {} };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CodingAgentError("timeout", `the task's timeout of ${ms} ms passed`)), Math.max(0, ms - usedMs));
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

interface ResultParts {
  task: TaskDefinition;
  folder: TaskFolder;
  state: TaskState;
  env: TaskRunEnv;
  messages: Message[];
  checks: CheckOutcome[];
  failure: RhemaError | null;
  stats: TaskResult["stats"];
  provider: string;
  elapsedMs: number;
}

function buildResult(p: ResultParts): TaskResult {
  const { task, env, messages } = p;
  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
  const status = p.failure ? "errored" : p.checks.every((c) => c.passed) ? "passed" : "failed";
  const denials = policyDenials(messages);
  return env.redactor.redactValue<TaskResult>({
    version: TASK_RESULT_VERSION,
    suite: task.suite, id: task.id, file: task.file, contentHash: task.contentHash, tags: task.tags,
    provider: p.provider,
    status,
    startedAt: p.state.startedAt,
    finishedAt: env.now().toISOString(),
    durationMs: Math.round(p.elapsedMs),
    steps: stepsTaken(messages),
    stats: p.stats,
    checks: p.checks,
    ...(p.failure ? { error: { code: p.failure.code, message: p.failure.message } } : {}),
    finalAnswer: lastAssistant ? textOf(lastAssistant) : "",
    transcriptPath: p.folder.relativePath("events"),
    policyDenials: { count: denials.length, examples: denials.slice(0, DENIAL_EXAMPLES) },
    resumed: p.state.resumed,
  });
}

/** Denials, read off the session (so they survive resumes): results that begin "denied by". */
export function policyDenials(messages: readonly Message[]): TaskResult["policyDenials"]["examples"] {
  const toolOf = new Map(messages.flatMap(toolCallsOf).map((c) => [c.id, c.name]));
  const out: TaskResult["policyDenials"]["examples"] = [];
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type !== "tool_result" || typeof b.content !== "string" || !b.isError) continue;
      const denial = readDenial(b.content);
      if (denial) out.push({ tool: toolOf.get(b.callId) ?? "?", rule: /^default\b/.test(denial.rule) ? null : denial.rule, reason: denial.reason });
    }
  }
  return out;
}
