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
 * continues the task — as does a provider refusing the run (a dead key, a spent quota:
 * `onRefused`); a timeout, step cap, provider failure or bug (`internal`) is an errored
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
import { CodingAgentError, assertNever, type ProviderRefusal, type RhemaError } from "../../core/errors.js";
import type { Message } from "../../core/messages.js";
import type { ModelProvider } from "../../core/provider.js";
import type { RetryNotice } from "../../providers/provider-retry.js";
import type { TranscriptStats } from "../../core/transcript-types.js";
import type { TokenCounter } from "../../core/token-counter.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { SandboxUse } from "../../process/sandbox-mode.js";
import type { NetworkSetting } from "../tasks/task-sandbox.js";
import type { CommandRunner } from "./command-runner.js";
import type { CommandEnvironment } from "../plan/task-plan.js";
import type { SecretRedactor } from "../run-dir/secret-redactor.js";
import type { TaskEvent } from "../run-dir/runner-events.js";
import { runChecks, type DeadlineHit } from "./task-checks.js";
import { classifyTaskFailure } from "./task-failure.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { RunDir } from "../run-dir/run-dir.js";
import type { TaskCheckpoint, TaskFolder, TaskStateBook } from "../run-dir/task-folder.js";
import type { Trial } from "../trials/trial.js";
import { finalAnswerOf, trialResult } from "./task-outcome.js";
import { type CheckOutcome, type TaskCost, type TaskResult, type TaskSandboxRecord, type TaskSpend } from "../run-dir/task-result.js";
import { freshTaskState, type TaskState } from "../run-dir/task-state.js";
import { acceptedOutput, runTaskTurn, stepCapOf, stepsTaken } from "./task-turn.js";
import { changesOf, changesPlace, prepareWorkspace, unmountLayer, type WorkspaceLayering } from "./task-workspace.js";
import { layerPaths } from "../run-dir/layer-mounts.js";
import { writeChangesPatch } from "./workspace-changes.js";
import type { SharedSetups } from "./shared-setup.js";
import type { GitMirrors } from "./git-mirror.js";
import { allocatedBytes } from "./workspace-disk.js";
import type { TaskPricing } from "../pricing/task-pricing.js";
import { pricedAsOf, resultStats, taskCost } from "../pricing/cost-figures.js";
import { PRICE_TABLE } from "../pricing/prices.js";
import { RunBudget } from "../pricing/run-budget.js";
import type { LockGuard } from "../run-dir/run-lock.js";
import { openTrialCassette, type CassetteSettings, type TrialCassette } from "./trial-cassette.js";
import { refusalOf } from "./provider-stops.js";
import { lockedCommandRunner, lockedCommitHook, lockedProvider, lockedSink, throwIfLost } from "./lock-boundaries.js";

