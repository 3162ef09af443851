/**
 * Runs a selection of tasks in one run directory: takes the lock, checks the selection against
 * the run's manifest (a subset resumes; tasks the manifest lacks need `add` or `restart`),
 * reopens what a re-run continues and refuses (or restarts) tasks whose file changed since their
 * checkpoint (run-reopening.ts), runs the tasks
 * through a p-queue, and rewrites the reports after each finished task and at the end. The
 * reports cover every task of the manifest: finished ones with their outcome, the rest as
 * interrupted, not started or not selected. An interrupt (the run's signal) lets every
 * running task checkpoint and stop; `--summary FILE` gets the final summary appended once.
 * Budgets (run-budget.ts): once the run's budget is spent no task starts — each is stopped, not
 * started — and once a matrix cell's is spent, none of that cell's trials starts. A task of
 * the manifest that the suite no longer defines (its file deleted, or its id renamed) is dropped
 * from the manifest, said (`removed: suite/id`) and listed in the summary; its folder stays until
 * `--restart`.
 * A provider that refuses the run (a dead key, a spent quota: provider-stops.ts) stops its own
 * trials as an interrupt would — the running ones checkpoint, the rest do not start, none is
 * recorded errored — while other providers' trials go on; the outcome's `refusals` say it once.
 * The lock is confirmed before each task starts and each report write, and the tasks confirm it
 * before each side effect (run-lock.ts): a runner whose lock another took while it was stalled
 * stops there — no task starts, no report is written — and the `LockLostError` ends the run (exit 3).
 */
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import PQueue from "p-queue";
import { RhemaError, type ProviderRefusal } from "../../core/errors.js";
import { ProviderStops } from "./provider-stops.js";
import { providerNameOf } from "../../core/provider.js";
import type { TaskEvent } from "../run-dir/runner-events.js";
import { RunDir, runDirRefusal, type ReportFiles } from "../run-dir/run-dir.js";
import type { LockTiming } from "../run-dir/lock-owner.js";
import type { LockGuard } from "../run-dir/run-lock.js";
import { planManifestTasks, plannedTrials, shardChange, type ManifestTask, type RunManifest, type SelectionMode } from "../run-dir/run-manifest.js";
import { ReportWriter, appendSummary, probeReportCopies, probeSummaryAppend } from "../reports/run-reports.js";
import { ReportPacer } from "../reports/report-pacer.js";
import { repositoryRelativeDir, repositoryRelativePaths } from "../reports/report-paths.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { CURRENT_HASH_SCHEME, hashUnder } from "../tasks/content-hash.js";
import { handleChangedTasks, reopenCappedTasks, reopenErroredTasks, reopenStoppedTasks, trialCountOf } from "./run-reopening.js";
import { runTask, type TaskRunEnv, type TaskRunOutcome } from "./task-executor.js";
import { SharedSetups } from "./shared-setup.js";
import { LayerMounts } from "../run-dir/layer-mounts.js";
import { findOnPath } from "../../process/sandbox-probe.js";
import { hostIdentity, inOwnUserNamespace } from "../../process/user-namespace.js";
import { chooseWorkspaceMechanism, type RunWorkspaces, type WorkspaceLayersChoice } from "./workspace-layers.js";
import { usesSharedSetup, type WorkspaceLayering } from "./task-workspace.js";
import { notStartedResult, stalledResult } from "./task-outcome.js";
import { gateOf, trialId, trialsOf, type Trial } from "../trials/trial.js";
import { EVERY_TRIAL, gateDecision } from "../trials/trial-gate.js";
import type { TrialKey } from "../trials/trial-key.js";
import { compareResults, trialKeyOf } from "../run-dir/run-dir.js";
import { STALLED_MESSAGE, untilStalled } from "./stall-net.js";
import { RunBudget, type Budgets } from "../pricing/run-budget.js";
import { type TaskResult, type TaskSpend, type TaskTrialPlan, type UnfinishedTask } from "../run-dir/task-result.js";
import { taskKey, type SkippedTask } from "../tasks/task-key.js";
import { GitMirrors } from "./git-mirror.js";
import { GIT_MIRRORS_DIR } from "../run-dir/task-folder.js";
import type { CellRecord } from "../tasks/task-variants.js";
import { type JunitCases, type QuarantineRecord, type ReportMeta } from "../reports/report-meta.js";

