/**
 * Runs one task in its folder of the run directory, from wherever an earlier run left it:
 *
 *   result.json present        → finished: kept as it is
 *   checkpoint present         → the turn continues (revive, then retry) or, if it had
 *                                ended, only the checks run
 *   otherwise                  → workspace copied, setup run once, turn started
 *
 * Setup commands and checks resume one by one from their records in task-state.json (a
 * finished one never runs again; task-workspace.ts, task-checks.ts). The task's timeout covers
 * setup, turn and checks.
 *
 * Every command the task runs — shell tool, setup, checks — runs in the sandbox the run settled
 * on for it (`sandboxFor`): the run directory hidden, the workspace writable, setup with the host's
 * network, the shell tool and checks with the policy's, checks with their final-answer file bound
 * read-only. result.json records it.
 *
 * A run interrupted (SIGINT/SIGTERM: the run's signal) leaves no result, so the next run
 * continues the task; a timeout, step cap, provider failure or bug (`internal`) is an errored
 * result; a spent budget (the task's or the run's, asked before each request: run-budget.ts) is
 * a stopped result, its checkpoint kept for a run with a larger budget; a failure to write the run's own files, or the machine
 * running out of file handles, processes or memory (in setup, the turn, a tool or a check), stops the run and leaves the task
 * without a result, to be continued (task-failure.ts).
 *
 * Behind the run directory's lock (`env.lock`, lock-boundaries.ts): the task's start, each model
 * request, commit (so each tool call), setup command, check and its result first confirm the
 * lock; once it is lost (another runner took the directory while this one was stalled) the
 * task's requests and commands are stopped, nothing more is written, and the `LockLostError`
 * is thrown to end the run.
 */
import { realpath } from "node:fs/promises";
import type { CodingAgent } from "../../agent.js";
import type { Approval } from "../../core/approval.js";
import type { Commit } from "../../core/commit-hook.js";
import { startLongTimer } from "../../core/long-timer.js";
import { BudgetError, CodingAgentError, assertNever, describeSpentBudget, type RhemaError, type SpentBudget } from "../../core/errors.js";
import { textOf, type Message } from "../../core/messages.js";
import type { Session } from "../../core/session.js";
import { policyDenials } from "./policy-denials.js";
import type { ModelProvider } from "../../core/provider.js";
import type { RetryNotice } from "../../providers/provider-retry.js";
import type { TranscriptStats } from "../../core/transcript-types.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { SandboxUse } from "../../process/sandbox-mode.js";
import type { NetworkSetting } from "../tasks/task-sandbox.js";
import type { CommandRunner } from "./command-runner.js";
import type { SecretRedactor } from "./secret-redactor.js";
import type { TaskEvent } from "./runner-events.js";
import { runChecks, type DeadlineHit } from "./task-checks.js";
import { classifyTaskFailure } from "./task-failure.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { RunDir } from "../run-dir/run-dir.js";
import type { TaskFolder, TaskStateBook } from "../run-dir/task-folder.js";
import { TASK_RESULT_VERSION, type CheckOutcome, type TaskCost, type TaskResult, type TaskSandboxRecord, type TaskSpend } from "../run-dir/task-result.js";
import { freshTaskState, type TaskState } from "../run-dir/task-state.js";
import { runTaskTurn, stepCapOf, stepsTaken } from "./task-turn.js";
import { prepareWorkspace } from "./task-workspace.js";
import type { TaskPricing } from "./task-pricing.js";
import { pricedAsOf, resultStats, taskCost } from "../reports/cost-figures.js";
import { PRICE_TABLE } from "../../providers/prices.js";
import { RunBudget } from "./run-budget.js";
import type { LockGuard } from "../run-dir/run-lock.js";
import { lockedCommandRunner, lockedCommitHook, lockedProvider, lockedSink, throwIfLost } from "./lock-boundaries.js";

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
  /** What the task's requests are priced as (task-pricing.ts); absent: no cost is counted. */
  pricingFor?(task: TaskDefinition): TaskPricing;
  /** The pricing file the run's prices came from, recorded in each result's cost; absent: the bundled table alone. */
  pricingFile?: { path: string; sha256: string };
  /** The run's defaults for tasks that set none; `timeoutMs` Infinity is none (`--timeout none`). */
  defaults: { maxSteps?: number; timeoutMs?: number };
  /** The run's budgets and spend, shared by its tasks; absent: only the task's own limits count. */
  budget?: RunBudget;
  /** The environment tool commands start from (the CLI's), and names let through despite looking secret. */
  shellEnv: Readonly<Record<string, string | undefined>>;
  allowEnv: readonly string[];
  /** Each agent event of the task, and the runner's own (setup commands, checks: runner-events.ts). */
  onEvent(task: TaskDefinition, event: TaskEvent): void;
  /**
   * Where the task's providers tell their retries while it runs (run-request.ts wires each
   * provider's `onRetry` here): the task listens, and its listener writes a `retry` event; returns
   * the way to stop listening. Absent: retries go untold.
   */
  listenRetries?(task: TaskDefinition, listener: RetryListener): () => void;
  /** What the task's commands run in, settled before any task started; absent: unsandboxed (`off`). */
  sandboxFor?(task: TaskDefinition): TaskSandboxRun;
  /** The run directory's lock, confirmed before each side effect; absent: not checked (a caller holding none). */
  lock?: LockGuard;
}