export interface TaskRunEnv {
  runDir: string;
  /** The run's interrupt (and, from the suite runner, the trial's providers' refusals): aborting it stops the task resumably. */
  signal: AbortSignal;
  /**
   * Told when a provider refuses the run (provider-stops.ts) before the trial's failure is judged:
   * the teller aborts `signal`, so the trial is left interrupted, resumable, never errored. Absent:
   * the refusal stops the run (exit 3).
   */
  onRefused?(refusal: ProviderRefusal): void;
  now: () => Date;
  redactor: SecretRedactor;
  runCommand: CommandRunner;
  providerFor(trial: Trial): ModelProvider;
  /** The model that writes compaction summaries when the task names one (`transcript.worker`). */
  workerProviderFor?(trial: Trial): ModelProvider | null;
  approvalFor(trial: Trial): Approval;
  /** What the trial's requests are priced as (task-pricing.ts); absent: no cost is counted. */
  pricingFor?(trial: Trial): TaskPricing;
  /** What a trial's tokens are counted with (its plan's); absent: chars4. A resumed trial keeps its session's. */
  tokenCounterFor?(trial: Trial): TokenCounter;
  /** The pricing file the run's prices came from, recorded in each result's cost; absent: the bundled table alone. */
  pricingFile?: { path: string; sha256: string };
  /** The run's defaults for tasks that set none; `timeoutMs` Infinity is none (`--timeout none`). */
  defaults: { maxSteps?: number; timeoutMs?: number };
  /** The run's budgets and spend, shared by its tasks; absent: only the task's own limits count. */
  budget?: RunBudget;
  /** What the trial's shell tool runs with (its plan's scrubbed environment and the names let through). */
  commandsFor(trial: Trial): CommandEnvironment;
  /**
   * The environment rhema itself was started with, unscrubbed: the sandbox hides the home folder,
   * runtime folder and credential files it names (scrubbing removes the variables that name them).
   */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** Each agent event of the task, and the runner's own (setup commands, checks: runner-events.ts). */
  onEvent(trial: Trial, event: TaskEvent): void;
  /**
   * Where the task's providers tell their retries while it runs (run-request.ts wires each
   * provider's `onRetry` here): the task listens, and its listener writes a `retry` event; returns
   * the way to stop listening. Absent: retries go untold.
   */
  listenRetries?(trial: Trial, listener: RetryListener): () => void;
  /** What the trial's commands run in, settled before any task started; absent: unsandboxed (`off`). */
  sandboxFor?(trial: Trial): TaskSandboxRun;
  /** The run's mirrors of git workspaces' repositories, shared by its trials; absent: each trial opens its own. */
  gitMirrors?: GitMirrors;
  /** The run directory's lock, confirmed before each side effect; absent: not checked (a caller holding none). */
  lock?: LockGuard;
  /** The run's shared setups (`workspace.shared`); absent: every task runs its own setup. */
  sharedSetups?: SharedSetups;
  /** The run's layered workspaces (workspace-layers.ts); absent: every workspace is a copy. */
  layering?: WorkspaceLayering;
  /** Why the workspaces are copies although layers were asked for (none could be mounted); absent: not asked, or layered. */
  copyReason?: string;
  /** `--cassette`: the trials' model exchanges recorded to, or replayed from, a cassette each (trial-cassette.ts). */
  cassette?: CassetteSettings;
  /** `--restart-changed`: a trial whose MCP servers' specs changed since its checkpoint continues with the new ones. */
  restartChanged?: boolean;
  /** The cassettes a task whose model is a recording replays (its plan's), in place of `cassette`. */
  recordedCassettesFor?: (trial: Trial) => { dir: string; file?: string } | null;
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

/**
 * Runs one trial in its folder, in named phases: open (its state, checkpoint, log, timeout,
 * sandbox), prepare workspace → turn, checks, outcome (task-outcome.ts builds the result).
 */
export async function runTask(trial: Trial, env: TaskRunEnv): Promise<TaskRunOutcome> {
  await env.lock?.confirm();
  if (env.lock) env = lockedEnv(env, env.lock);
  const folder = new RunDir(env.runDir).trial(trial.key);
  const existing = await folder.readResult();
  if (existing) return { kind: "finished", result: existing, kept: true };
  const run = await openTrialRun(trial, folder, env);
  try {
    const turn = await turnPhase(run);
    if (turn.kind === "interrupted") return await run.interrupted();
    await changesPhase(run);
    const checked = turn.failure === null ? await checkPhase(run, turn.agent!) : { kind: "finished" as const, checks: [], failure: turn.failure };
    if (checked.kind === "interrupted" || env.signal.aborted) return await run.interrupted(turn.agent);
    return await outcomePhase(run, turn.agent, checked);
  } finally {
    await run.close();
  }
}

/** A trial's run under way: what its phases share. */
interface TrialRun {
  trial: Trial;
  folder: TaskFolder;
  env: TaskRunEnv;
  book: TaskStateBook;
  checkpoint: TaskCheckpoint;
  timeout: TaskTimeout;
  /** The run's interrupt, the task's timeout and the lock's loss: what stops the trial's work. */
  signal: AbortSignal;
  provider: ModelProvider;
  /** `--cassette`: the trial's cassette, which `provider` and the worker record to or replay from. */
  cassette: TrialCassette | null;
  events: { emit(event: TaskEvent): void | Promise<void> };
  sandbox: { placement: SandboxPlacement | null; record: TaskSandboxRecord };
  store: { readonly hook: (commit: Commit) => Promise<void> };
  budget: RunBudget;
  /** The trial's active time so far: earlier runs' plus this one's. */
  activeMs(): number;
  /** Interrupted: the time recorded, and what was spent so far read back for the reports. */
  interrupted(agent?: CodingAgent | null): Promise<TaskRunOutcome>;
  close(): Promise<void>;
}

async function openTrialRun(trial: Trial, folder: TaskFolder, runEnv: TaskRunEnv): Promise<TrialRun> {
  const { task } = trial;
  // A task whose model is a recording replays its own cassettes, whatever --cassette says.
  const own = runEnv.recordedCassettesFor?.(trial) ?? null;
  const env: TaskRunEnv = own ? { ...runEnv, cassette: { ...own, mode: "strict" } } : runEnv;
  await folder.removeStaleTemps();
  const clock = () => env.now().getTime();
  const started = clock();
  const book = folder.stateBook(await startState(task, folder, env.now()));
  const sinceStart = () => clock() - started;
  // Active time recorded at each boundary: a SIGKILL loses at most the time since the last one.
  const checkpoint = folder.openCheckpoint({}, () => folder.recordState({ ...book.current, activeMs: book.current.activeMs + sinceStart() }));
  // The task's timeout covers setup, turn and checks, less what earlier runs already spent.
  const timeout = taskTimeout(task, env, book.current.activeMs);
  // A lost lock — the run directory's, or a recording's on its cassette folder — stops the trial's requests and commands.
  const locks = [env.lock, env.cassette?.recorder].flatMap((lock) => (lock ? [lock.lost] : []));
  const signal = AbortSignal.any([env.signal, ...(timeout.signal ? [timeout.signal] : []), ...locks]);
  const log = await folder.openEventLog(env.redactor, (e) => env.onEvent(trial, e), env.now);
  const events = env.lock ? lockedSink(log, env.lock) : log;
  const cassette = env.cassette ? openTrialCassette(env.cassette, {
    key: trial.key, trialStartedAt: book.current.startedAt, workspace: folder.workspace, runDir: env.runDir, usedFile: folder.path("cassetteUsed"),
    ...(trial.task.cassetteNormalise ? { normalise: trial.task.cassetteNormalise } : {}),
    redact: (text) => env.redactor.redact(text), now: env.now, onLive: (reason) => events.emit({ type: "cassette_live", reason }),
  }) : null;
  const provider = cassette ? cassette.wrap(env.providerFor(trial)) : env.providerFor(trial);
  const unlistenRetries = env.listenRetries?.(trial, (who, notice) => events.emit({ type: "retry", who, ...notice })) ?? (() => {});
  const sandbox = await taskPlacements(env.sandboxFor?.(trial) ?? { use: { mode: "off" }, network: "allow" }, env.runDir, env.hostEnv);
  const budget = env.budget ?? new RunBudget({});
  // Each boundary's stats feed the run's spend as the request lands, before the next one asks.
  const commitHook = async (commit: Commit) => {
    await checkpoint.hook(commit);
    budget.record(trial.key, commit.stats);
  };
  const run: TrialRun = {
    trial, folder, env, book, checkpoint, timeout, signal, provider, events, sandbox, budget, cassette,
    store: { hook: env.lock ? lockedCommitHook(commitHook, env.lock) : commitHook },
    activeMs: () => book.current.activeMs + sinceStart(),
    async interrupted(agent = null) {
      throwIfLost(env.lock);
      await book.update((s) => ({ ...s, activeMs: s.activeMs + sinceStart() }));
      const saved = agent ? null : await checkpoint.load();
      const spent = spendSoFar(trial, env, {
        messages: agent?.session.messages ?? saved?.messages ?? [],
        stats: agent?.transcriptStats() ?? saved?.transcript?.stats ?? null,
        activeMs: book.current.activeMs,
      });
      // Kept for the reports of later runs that leave this trial alone.
      await book.update((s) => ({ ...s, interruptedSpent: spent }));
      return { kind: "interrupted", spent };
    },
    async close() {
      unlistenRetries();
      timeout.clear();
      await cassette?.close();
      await log.close();
      // The layer stays for a resume; the mount goes (the next run unmounts it after a kill).
      await unmountLayer(folder, book, env.layering);
    },
  };
  return run;
}

/** The workspace prepared (copy, setup) and the turn run; the checkpoint closed either way. */
async function turnPhase(run: TrialRun): Promise<{ kind: "interrupted" } | { kind: "ended"; agent: CodingAgent | null; failure: RhemaError | null }> {
  const { trial, folder, env, book, checkpoint, signal, sandbox } = run;
  let agent: CodingAgent | null = null;
  let failure: RhemaError | null = null;
  try {
    const shared = env.sharedSetups;
    await prepareWorkspace(trial.task, folder, book, {
      runCommand: env.runCommand, signal, now: env.now, onEvent: (e) => run.events.emit(e), snapshotEnv: env.hostEnv, hostEnv: env.hostEnv,
      ...(env.gitMirrors ? { gitMirrors: env.gitMirrors } : {}),
      ...(env.layering ? { layering: env.layering } : {}),
      ...(sandbox.placement ? { sandbox: { ...sandbox.placement, network: true } } : {}),
      ...(shared ? {
        sharedBase: () => shared.prepare({
          task: trial.task, commands: env.commandsFor(trial), runCommand: env.runCommand, onEvent: (e) => run.events.emit(e),
          sandbox: { mode: sandbox.record.mode, network: sandbox.record.network, placement: sandbox.placement },
        }),
      } : {}),
    });
    const saved = await checkpoint.load();
    agent = await runTaskTurn({
      task: trial.task, workspace: folder.workspace, provider: run.provider, approval: env.approvalFor(trial),
      store: run.store, budget: run.budget.checkFor(trial.key, trial.task.limits), saved, sink: run.events, signal,
      maxSteps: stepCapOf(trial.task, env.defaults), now: env.now,
      commands: env.commandsFor(trial), filterToolOutput: (text) => env.redactor.redact(text),
      filterCommitted: (text) => env.redactor.redact(text),
      workerProvider: workerOf(run),
      ...(env.pricingFor ? { price: env.pricingFor(trial).pricer } : {}),
      ...(sandbox.placement ? { sandbox: sandbox.placement } : {}),
      ...(env.tokenCounterFor ? { tokenCounter: env.tokenCounterFor(trial) } : {}),
      // A replay's session begins when its recording's did: its environment report, and so its requests, match.
      sessionCreatedAt: new Date((saved === null ? await run.cassette?.recordedStart() : null) ?? book.current.startedAt),
      ...(env.restartChanged ? { restartChanged: true } : {}),
    });
    // The conversation moved on since checks last ran (a retried turn): their records, and the patch, were of another workspace.
    if (agent.session.messages.length !== (saved?.messages.length ?? 0) && (book.current.checks.length > 0 || book.current.changes !== null)) {
      await book.update((s) => ({ ...s, checks: [], changes: null }));
    }
  } catch (err) {
    throwIfLost(env.lock);
    // A provider refusing the run stops its trials, this one with them (provider-stops.ts).
    const refusal = refusalOf(err);
    if (refusal !== null) env.onRefused?.(refusal);
    // Interrupted: said once the checkpoint is closed, so what it holds is read back whole.
    if (!env.signal.aborted) failure = failureOf(err, signal);
  } finally {
    await checkpoint.close();
  }
  return env.signal.aborted ? { kind: "interrupted" } : { kind: "ended", agent, failure };
}

/**
 * changes.patch of a turn that ended (with or without a failure), written once before the checks
 * run: a resume during the checks keeps it (what the checks left in the workspace is not the agent's).
 */
async function changesPhase(run: TrialRun): Promise<void> {
  const { folder, book, env } = run;
  // Setup that failed left no snapshot and ran no agent: nothing to show.
  if (book.current.changes !== null || !book.current.setupDone) return;
  await env.lock?.confirm();
  const base = book.current.changesBase ?? { unavailable: "no snapshot of the workspace was taken after its setup (set up by a rhema without changes.patch): rerun the task with --restart for one" };
  // A layered workspace can differ from its snapshot only where its layer does: git looks there alone.
  const layer = book.current.layer;
  const lower = layer === null ? undefined : folder.preparedWorkspace(layer.base);
  const onlyPaths = lower === undefined ? undefined : await layerPaths({ lower, upper: folder.layerUpper, target: folder.workspace });
  // The files the snapshot names without storing them are read from where it says (a copied fixture), else from the layer's base.
  const baseFiles = ("tree" in base ? base.baseFiles : undefined) ?? lower;
  const changes = await writeChangesPatch(changesPlace(folder, env.hostEnv, baseFiles), base, changesOf(run.trial.task), {
    path: folder.path("changes"), relativePath: folder.relativePath("changes"),
    write: (bytes) => folder.writeChangesPatch(bytes), redact: (text) => env.redactor.redact(text),
  }, onlyPaths);
  await book.update((s) => ({ ...s, changes }));
}

/** The checks of a turn that ended; a check whose sandbox did not start, or a bug, is the trial's failure. */
async function checkPhase(run: TrialRun, agent: CodingAgent): Promise<CheckPhaseOutcome> {
  try {
    return await checkTurn({
      task: run.trial.task, folder: run.folder, book: run.book, env: run.env, timeout: run.timeout, events: run.events,
      messages: agent.session.messages, sandbox: run.sandbox.placement,
    });
  } catch (err) {
    if (run.env.signal.aborted) return { kind: "interrupted" };
    return { kind: "finished", checks: [], failure: failureOf(err, run.signal) };
  }
}

/** The trial's result, built and written. A failed turn leaves no agent: its conversation and stats are in the checkpoint. */
async function outcomePhase(run: TrialRun, agent: CodingAgent | null, checked: Extract<CheckPhaseOutcome, { kind: "finished" }>): Promise<TaskRunOutcome> {
  const { trial, env, folder, book } = run;
  await env.lock?.confirm();
  const saved = agent ? null : await run.checkpoint.load();
  const messages = agent?.session.messages ?? saved?.messages ?? [];
  const stats = agent?.transcriptStats() ?? saved?.transcript?.stats ?? null;
  const cost = costOf(trial, env, stats);
  const layer = book.current.layer;
  // A layer's disk is what the trial wrote into it; a copy's, the whole copy.
  const diskBytes = await allocatedBytes(layer !== null ? folder.layerUpper : folder.workspace);
  const result = trialResult({
    trial, folder, state: book.current, messages, calls: (agent?.session ?? saved)?.calls, checks: checked.checks, failure: checked.failure,
    stats: stats && resultStats(stats, cost), cost, provider: run.provider.id,
    elapsedMs: run.activeMs(), sandbox: run.sandbox.record, finishedAt: env.now(), redactor: env.redactor,
    workspace: diskBytes === null ? null : layer !== null ? { mechanism: layer.mechanism, diskBytes } : { mechanism: "copy", diskBytes, ...(env.copyReason ? { reason: env.copyReason } : {}) },
  });
  await folder.writeResult(result);
  return { kind: "finished", result, kept: false };
}

/** The trial's compaction worker (`transcript.worker`), through its cassette when it has one; null: none. */
function workerOf(run: TrialRun): ModelProvider | null {
  const worker = run.env.workerProviderFor?.(run.trial) ?? null;
  return worker && run.cassette ? run.cassette.wrap(worker, "worker") : worker;
}

/** `env` with its requests and commands behind the lock (lock-boundaries.ts). */
function lockedEnv(env: TaskRunEnv, lock: LockGuard): TaskRunEnv {
  const worker = env.workerProviderFor;
  const locked = (provider: ModelProvider | null) => (provider ? lockedProvider(provider, lock) : null);
  return {
    ...env,
    runCommand: lockedCommandRunner(env.runCommand, lock),
    providerFor: (trial) => lockedProvider(env.providerFor(trial), lock),
    ...(worker ? { workerProviderFor: (trial: Trial) => locked(worker(trial)) } : {}),
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

/** What the trial's stats cost, priced as the run priced it; undefined when no cost is counted. */
function costOf(trial: Trial, env: TaskRunEnv, stats: TranscriptStats | null): TaskCost | undefined {
  const pricing = env.pricingFor?.(trial);
  const replayed = env.cassette !== undefined && env.cassette.mode !== "record";
  if (!pricing) return undefined;
  const pricedAs = pricedAsOf(pricing);
  // `--cassette-usage simulate`: the cache simulator's figures priced, as a scripted task's `priceAs` is.
  const simulated = pricedAs.simulated || (replayed && env.cassette?.usage === "simulate");
  return taskCost(stats, { ...pricedAs, simulated }, { ...PRICE_TABLE, pricingFile: env.pricingFile ?? null }, replayed);
}

/** An interrupted trial's figures so far: time over every run, steps, stats and cost (unpriced: null, never 0). */
function spendSoFar(trial: Trial, env: TaskRunEnv, so: { messages: readonly Message[]; stats: TranscriptStats | null; activeMs: number }): TaskSpend {
  const cost = costOf(trial, env, so.stats);
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
type CheckPhaseOutcome = { kind: "interrupted" } | { kind: "finished"; checks: CheckOutcome[]; failure: RhemaError | null };

async function checkTurn(p: CheckPhase): Promise<CheckPhaseOutcome> {
  await p.env.lock?.confirm();
  const finalAnswerPath = await p.folder.writeFinalAnswer(p.env.redactor.redact(finalAnswerOf(p.messages)));
  const changesPath = p.book.current.changes?.path ? p.folder.path("changes") : null;
  const answer = acceptedOutput(p.task, p.messages);
  const outputPath = answer === undefined ? null : await p.folder.writeOutput(p.env.redactor.redactValue(answer));
  // Inside the sandbox the run directory is hidden: the final-answer file, the patch and output.json are bound back, read-only.
  const binds = [finalAnswerPath, ...(changesPath ? [changesPath] : []), ...(outputPath ? [outputPath] : [])];
  const sandbox = p.sandbox ? { ...p.sandbox, readOnlyBinds: await Promise.all(binds.map((path) => realpath(path))) } : null;
  const ran = await runChecks(p.task, p.folder.workspace, {
    runCommand: p.env.runCommand, signal: p.env.signal, deadline: p.timeout.signal, redactor: p.env.redactor, book: p.book, now: p.env.now,
    finalAnswerPath, ...(changesPath ? { changesPath } : {}), ...(outputPath ? { outputPath } : {}), onEvent: (e) => p.events.emit(e), ...(sandbox ? { sandbox } : {}),
  });
  if (ran.kind === "interrupted") return ran;
  return { kind: "finished", checks: ran.outcomes, failure: ran.deadline ? p.timeout.during(ran.deadline) : null };
}

/**
 * The trial's state as this run starts it. Written with `contents` durability (TaskStateBook): a
 * power cut may take it back to the one before — a fresh trial then starts afresh, a resumed one
 * counts one resume fewer.
 */
async function startState(task: TaskDefinition, folder: TaskFolder, now: Date): Promise<TaskState> {
  const previous = await folder.readState();
  const state: TaskState = previous
    ? { ...previous, resumed: previous.resumed + 1 }
    : freshTaskState(task.contentHash, now.toISOString());
  await folder.writeState(state, "contents");
  return state;
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