/** Each `task_*` progress names its trial (`trial.label`: `suite/id`, `suite/id#3` among repeats) and its task. */
export type RunProgress =
  /** `tasks`: the selected tasks; `trials`: their trials (as many as tasks without repeats). */
  | { type: "run_start"; runDir: string; runId: string; tasks: number; trials: number; resumed: boolean; workspaces?: RunWorkspaces }
  /** A trial begins (or continues) running; none for a trial whose result an earlier run left (only its `task_end`, `kept`). */
  | { type: "task_start"; task: TaskDefinition; trial: Trial }
  | { type: "task_event"; task: TaskDefinition; trial: Trial; event: TaskEvent }
  | { type: "task_end"; task: TaskDefinition; trial: Trial; result: TaskResult; kept: boolean }
  | { type: "task_interrupted"; task: TaskDefinition; trial: Trial }
  /** A trial the early stop left unstarted (`--stop-early`): its task's gate was decided without it. */
  | { type: "trial_skipped"; task: TaskDefinition; trial: Trial; reason: "gate_decided" }
  | { type: "run_end"; results: TaskResult[]; interrupted: boolean; reports: ReportFiles; unfinished?: UnfinishedTask[] };

export interface SuiteRunOptions {
  /**
   * How workspaces of fixtures and shared setups are made (`--workspace-layers`,
   * workspace-layers.ts): a layer over a shared base where one can be mounted, or copies; default auto.
   */
  workspaceLayers?: WorkspaceLayersChoice;
  /** The selected tasks; with a matrix, each task × cell (`variant` set) is one. */
  tasks: readonly TaskDefinition[];
  /** With a matrix: its cells, their overrides and hashes, as the manifest records them. */
  cells?: readonly CellRecord[];
  /** Reported as skipped test cases (only when the user asked for them). */
  skipped?: readonly SkippedTask[];
  runDir: string;
  concurrency: number;
  restartChanged: boolean;
  /** The run's shard, `i/n` (recorded in the manifest; resuming another shard's run is refused); default null, unsharded. */
  shard?: string | null;
  /** What to do when the run directory holds a run (see `SelectionMode`); default `resume`. */
  selection?: SelectionMode;
  /** Where report paths of task files outside any repository are taken relative to (the CLI's cwd). */
  cwd?: string;
  /** A file the final summary is appended to once, at the run's end or interrupt (`--summary`, `$GITHUB_STEP_SUMMARY`). */
  summaryAppend?: string;
  /**
   * Continue errored tasks (provider outage, timeout) from their checkpoints, and run a failed
   * setup again in a fresh workspace, instead of keeping their results.
   */
  retryErrored?: boolean;
  /**
   * Whether a task of the run directory's manifest is still in the suite (its file there and
   * defining it: suite-loader.ts `taskStillDefined`); one that is not is dropped from the
   * manifest. Absent: every one is.
   */
  stillInSuite?(task: ManifestTask): Promise<boolean>;
  reportCopies?: Partial<ReportFiles>;
  signal: AbortSignal;
  /** Aborted by the edge when the event loop emptied with the run unfinished (stall-net.ts): each running task is recorded errored with its reason. */
  stalled?: AbortSignal;
  pid: number;
  /** The run directory lock's stale limit and heartbeat; default 30 s and 5 s. */
  lockTiming?: LockTiming;
  env: Omit<TaskRunEnv, "runDir" | "signal" | "onEvent" | "budget" | "lock" | "sharedSetups">;
  /** The run's budgets (`--max-cost`, `--max-tokens`), across every task of the run. */
  budget?: Budgets;
  /** `--repeats`: the trials of each task that sets no `repeats:`; default 1. */
  repeats?: number;
  /** `--min-pass-rate` for tasks that set no `pass.rate`, and `--gate`: what the rate gates judge (the rate, or its Wilson lower bound). */
  gate?: { minPassRate?: number; judgedOn?: "rate" | "lower" };
  /** `--stop-early`: once a task's gate is decided, its unstarted trials are skipped (`gate_decided`), now and on resume. */
  stopEarly?: boolean;
  /** The k's of pass@k and pass^k the reports show (`--pass-at`). */
  passAt?: readonly number[];
  /** The JUnit testcase granularity (`--junit-cases`); default task. */
  junitCases?: JunitCases;
  /** The quarantine list (`--quarantine`): recorded in the reports, whose tasks' failures do not fail the gate. */
  quarantine?: QuarantineRecord;
  onProgress(progress: RunProgress): void;
  /** A line for the user (a task kept stopped on its budget or step cap, a task removed from the suite). */
  onNote?(note: string): void;
}