/** Told of one retry of the task's model (`task`) or its compaction worker (`worker`); awaited before the retry's wait. */
export type RetryListener = (who: "task" | "worker", notice: RetryNotice) => void | Promise<void>;

/** A task's sandbox for this run: what its commands run in, and the network of its shell tool and checks. */
export interface TaskSandboxRun {
  use: SandboxUse;
  network: NetworkSetting;
}

export type TaskRunOutcome =
  /** `kept`: the result was already on disk from an earlier run. */
  | { kind: "finished"; result: TaskResult; kept: boolean }
  /** `spent`: what the task spent so far (its checkpoint's figures), for the reports. */
  | { kind: "interrupted"; spent: TaskSpend };

const DENIAL_EXAMPLES = 5;

export async function runTask(task: TaskDefinition, env: TaskRunEnv): Promise<TaskRunOutcome> {
  await env.lock?.confirm();
  if (env.lock) env = lockedEnv(env, env.lock);
  const folder = new RunDir(env.runDir).task(task);
  const existing = await folder.readResult();
  if (existing) return { kind: "finished", result: existing, kept: true };
  await folder.removeStaleTemps();
  const started = Date.now();
  const book = folder.stateBook(await startState(task, folder, env.now()));
  // Active time recorded at each boundary: a SIGKILL loses at most the time since the last one.
  const checkpoint = folder.openCheckpoint({}, () => folder.recordState({ ...book.current, activeMs: book.current.activeMs + (Date.now() - started) }));
  // The task's timeout covers setup, turn and checks, less what earlier runs already spent.
  const timeout = taskTimeout(task, env, book.current.activeMs);
  // Interrupted: the time recorded, and what was spent so far read back for the reports.
  const interrupted = async (agent: CodingAgent | null = null): Promise<TaskRunOutcome> => {
    throwIfLost(env.lock);
    await book.update((s) => ({ ...s, activeMs: s.activeMs + (Date.now() - started) }));
    const saved = agent ? null : await checkpoint.load();
    const spent = spendSoFar(task, env, {
      messages: agent?.session.messages ?? saved?.messages ?? [],
      stats: agent?.transcriptStats() ?? saved?.transcript?.stats ?? null,
      activeMs: book.current.activeMs,
    });
    // Kept for the reports of later runs that leave this task alone.
    await book.update((s) => ({ ...s, interruptedSpent: spent }));
    return { kind: "interrupted", spent };
  };
  const signal = AbortSignal.any([env.signal, ...(timeout.signal ? [timeout.signal] : []), ...(env.lock ? [env.lock.lost] : [])]);
  const provider = env.providerFor(task);
  const log = await folder.openEventLog(env.redactor, (e) => env.onEvent(task, e), env.now);
  const events = env.lock ? lockedSink(log, env.lock) : log;
  const unlistenRetries = env.listenRetries?.(task, (who, notice) => events.emit({ type: "retry", who, ...notice })) ?? (() => {});
  const sandbox = await taskPlacements(env.sandboxFor?.(task) ?? { use: { mode: "off" }, network: "allow" }, env.runDir, env.shellEnv);
  const budget = env.budget ?? new RunBudget({});
  // Each boundary's stats feed the run's spend as the request lands, before the next one asks.
  const commitHook = async (commit: Commit) => {
    await checkpoint.hook(commit);
    budget.record(task, commit.stats);
  };
  const store = { hook: env.lock ? lockedCommitHook(commitHook, env.lock) : commitHook };
  try {
    let agent: CodingAgent | null = null;
    let failure: RhemaError | null = null;
    let cut = false;
    try {
      await prepareWorkspace(task, folder, book, {
        runCommand: env.runCommand, signal, now: env.now, onEvent: (e) => events.emit(e),
        ...(sandbox.placement ? { sandbox: { ...sandbox.placement, network: true } } : {}),
      });
      const saved = await checkpoint.load();
      agent = await runTaskTurn({
        task, workspace: folder.workspace, provider, approval: env.approvalFor(task),
        store, budget: budget.checkFor(task), saved, sink: events, signal, maxSteps: stepCapOf(task, env.defaults), now: env.now,
        shellEnv: env.shellEnv, allowEnv: env.allowEnv, filterToolOutput: (text) => env.redactor.redact(text),
        filterCommitted: (text) => env.redactor.redact(text),
        workerProvider: env.workerProviderFor?.(task) ?? null,
        ...(env.pricingFor ? { price: env.pricingFor(task).pricer } : {}),
        ...(sandbox.placement ? { sandbox: sandbox.placement } : {}),
      });
      // The conversation moved on since checks last ran (a retried turn): their records were of another workspace.
      if (agent.session.messages.length !== (saved?.messages.length ?? 0) && book.current.checks.length > 0) {
        await book.update((s) => ({ ...s, checks: [] }));
      }
    } catch (err) {
      throwIfLost(env.lock);
      // Interrupted: said once the checkpoint is closed, so what it holds is read back whole.
      cut = env.signal.aborted;
      if (!cut) failure = failureOf(err, signal);
    } finally {
      await checkpoint.close();
    }
    if (cut) return await interrupted();
    let checks: CheckOutcome[] = [];
    if (!failure && agent) {
      try {
        const checked = await checkTurn({ task, folder, book, env, timeout, events, messages: agent.session.messages, sandbox: sandbox.placement });
        if (checked.kind === "interrupted") return await interrupted(agent);
        ({ checks, failure } = checked);
      } catch (err) {
        // A check whose sandbox did not start, a bug: the task's outcome, like a failed setup.
        if (env.signal.aborted) return await interrupted(agent);
        failure = failureOf(err, signal);
      }
    }
    if (env.signal.aborted) return await interrupted(agent);
    await env.lock?.confirm();
    // A failed turn leaves no agent: its conversation and stats are in the checkpoint.
    const saved = agent ? null : await checkpoint.load();
    const messages = agent?.session.messages ?? saved?.messages ?? [];
    const stats = agent?.transcriptStats() ?? saved?.transcript?.stats ?? null;
    const cost = costOf(task, env, stats);
    const result = buildResult({
      task, folder, state: book.current, env, messages, calls: (agent?.session ?? saved)?.calls, checks, failure, stats: stats && resultStats(stats, cost), cost, provider: provider.id,
      elapsedMs: book.current.activeMs + (Date.now() - started), sandbox: sandbox.record,
    });
    await folder.writeResult(result);
    return { kind: "finished", result, kept: false };
  } finally {
    unlistenRetries();
    timeout.clear();
    await log.close();
  }
}