export interface SuiteRunOutcome {
  /** The selected tasks' trials' results (kept or new), in trial order (suite, id, variant, repeat). */
  results: TaskResult[];
  /** Each selected task's planned trials and gate: what judges its results. */
  plans: TaskTrialPlan[];
  interrupted: boolean;
  reports: ReportFiles;
  /** The run's trials without a result (the reports list them too). */
  unfinished: UnfinishedTask[];
  /** The quarantine list the run was given, as the reports record it; absent: none. */
  quarantine?: QuarantineRecord;
  /** The providers that refused the run (a dead key, a spent quota), first first: their trials are left unfinished. */
  refusals: ProviderRefusal[];
}

/** A run directory made before trials (layout 1): reports, merge and replay read it; a run does not resume it. */
export class LayoutOneRunError extends RhemaError {
  constructor(runDir: string) {
    super("usage", `${runDir} holds a run made before trials (run-directory layout 1), which this rhema reads (report merge, bench replay) but does not resume: ` +
      "start it over with --restart, or pass another --out");
  }
}

/** A selection with tasks the run directory's manifest does not hold (a different task set). */
export class SelectionOutsideRunError extends RhemaError {
  readonly missing: readonly ManifestTask[];
  constructor(runDir: string, missing: readonly ManifestTask[], removed: readonly ManifestTask[] = []) {
    const list = missing.map((t) => `  ${taskKey(t)} (${t.file})`).join("\n");
    // A renamed task is a removed one and a new one: say both, so the rename is recognised.
    const gone = removed.length === 0 ? ""
      : `and the suite no longer defines these (they leave the run once it goes on):\n${removed.map((t) => `  ${taskKey(t)} (${t.file})`).join("\n")}\n`;
    super("task_changed", `${runDir} holds a run without these selected tasks:\n${list}\n${gone}` +
      "add them to that run with --add, start the run over with --restart, or pass another --out");
    this.missing = missing;
  }
}

export async function runSuite(opts: SuiteRunOptions): Promise<SuiteRunOutcome> {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
    throw new RhemaError("usage", `Expected --concurrency to be a whole number from 1 and up, got ${opts.concurrency}`);
  }
  const runDir = new RunDir(opts.runDir);
  // A folder that is not a run directory (a project folder an empty --out resolved to) is
  // refused before anything is written in it or anywhere else.
  const refusal = runDirRefusal(opts.runDir, await runDir.inspect());
  if (refusal !== null) throw new RhemaError("usage", refusal);
  // A report path rhema cannot write is found now, before the lock and before any task runs.
  await probeReportCopies(opts.reportCopies ?? {}, opts.pid);
  if (opts.summaryAppend !== undefined) await probeSummaryAppend(opts.summaryAppend, opts.pid);
  const lock = await runDir.lock(opts.pid, opts.env.now(), opts.lockTiming);
  try {
    const selection = opts.selection ?? "resume";
    // Before anything is read or removed: a killed run's mounts, which a removal would delete through.
    await new LayerMounts(opts.runDir).unmountLeftovers();
    if (selection === "restart") await runDir.wipeRun();
    const previous = await runDir.readManifest();
    if (previous !== null && previous.layout !== 2) throw new LayoutOneRunError(opts.runDir);
    const changedShard = previous === null ? null : shardChange(opts.runDir, previous, opts.shard ?? null);
    if (changedShard !== null) throw new RhemaError("usage", changedShard);
    // The tasks' hashes in the scheme of the run directory's hashes (an old one keeps its own).
    const hashScheme = previous?.hashScheme ?? CURRENT_HASH_SCHEME;
    opts = { ...opts, tasks: opts.tasks.map((task) => ({ ...task, contentHash: hashUnder(task, hashScheme) })) };
    const removed = await removedTasks(previous?.tasks ?? [], opts);
    const kept = previous ? previous.tasks.filter((task) => !removed.includes(task)) : null;
    const plan = planManifestTasks(kept, opts.tasks.map((task) => manifestEntry(task, opts)), selection);
    if (plan.kind === "outside") throw new SelectionOutsideRunError(opts.runDir, plan.missing, removed);
    if (kept !== null) checkFewerTrials(opts, kept);
    await handleChangedTasks(opts, runDir);
    if (opts.retryErrored) await reopenErroredTasks(opts, runDir);
    await reopenCappedTasks(opts, runDir);
    await reopenStoppedTasks(opts, runDir);
    const manifest = await updateManifest(opts, runDir, previous, { tasks: plan.tasks, hashScheme });
    for (const task of removed) opts.onNote?.(removedNote(task));
    const trials = opts.tasks.reduce((n, task) => n + trialCountOf(task, opts), 0);
    const workspaces = await chooseRunWorkspaces(opts);
    opts.onProgress({
      type: "run_start", runDir: opts.runDir, runId: manifest.runId, tasks: opts.tasks.length, trials, resumed: manifest.resumes > 0,
      ...(workspaces !== null ? { workspaces: workspaces.shown } : {}),
    });
    return await runQueue(opts, runDir, manifest, lock, removed, workspaces);
  } finally {
    await lock.release();
  }
}

async function runQueue(opts: SuiteRunOptions, runDir: RunDir, manifest: RunManifest, lock: LockGuard, removed: readonly ManifestTask[], workspaces: ChosenWorkspaces | null): Promise<SuiteRunOutcome> {
  const writer = new ReportWriter(opts.runDir, opts.reportCopies ?? {});
  const selectedTasks = new Set(opts.tasks.map(taskKey));
  const trials = opts.tasks.flatMap((task) => trialsOf(task, trialCountOf(task, opts)));
  const selected = new Set(trials.map((t) => trialId(t.key)));
  const plans = manifest.tasks.map(trialPlanOf);
  const planOf = new Map(plans.map((p) => [taskKey(p), p]));
  const results = new Map<string, TaskResult>(await unselectedResults(runDir, manifest, selectedTasks));
  /**
   * Results an earlier run left for the selected trials, read once: kept as they are when their
   * turn comes (read first, so the early stop sees them all). A result that cannot be read is left
   * for its turn, which reads it again and stops the run with the file's error.
   */
  const earlier = new Map<string, TaskResult>();
  const unreadable = new Set<string>();
  for (const trial of trials) {
    const found = await runDir.trial(trial.key).readResult().catch(() => (unreadable.add(trialId(trial.key)), null));
    if (found) earlier.set(trialId(trial.key), found);
  }
  /** What trials without a result spent before an earlier run was interrupted (this run's interrupts replace them). */
  const earlierSpent = await interruptedSpends(runDir, manifest, results);
  /** Trials interrupted while they ran, with what each spent so far. */
  const interruptedKeys = new Map<string, TaskSpend>();
  /** Trials the early stop left unstarted. */
  const gateDecided = new Set<string>();
  /** The providers that refused the run, and the trials each left unfinished. */
  const stops = new ProviderStops();
  const refused = new Map<string, ProviderRefusal>();
  const clock = runClock(opts, runDir, manifest);
  const skipped = opts.skipped?.filter((task) => !manifest.tasks.some((m) => taskKey(m) === taskKey(task)));
  const displayFiles = await repositoryRelativePaths([...manifest.tasks, ...(skipped ?? [])].map((t) => t.file), opts.cwd ?? null);
  const runDirShown = await repositoryRelativeDir(runDir.path, opts.cwd ?? null);
  let interrupted = false;
  const view = () => reportedTrials(manifest, results, { interrupted: interruptedKeys, gateDecided, selected, earlierSpent, refused });
  const meta = (unfinished: UnfinishedTask[]): ReportMeta => ({
    runId: manifest.runId, startedAt: manifest.startedAt, finishedAt: opts.env.now().toISOString(),
    wallTimeMs: clock.wallTimeMs(), displayFiles, unfinished, shard: manifest.shard ?? null, ...(runDirShown !== null ? { runDirShown } : {}),
    ...(skipped ? { skipped } : {}),
    ...(removed.length > 0 ? { removed: removed.map(({ suite, id, file }) => ({ suite, id, file })) } : {}),
    trialPlans: plans,
    ...(opts.passAt && opts.passAt.length > 0 ? { passAt: opts.passAt } : {}),
    ...(opts.junitCases ? { junitCases: opts.junitCases } : {}),
    ...(opts.quarantine ? { quarantine: opts.quarantine } : {}),
    ...(stops.all().length > 0 ? { refusals: stops.all() } : {}),
  });
  // Each write also records the run's wall time in the manifest, so a kill loses at most one write's worth.
  const writeAll = async (final = false): Promise<TaskResult[]> => {
    const { all, unfinished } = view();
    await lock.confirm();
    await clock.record();
    await writer.write(all, meta(unfinished), final);
    return all;
  };
  const budget = new RunBudget(opts.budget ?? {}, cellBudgets(opts.tasks));
  if (budget.limited) await budget.seed(runDir, manifestTrials(manifest));
  const sharedSetups = new SharedSetups(opts.runDir, {
    now: opts.env.now, signal: AbortSignal.any([opts.signal, lock.lost]), retryFailed: opts.retryErrored ?? false, pid: opts.pid,
    redact: (text) => opts.env.redactor.redact(text),
  });
  const layers = layeringOf(opts, sharedSetups, workspaces);
  const env: TaskRunEnv = {
    ...opts.env, runDir: opts.runDir, signal: opts.signal, budget, lock, sharedSetups, ...layers, restartChanged: opts.restartChanged,
    gitMirrors: opts.env.gitMirrors ?? new GitMirrors(join(opts.runDir, GIT_MIRRORS_DIR), opts.env.hostEnv),
    onEvent: (trial, event) => opts.onProgress({ type: "task_event", task: trial.task, trial, event }),
  };
  /** The providers a trial asks (its model's, its compaction worker's): a refusal by one stops it. */
  const providersOf = (trial: Trial): string[] =>
    [env.providerFor(trial).id, env.workerProviderFor?.(trial)?.id].flatMap((id) => (id ? [providerNameOf(id)] : []));
  /** The trial's env: stopped by the run's interrupt or its providers' refusal, and telling the refusals it meets. */
  const trialEnv = (providers: readonly string[]): TaskRunEnv => ({
    ...env, signal: AbortSignal.any([opts.signal, ...providers.map((p) => stops.signalFor(p))]),
    // Redacted once, here: the provider's words reach the reports and every edge (a proxy may echo the key).
    onRefused: (refusal) => void stops.stop({ ...refusal, detail: refusal.detail === null ? null : opts.env.redactor.redact(refusal.detail) }),
  });
  /** A trial its cell's or the run's spent budget keeps from starting (one that began in an earlier run goes on, to stop at its first request). */
  const notStarted = async (trial: Trial): Promise<TaskResult | null> => {
    const spent = budget.spentFor(trial.key);
    const folder = runDir.trial(trial.key);
    if (spent === null || (await folder.readState()) !== null) return null;
    const result = notStartedResult({ trial, folder, provider: env.providerFor(trial).id, at: env.now() }, spent);
    await folder.writeResult(result);
    return result;
  };
  /** With `--stop-early`, whether the trial's task's gate is decided by its counted results so far. */
  const decidedWithout = async (trial: Trial): Promise<boolean> => {
    if (!opts.stopEarly) return false;
    if ((await runDir.trial(trial.key).readState()) !== null) return false;
    const plan = planOf.get(taskKey(trial.task))!;
    // This run's results and the ones an earlier run left (not yet reached by the queue): a resume decides as the run did.
    const counted = trialsOf(trial.task, plan.trials).flatMap((t) => results.get(trialId(t.key)) ?? earlier.get(trialId(t.key)) ?? []);
    const passes = counted.filter((r) => r.status === "passed").length;
    return gateDecision(plan.gate, { passes, counted: counted.length, planned: plan.trials }).decided;
  };
  // The reports while the run goes on: written behind the trials, paced (report-pacer.ts).
  const reports = new ReportPacer(() => writeAll());
  const finish = async (trial: Trial, result: TaskResult, kept: boolean): Promise<void> => {
    results.set(trialId(trial.key), result);
    opts.onProgress({ type: "task_end", task: trial.task, trial, result, kept });
    reports.ask();
  };
  const runOne = async (trial: Trial): Promise<void> => {
    if (opts.signal.aborted) {
      interrupted = true;
      return;
    }
    await lock.confirm();
    // A trial finished in an earlier run is kept as it is: no `task_start`, only its end, said kept.
    const kept = earlier.get(trialId(trial.key)) ?? (unreadable.has(trialId(trial.key)) ? await runDir.trial(trial.key).readResult() : null);
    if (kept) return finish(trial, kept, true);
    if (await decidedWithout(trial)) {
      gateDecided.add(trialId(trial.key));
      opts.onProgress({ type: "trial_skipped", task: trial.task, trial, reason: "gate_decided" });
      reports.ask();
      return;
    }
    const providers = providersOf(trial);
    const refusedFirst = stops.refusalAmong(providers);
    if (refusedFirst) {
      refused.set(trialId(trial.key), refusedFirst);
      return;
    }
    const stopped = await notStarted(trial);
    if (stopped) return finish(trial, stopped, false);
    opts.onProgress({ type: "task_start", task: trial.task, trial });
    // Only the trials running when the loop emptied are stuck; one started after runs as any does.
    const ran = await untilStalled(runTask(trial, trialEnv(providers)), opts.stalled?.aborted ? undefined : opts.stalled);
    // The trial waits for what can never come: recorded errored (`internal`), so the run ends with its reports.
    const outcome = ran === "stalled" ? await recordStalled(trial, opts.stalled?.reason, runDir, env) : ran;
    if (outcome.kind === "interrupted") {
      // Stopped by its provider's refusal, not the run's interrupt: the run goes on with other providers' trials.
      const refusal = opts.signal.aborted ? null : stops.refusalAmong(providers);
      if (refusal) refused.set(trialId(trial.key), refusal);
      else interrupted = true;
      interruptedKeys.set(trialId(trial.key), outcome.spent);
      opts.onProgress({ type: "task_interrupted", task: trial.task, trial });
      return;
    }
    await finish(trial, outcome.result, outcome.kept);
  };
  // A trial that throws (rather than finishing errored: a corrupt result.json, a full disk)
  // stops the run: no further trial starts, and the error is rethrown once the running ones
  // are done, so the caller releases the lock and reports it instead of crashing.
  const thrown: unknown[] = [];
  const queue = new PQueue({ concurrency: opts.concurrency });
  for (const trial of trials) {
    void queue.add(async () => {
      if (thrown.length > 0) return;
      try {
        await runOne(trial);
      } catch (err) {
        thrown.push(err);
      }
    });
  }
  await queue.onIdle();
  // The last paced write done (its failure, if any, is the run's) before the final one.
  await reports.settle().catch((err: unknown) => thrown.push(err));
  if (thrown.length > 0) throw thrown[0];
  interrupted ||= opts.signal.aborted;
  const { unfinished } = view();
  const all = await writeAll(true);
  if (opts.summaryAppend !== undefined) await appendSummary(opts.summaryAppend, (await runDir.readReport("summary")) ?? "");
  const outcome = {
    results: all.filter((r) => selected.has(trialId(trialKeyOf(r)))), plans: plans.filter((p) => selectedTasks.has(taskKey(p))),
    interrupted, reports: runDir.reports, unfinished, ...(opts.quarantine ? { quarantine: opts.quarantine } : {}), refusals: stops.all(),
  };
  opts.onProgress({ type: "run_end", results: outcome.results, interrupted, reports: outcome.reports, unfinished });
  return outcome;
}