/** `env` with its requests and commands behind the lock (lock-boundaries.ts). */
function lockedEnv(env: TaskRunEnv, lock: LockGuard): TaskRunEnv {
  const worker = env.workerProviderFor;
  const locked = (provider: ModelProvider | null) => (provider ? lockedProvider(provider, lock) : null);
  return {
    ...env,
    runCommand: lockedCommandRunner(env.runCommand, lock),
    providerFor: (task) => lockedProvider(env.providerFor(task), lock),
    ...(worker ? { workerProviderFor: (task: TaskDefinition) => locked(worker(task)) } : {}),
  };
}

/**
 * A throw inside the task as its failure. A disk that is full, a checkpoint that is corrupt: not
 * the task's outcome but the run's end (exit 3 or 2, naming the file), rethrown, so the same
 * command continues once it is fixed.
 */
function failureOf(err: unknown, signal: AbortSignal): RhemaError {
  const classified = classifyTaskFailure(err, signal.aborted ? signal.reason : undefined);
  if (classified.kind === "stop") throw classified.error;
  return classified.error;
}

/** What the task's stats cost, priced as the run priced it; undefined when no cost is counted. */
function costOf(task: TaskDefinition, env: TaskRunEnv, stats: TranscriptStats | null): TaskCost | undefined {
  const pricing = env.pricingFor?.(task);
  return pricing ? taskCost(stats, pricedAsOf(pricing), { ...PRICE_TABLE, pricingFile: env.pricingFile ?? null }) : undefined;
}