async function recordStalled(trial: Trial, reason: unknown, runDir: RunDir, env: TaskRunEnv): Promise<TaskRunOutcome> {
  const error = reason instanceof RhemaError ? reason : new RhemaError("internal", STALLED_MESSAGE);
  const folder = runDir.trial(trial.key);
  const result = stalledResult({ trial, folder, provider: env.providerFor(trial).id, at: env.now() }, error, env.redactor);
  await folder.writeResult(result);
  return { kind: "finished", result, kept: false };
}

/** Each matrix cell's budget by variant id, as its tasks carry it (every task of a cell carries the same). */
function cellBudgets(tasks: readonly TaskDefinition[]): Map<string, Budgets> {
  const cells = new Map<string, Budgets>();
  for (const task of tasks) if (task.variant != null && task.cellBudget !== undefined) cells.set(task.variant, task.cellBudget);
  return cells;
}

function trialPlanOf(task: ManifestTask): TaskTrialPlan {
  return { suite: task.suite, id: task.id, ...(task.variant !== undefined ? { variant: task.variant } : {}), trials: task.trials ?? 1, gate: task.gate ?? EVERY_TRIAL };
}

/** Every trial the manifest plans. */
function manifestTrials(manifest: Pick<RunManifest, "tasks">): TrialKey[] {
  return manifest.tasks.flatMap(plannedTrials);
}

/**
 * What the reports cover: every planned trial's result, and each trial without one as
 * interrupted (it was running; with what it spent so far), skipped by the early stop, not started
 * (selected, the run stopped first) or not selected.
 * Mid-run, a running trial shows as not started: what a kill at that moment would leave.
 */
export function reportedTrials(
  manifest: Pick<RunManifest, "tasks">, results: ReadonlyMap<string, TaskResult>,
  marks: {
    interrupted: ReadonlyMap<string, TaskSpend>; gateDecided?: ReadonlySet<string>; selected: ReadonlySet<string>; earlierSpent?: ReadonlyMap<string, TaskSpend>;
    /** Trials a provider's refusal left unfinished (not started, or stopped while they ran). */
    refused?: ReadonlyMap<string, ProviderRefusal>;
  },
): { all: TaskResult[]; unfinished: UnfinishedTask[] } {
  const unfinished: UnfinishedTask[] = [];
  const fileOf = new Map(manifest.tasks.map((t) => [taskKey(t), t.file]));
  for (const key of manifestTrials(manifest)) {
    const id = trialId(key);
    if (results.has(id)) continue;
    const now = marks.interrupted.get(id);
    const spent = now ?? marks.earlierSpent?.get(id);
    const state = now ? "interrupted" : marks.gateDecided?.has(id) ? "gate_decided" : marks.selected.has(id) ? "not_started" : "not_selected";
    const refusal = marks.refused?.get(id);
    unfinished.push({
      suite: key.suite, id: key.id, file: fileOf.get(taskKey(key))!, trial: { repeat: key.repeat, variant: key.variant }, state, ...(spent ? { spent } : {}),
      ...(refusal ? { refusedBy: { provider: refusal.provider, reason: refusal.reason } } : {}),
    });
  }
  return { all: [...results.values()].sort(compareResults), unfinished: unfinished.sort(compareResults) };
}