/** An interrupted task's figures so far: time over every run, steps, stats and cost (unpriced: null, never 0). */
function spendSoFar(task: TaskDefinition, env: TaskRunEnv, so: { messages: readonly Message[]; stats: TranscriptStats | null; activeMs: number }): TaskSpend {
  const cost = costOf(task, env, so.stats);
  return {
    durationMs: Math.round(so.activeMs),
    steps: stepsTaken(so.messages),
    stats: so.stats && resultStats(so.stats, cost),
    cost: cost ?? null,
  };
}

interface CheckPhase {
  task: TaskDefinition;
  folder: TaskFolder;
  book: TaskStateBook;
  env: TaskRunEnv;
  timeout: TaskTimeout;
  events: { emit(event: TaskEvent): void | Promise<void> };
  /** The conversation of the turn that ended. */
  messages: readonly Message[];
  /** The task's sandbox (the shell tool's placement), when it has one. */
  sandbox: SandboxPlacement | null;
}

/**
 * The checks of a turn that ended: the final answer written where they read it, then each check
 * (task-checks.ts) under the run's interrupt and the task's timeout. A timeout that caught them
 * is the task's failure.
 */
async function checkTurn(p: CheckPhase): Promise<{ kind: "interrupted" } | { kind: "finished"; checks: CheckOutcome[]; failure: RhemaError | null }> {
  await p.env.lock?.confirm();
  const finalAnswerPath = await p.folder.writeFinalAnswer(p.env.redactor.redact(finalAnswerOf(p.messages)));
  // Inside the sandbox the run directory is hidden: the final-answer file is bound back, read-only.
  const sandbox = p.sandbox ? { ...p.sandbox, readOnlyBinds: [await realpath(finalAnswerPath)] } : null;
  const ran = await runChecks(p.task, p.folder.workspace, {
    runCommand: p.env.runCommand, signal: p.env.signal, deadline: p.timeout.signal, redactor: p.env.redactor, book: p.book, now: p.env.now,
    finalAnswerPath, onEvent: (e) => p.events.emit(e), ...(sandbox ? { sandbox } : {}),
  });
  if (ran.kind === "interrupted") return ran;
  return { kind: "finished", checks: ran.outcomes, failure: ran.deadline ? p.timeout.during(ran.deadline) : null };
}

async function startState(task: TaskDefinition, folder: TaskFolder, now: Date): Promise<TaskState> {
  const previous = await folder.readState();
  const state: TaskState = previous
    ? { ...previous, resumed: previous.resumed + 1 }
    : freshTaskState(task.contentHash, now.toISOString());
  await folder.writeState(state);
  return state;
}

/** The text of the conversation's last assistant message: what checks read as the final answer. */
function finalAnswerOf(messages: readonly Message[]): string {
  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
  return lastAssistant ? textOf(lastAssistant) : "";
}

/** The task's timeout, less what earlier interrupted runs already spent on it. */
interface TaskTimeout {
  /** Aborted when the timeout fires; null without a timeout. */
  signal: AbortSignal | null;
  /** The timeout error for a timeout that fired during the checks. */
  during(hit: DeadlineHit): RhemaError;
  clear(): void;
}

function taskTimeout(task: TaskDefinition, env: TaskRunEnv, usedMs: number): TaskTimeout {
  const ms = task.limits.timeoutMs ?? env.defaults.timeoutMs;
  const passed = `the task's timeout of ${ms} ms passed`;
  const during = (hit: DeadlineHit) => new CodingAgentError("timeout", hit.running
    ? `${passed} while check "${hit.check}" ran: it was stopped, and the checks after it did not run`
    : `${passed} before check "${hit.check}" started: it and the checks after it did not run`);
  // `none` (Infinity) is no timeout, whatever the run's default.
  if (ms === undefined || ms === Infinity) return { signal: null, during, clear() {} };
  const controller = new AbortController();
  // Through startLongTimer: a timeout above 2^31−1 ms (`1000h`) would fire at once with setTimeout.
  const timer = startLongTimer(() => controller.abort(new CodingAgentError("timeout", passed)), Math.max(0, ms - usedMs));
  return { signal: controller.signal, during, clear: () => timer.clear() };
}