/** What each planned trial without a result had spent when a run was last interrupted while it ran (its task state's record). */
async function interruptedSpends(runDir: RunDir, manifest: RunManifest, results: ReadonlyMap<string, TaskResult>): Promise<Map<string, TaskSpend>> {
  const found = new Map<string, TaskSpend>();
  for (const key of manifestTrials(manifest)) {
    if (results.has(trialId(key))) continue;
    const spent = (await runDir.trial(key).readState())?.interruptedSpent ?? null;
    if (spent !== null) found.set(trialId(key), spent);
  }
  return found;
}

/** Results already on disk for the trials of the manifest's tasks that this run did not select. */
async function unselectedResults(runDir: RunDir, manifest: RunManifest, selectedTasks: ReadonlySet<string>): Promise<[string, TaskResult][]> {
  const found: [string, TaskResult][] = [];
  for (const key of manifestTrials(manifest)) {
    if (selectedTasks.has(taskKey(key))) continue;
    const result = await runDir.trial(key).readResult();
    if (result !== null) found.push([trialId(key), result]);
  }
  return found;
}

/** The run's wall time: what earlier invocations recorded plus this one's, written back at each report write. */
function runClock(opts: SuiteRunOptions, runDir: RunDir, manifest: RunManifest) {
  const startedMs = opts.env.now().getTime();
  let writing: Promise<void> = Promise.resolve();
  const wallTimeMs = () => manifest.activeMs + Math.max(0, opts.env.now().getTime() - startedMs);
  return {
    wallTimeMs,
    record(): Promise<void> {
      writing = writing.catch(() => undefined).then(() => runDir.writeManifest({ ...manifest, activeMs: Math.round(wallTimeMs()) }));
      return writing;
    },
  };
}

function manifestEntry(task: TaskDefinition, opts: Pick<SuiteRunOptions, "repeats" | "gate">): ManifestTask {
  return {
    suite: task.suite, id: task.id, ...(task.variant !== undefined ? { variant: task.variant } : {}),
    file: task.file, contentHash: task.contentHash, trials: trialCountOf(task, opts), gate: gateOf(task, opts.gate ?? {}),
  };
}

/**
 * A selected task asking for fewer trials than the run directory planned for it is refused
 * (exit 2): its extra trials' results would silently leave the figures. More trials add trials.
 */
function checkFewerTrials(opts: SuiteRunOptions, previous: readonly ManifestTask[]): void {
  const before = new Map(previous.map((t) => [taskKey(t), t.trials ?? 1]));
  const fewer = opts.tasks.filter((task) => trialCountOf(task, opts) < (before.get(taskKey(task)) ?? 0));
  if (fewer.length === 0) return;
  const list = fewer.map((t) => `  ${taskKey(t)}: ${before.get(taskKey(t))} planned, ${trialCountOf(t, opts)} asked (${t.file})`).join("\n");
  throw new RhemaError("usage", `${opts.runDir} planned more trials of these tasks than this run asks for:\n${list}\n` +
    "ask for as many (repeats: or --repeats), start the run over with --restart, or pass another --out");
}

/** The manifest's tasks the suite no longer defines (`stillInSuite`): none for a new or restarted run. */
async function removedTasks(previous: readonly ManifestTask[], opts: SuiteRunOptions): Promise<ManifestTask[]> {
  const stillInSuite = opts.stillInSuite;
  if (!stillInSuite || opts.selection === "restart") return [];
  const removed: ManifestTask[] = [];
  for (const task of previous) if (!(await stillInSuite(task))) removed.push(task);
  return removed;
}

/** The line a task dropped from the run says. */
function removedNote(task: ManifestTask): string {
  return `removed: ${taskKey(task)} (its task file ${task.file} no longer defines it; it leaves the run's reports, its folder stays until --restart)`;
}

async function updateManifest(
  opts: SuiteRunOptions, runDir: RunDir, previous: RunManifest | null, run: Pick<RunManifest, "tasks" | "hashScheme">,
): Promise<RunManifest> {
  const manifest: RunManifest = {
    version: 1,
    layout: 2,
    runId: previous?.runId ?? randomUUID(),
    startedAt: previous?.startedAt ?? opts.env.now().toISOString(),
    resumes: previous ? previous.resumes + 1 : 0,
    activeMs: previous?.activeMs ?? 0,
    hashScheme: run.hashScheme,
    shard: opts.shard ?? null,
    variants: (opts.cells ?? []).map((cell) => cell.variant),
    ...(opts.cells && opts.cells.length > 0 ? { cells: [...opts.cells] } : {}),
    tasks: run.tasks,
  };
  await runDir.writeManifest(manifest);
  return manifest;
}

/** The run's choice of workspaces, as shown, and the fuse-overlayfs it found. */
interface ChosenWorkspaces {
  shown: RunWorkspaces;
  fuseBinary: string | null;
}

/**
 * How the run lays workspaces over bases, when some task does (a fixture, a shared setup, a git
 * commit): the mechanism tried once (workspace-layers.ts). Without such a task (only empty
 * workspaces), nothing is probed: null.
 */
async function chooseRunWorkspaces(opts: SuiteRunOptions): Promise<ChosenWorkspaces | null> {
  const layered = opts.tasks.some((task) => task.workspace.git !== undefined || task.workspace.from != null || usesSharedSetup(task));
  if (!layered) return null;
  const fuseBinary = await findOnPath("fuse-overlayfs", opts.env.hostEnv.PATH ?? "");
  const mechanism = await chooseWorkspaceMechanism(opts.runDir, opts.workspaceLayers ?? "auto", { uid: process.getuid?.() ?? -1, fuseBinary });
  // Copies asked for by name need no reason.
  const shown: RunWorkspaces = mechanism.kind === "copy" ? { mechanism: "copy", reason: opts.workspaceLayers === "copy" ? null : mechanism.reason } : { mechanism: mechanism.kind, reason: null, ...(inOwnUserNamespace() ? { userNamespaceOf: hostIdentity().uid } : {}) };
  return { shown, fuseBinary };
}

/** The run's layered workspaces (or, for copies, why): what each trial is given. */
function layeringOf(opts: SuiteRunOptions, sharedSetups: SharedSetups, chosen: ChosenWorkspaces | null): { layering?: WorkspaceLayering; copyReason?: string } {
  if (chosen === null) return {};
  const { shown } = chosen;
  if (shown.mechanism === "copy") return shown.reason === null ? {} : { copyReason: shown.reason };
  return {
    layering: {
      mechanism: shown.mechanism, mounts: new LayerMounts(opts.runDir, chosen.fuseBinary ?? undefined),
      fixtureBase: (from) => sharedSetups.fixtureBase(from),
      gitBase: (mirror, commit) => sharedSetups.gitBase(mirror, commit, opts.env.hostEnv),
    },
  };
}