interface ResultParts {
  task: TaskDefinition;
  folder: TaskFolder;
  state: TaskState;
  env: TaskRunEnv;
  messages: Message[];
  /** The calls' states, whose denials the result reports. */
  calls: Session["calls"];
  checks: CheckOutcome[];
  failure: RhemaError | null;
  stats: TaskResult["stats"];
  cost: TaskResult["cost"];
  provider: string;
  elapsedMs: number;
  sandbox: TaskSandboxRecord;
}

function buildResult(p: ResultParts): TaskResult {
  const { task, env, messages } = p;
  const stoppedOn = p.failure instanceof BudgetError ? p.failure.budget : null;
  const status = stoppedOn ? "stopped" : p.failure ? "errored" : p.checks.every((c) => c.passed) ? "passed" : "failed";
  const denials = policyDenials({ messages, calls: p.calls });
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
    ...(p.cost ? { cost: p.cost } : {}),
    checks: p.checks,
    ...(p.failure ? { error: { code: p.failure.code, message: p.failure.message } } : {}),
    ...(stoppedOn ? { budget: stoppedOn } : {}),
    finalAnswer: finalAnswerOf(messages),
    transcriptPath: p.folder.relativePath("events"),
    policyDenials: { count: denials.length, examples: denials.slice(0, DENIAL_EXAMPLES) },
    resumed: p.state.resumed,
    sandbox: p.sandbox,
  });
}

/**
 * The task's placement in the bubblewrap sandbox — the form the probe found to hold, the run
 * directory (by its real path) hidden, the home folder, runtime folder and credential files rhema's
 * own environment names hidden too, the network of the shell tool and checks — or null
 * unsandboxed; and what result.json records.
 */
async function taskPlacements(
  run: TaskSandboxRun, runDir: string, hostEnv: Readonly<Record<string, string | undefined>>,
): Promise<{ placement: SandboxPlacement | null; record: TaskSandboxRecord }> {
  const { use } = run;
  switch (use.mode) {
    case "bwrap":
      return {
        placement: { bwrap: use.bwrap, isolation: use.isolation, network: run.network === "allow", hiddenPaths: [await realpath(runDir)], hostEnv },
        record: { mode: "bwrap", network: run.network },
      };
    case "none":
      return { placement: null, record: { mode: "none", network: "allow", reason: use.reason, fix: use.fix } };
    case "off":
      return { placement: null, record: { mode: "off", network: "allow" } };
    default:
      return assertNever(use);
  }
}

/**
 * The result of a task the run did not start because its budget was spent: stopped, nothing
 * run, nothing spent — a run with a larger budget starts it.
 */
export function notStartedResult(task: TaskDefinition, spent: SpentBudget, env: Pick<TaskRunEnv, "runDir" | "now" | "providerFor">): TaskResult {
  const at = env.now().toISOString();
  return {
    version: TASK_RESULT_VERSION,
    suite: task.suite, id: task.id, file: task.file, contentHash: task.contentHash, tags: task.tags,
    provider: env.providerFor(task).id, status: "stopped", startedAt: at, finishedAt: at, durationMs: 0, steps: 0, stats: null, checks: [],
    error: { code: "budget", message: `not started: the run's budget was spent — ${describeSpentBudget(spent)}` },
    budget: spent, finalAnswer: "", transcriptPath: new RunDir(env.runDir).task(task).relativePath("events"),
    policyDenials: { count: 0, examples: [] }, resumed: 0,
  };
}

/** A task that stopped making progress (stall-net.ts): errored with `error`, nothing more known of it here. */
export function stalledResult(task: TaskDefinition, error: RhemaError, env: Pick<TaskRunEnv, "runDir" | "now" | "providerFor" | "redactor">): TaskResult {
  const at = env.now().toISOString();
  return env.redactor.redactValue<TaskResult>({
    version: TASK_RESULT_VERSION,
    suite: task.suite, id: task.id, file: task.file, contentHash: task.contentHash, tags: task.tags,
    provider: env.providerFor(task).id, status: "errored", startedAt: at, finishedAt: at, durationMs: 0, steps: 0, stats: null, checks: [],
    error: { code: error.code, message: error.message },
    finalAnswer: "", transcriptPath: new RunDir(env.runDir).task(task).relativePath("events"),
    policyDenials: { count: 0, examples: [] }, resumed: 0,
  });
}
