/**
 * One run as its edges ask for it (`rhema run` and the GitHub Action): load, then plan each task
 * once (runner/plan/: models, pricing, policies — any problem is a `usage` error before a task
 * starts; `rhema validate` plans the same way), then settle each task's sandbox (bwrap probed once: a required sandbox that cannot be
 * made is exit 3 before a task starts; an `auto` one that cannot is a loud warning), then run the
 * suite in the run directory, resuming what an earlier run left. The one
 * implementation of a run behind both edges; they differ only in how they read the request and
 * render the outcome.
 */
import { resolve } from "node:path";
import { RhemaError } from "../../core/errors.js";
import type { ProviderEnv } from "../../providers/provider-factory.js";
import { SecretRedactor } from "../run-dir/secret-redactor.js";
import { processCommandRunner } from "./command-runner.js";
import { loadMatrixFile } from "../tasks/matrix-file.js";
import { formatShard, loadTasks, parseShard, taskStillDefined } from "../tasks/suite-loader.js";
import type { InputCaps } from "../tasks/task-file.js";
import { runSuite, type RunProgress, type SuiteRunOutcome } from "./suite-runner.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { preloadBashParser } from "../../policy/shell/grammar/bash-parser.js";
import { taskKey } from "../tasks/task-key.js";
import type { WorkspaceLayersChoice } from "./workspace-layers.js";
import { probeSandbox } from "../../process/sandbox-probe.js";
import { probeReaper } from "../../process/subreaper.js";
import { chooseSandbox, needsProbe, type SandboxMode, type SandboxUse } from "../../process/sandbox-mode.js";
import type { TaskSandboxSetting } from "../tasks/task-sandbox.js";
import type { TaskSandboxRun } from "./task-executor.js";
import type { LockTiming } from "../run-dir/lock-owner.js";
import { checkRunPaths } from "./run-paths.js";
import { settleCassette } from "./cassette-flag.js";
import { lockCassetteFolder } from "./cassette-lock.js";
import type { CassetteSettings } from "./trial-cassette.js";
import { counted } from "../../core/counted.js";
import { parseLimitFlag, planSuite } from "../plan/plan-suite.js";
import type { TaskPlan } from "../plan/task-plan.js";
import { trialId } from "../trials/trial.js";
import type { JunitCases, QuarantineRecord } from "../reports/report-meta.js";
import { loadQuarantineFile, quarantineEntries, unknownQuarantineWarnings } from "../tasks/quarantine-file.js";

/** What to run; the fields are `rhema run`'s flags (the action's inputs map onto them). */
export interface RunRequest {
  paths: string[];
  out: string;
  concurrency: number;
  policy?: string;
  provider?: string;
  model?: string;
  /** Endpoint for `provider`/`model` (a compatible server or a proxy); the environment's otherwise. */
  baseUrl?: string;
  filter: string[];
  tag: string[];
  /** `i/n`. */
  shard?: string;
  /** `--matrix FILE` (relative to cwd): every selected task runs as each of the matrix's cells. */
  matrix?: string;
  junit?: string;
  stats?: string;
  summary?: string;
  restartChanged: boolean;
  /** Add selected tasks the run directory's manifest lacks. */
  add?: boolean;
  /** Wipe the run directory's tasks and manifest first. */
  restart?: boolean;
  retryErrored: boolean;
  reportSkipped: boolean;
  maxSteps?: number;
  /** A duration: 90s, 10m, 1h; `none`: no limit. */
  timeout?: string;
  /** `--stream-idle`: the longest a model's stream may send no content (a duration, or `none`); default 5m. A task's `limits.streamIdle` wins. */
  streamIdle?: string;
  allowEnv: string[];
  /** Caps on prompt and image sizes (the CLI reads overrides from its environment). */
  caps?: InputCaps;
  /** The run's budgets, across every task: dollars (`--max-cost`) and tokens (`--max-tokens`). */
  maxCost?: number;
  maxTokens?: number;
  /** `--pricing FILE`: a pricing file whose models add to or override the bundled price table (relative to cwd). */
  pricing?: string;
  /** `--calibration FILE`: every task counts its tokens with this calibration's factors (relative to cwd). */
  calibration?: string;
  /** `--sandbox`: the least sandbox the run asks for (a policy or task may ask for more); default auto. */
  sandbox?: SandboxMode;
  /** `--workspace-layers`: layered workspaces or copies (workspace-layers.ts); default auto. */
  workspaceLayers?: WorkspaceLayersChoice;
  /** `--repeats`: trials of each task that sets no `repeats:`; default 1. */
  repeats?: number;
  /** `--min-pass-rate`: the share of counted trials that must pass, for tasks that set no `pass.rate`. */
  minPassRate?: number;
  /** `--gate`: a pass rate judged on the rate itself (default) or its Wilson lower bound. */
  gate?: "rate" | "lower";
  /** `--stop-early`: skip a task's unstarted trials once its gate is decided. */
  stopEarly?: boolean;
  /** `--pass-at`: the k's of pass@k and pass^k the reports show. */
  passAt?: number[];
  /** `--junit-cases`: a JUnit testcase per task (default) or per trial. */
  junitCases?: JunitCases;
  /** `--quarantine FILE`: tasks whose failures are reported but do not fail the gate (relative to cwd). */
  quarantine?: string;
  /** `--cassette DIR`: record each trial's model exchanges there, or replay them (relative to cwd). */
  cassette?: string;
  /** `--cassette-mode`: record, strict, hybrid or record-missing; default strict when DIR holds cassettes, else record. */
  cassetteMode?: string;
  /** `--cassette-usage`: recorded (default) or simulate; a replay's only. */
  cassetteUsage?: string;
  /** The run directory lock's stale limit and heartbeat (the CLI shortens them for tests: `RHEMA_LOCK_STALE_MS`); default 30 s and 5 s. */
  lockTiming?: LockTiming;
}

/** What a run needs from the process, handed in by the edge. */
export interface RunContext {
  cwd: string;
  env: ProviderEnv;
  pid: number;
  /** Aborted when the run must checkpoint and stop. */
  interrupt: AbortSignal;
  /** Aborted when the process's event loop emptied with the run unfinished (stall-net.ts). */
  stalled?: AbortSignal;
  /** A line for the user (e.g. which default policy applies). */
  onNote(note: string): void;
  onProgress(progress: RunProgress): void;
  /**
   * The run's secret redactor, when the edge made one for its own output too (one rule for the
   * streams and the files); default: one made from `env`. Notes are redacted with it; task events
   * and results reach `onProgress` redacted by it.
   */
  redactor?: SecretRedactor;
}

export interface RunRequestOutcome extends SuiteRunOutcome {
  /** The run directory, absolute. */
  runDir: string;
  /** How many tasks were selected to run (after filter, tag and shard). */
  selected: number;
  /** Set when tasks asked for `auto` ran unsandboxed because bwrap cannot run here: the warning given. */
  sandboxWarning: string | null;
}

/** Loads, checks and runs `request`; throws a RhemaError (code `usage` for bad input) before anything runs. */
export async function runRequest(request: RunRequest, context: RunContext): Promise<RunRequestOutcome> {
  const redactor = context.redactor ?? new SecretRedactor(context.env);
  const onNote = context.onNote;
  context = { ...context, onNote: (note) => onNote(redactor.redact(note)) };
  if (request.add && request.restart) throw new RhemaError("usage", "Expected at most one of --add and --restart, got both");
  const shard = request.shard !== undefined ? parseShard(request.shard) : null;
  const timeoutMs = parseLimitFlag("--timeout", request.timeout);
    // The sandbox probe (two bwrap processes, probeSandbox keeps its answer) starts now, to run
  // while the task files load, unless the flag turns the sandbox off (then only a policy or task
  // file could ask for it, and settleSandboxes probes then).
  if (request.sandbox !== "off") void probeSandbox(sandboxSearchPath(context.env.PATH));
  const matrix = request.matrix === undefined ? null : await loadMatrixFile(resolve(context.cwd, request.matrix));
  const loaded = await loadTasks(request.paths, { cwd: context.cwd, filters: request.filter, tags: request.tag, shard, matrix, exclude: [resolve(context.cwd, request.out)], ...(request.caps ? { caps: request.caps } : {}) });
  // Paths, --filter and --tag that select nothing are a mistake; a shard whose share of a
  // selection is nothing is not (a matrix sized once, a suite or tags shrinking it): it runs no
  // task and writes empty reports, so the job passes and its reports merge.
  if (loaded.selectedInAllShards === 0) {
    throw new RhemaError("usage", `no task to run: ${request.paths.join(" ")} selected none${request.filter.length || request.tag.length ? " (after --filter/--tag)" : ""}`);
  }
  if (loaded.tasks.length === 0 && shard !== null) {
    context.onNote(`shard ${formatShard(shard)} selected nothing (the ${counted(loaded.selectedInAllShards, "selected task")} ${loaded.selectedInAllShards === 1 ? "falls" : "fall"} in other shards): no task runs, its reports are empty`);
  }
  // Each task resolved once into its plan (model, worker, pricing, approval, sandbox, commands' environment):
  // every problem found here is exit 2, before anything runs.
  const cassette = await settleCassette(request, context.cwd);
  const plan = await planSuite(loaded.tasks, { ...request, ...(request.pricing !== undefined ? { pricing: request.pricing } : {}), offline: cassette?.mode === "strict" }, context);
  if (cassette !== null) context.onNote(`cassettes: ${cassetteNote(cassette)}`);
  for (const note of plan.notes) context.onNote(note);
  const quarantine = request.quarantine === undefined ? undefined
    : await readQuarantine(resolve(context.cwd, request.quarantine), [...loaded.tasks, ...loaded.skipped, ...loaded.otherShards], context.onNote);
  // The first shell decision needs the bash grammar (~100 ms to compile): start it now, beside
  // the sandbox probe, the workspace copies and the first model request, when some task's
  // policy may run commands.
  if (plan.mayRunCommands) preloadBashParser();
  const sandbox = await settleSandboxes(new Map([...plan.plans].map(([key, p]) => [key, p.sandbox])), context.env.PATH);
  if (sandbox.warning !== null) context.onNote(sandbox.warning);
  const reaperNote = await unsandboxedReaperNote(sandbox.runs.values());
  if (reaperNote !== null) context.onNote(reaperNote);

  // The one map the run's services are read from: a task's key to its plan.
  const planOf = (task: TaskDefinition): TaskPlan => plan.plans.get(taskKey(task))!;
  const commands = plan.commands;
  const runDir = resolve(context.cwd, request.out);
  const copies = reportCopies(request, context.cwd);
  const summaryAppend = request.summary ? resolve(context.cwd, request.summary) : undefined;
  await checkRunPaths({
    runDir, tasks: loaded.tasks,
    ...(cassette ? { folders: new Map([["--cassette", cassette.dir]]) } : {}),
    outputs: new Map([
      ...(copies.junit ? [["--junit", copies.junit] as const] : []), ...(copies.stats ? [["--stats", copies.stats] as const] : []),
      ...(summaryAppend ? [["--summary", summaryAppend] as const] : []),
    ]),
    inputs: [
      ...(matrix !== null ? [matrix.file] : []),
      ...(request.policy !== undefined && !request.policy.startsWith("preset:") ? [resolve(context.cwd, request.policy)] : []),
      ...(plan.pricingFile ? [plan.pricingFile.file] : []),
      ...(quarantine ? [quarantine.file] : []),
    ],
  });
  // Two runs never write the same cassettes at once: a recording holds the folder's lock throughout.
  const recorder = cassette !== null && (cassette.mode === "record" || cassette.mode === "record-missing")
    ? await lockCassetteFolder(cassette.dir, context.pid, request.lockTiming) : null;
  const outcome = await runSuite({
    tasks: loaded.tasks,
    ...(loaded.variants !== null ? { cells: loaded.variants.cells } : {}),
    ...(request.reportSkipped ? { skipped: loaded.skipped } : {}),
    runDir,
    shard: shard === null ? null : formatShard(shard),
    concurrency: request.concurrency,
    restartChanged: request.restartChanged,
    selection: request.restart ? "restart" : request.add ? "add" : "resume",
    retryErrored: request.retryErrored,
    ...(request.workspaceLayers ? { workspaceLayers: request.workspaceLayers } : {}),
    stillInSuite: (task) => taskStillDefined(task, [...loaded.tasks, ...loaded.skipped, ...loaded.otherShards]),
    reportCopies: copies,
    ...(summaryAppend ? { summaryAppend } : {}),
    cwd: context.cwd,
    signal: context.interrupt,
    ...(context.stalled ? { stalled: context.stalled } : {}),
    pid: context.pid,
    ...(request.lockTiming ? { lockTiming: request.lockTiming } : {}),
    env: {
      now: () => new Date(),
      redactor,
      // Decided once by the planner (the same for every task today): the scrubbed environment and its runner.
      runCommand: processCommandRunner({ baseEnv: commands.env, allowEnv: commands.allowEnv }),
      commandsFor: (trial) => planOf(trial.task).commands,
      hostEnv: context.env,
      providerFor: (trial) => planOf(trial.task).providerFor(trial.key),
      workerProviderFor: (trial) => planOf(trial.task).worker,
      pricingFor: (trial) => planOf(trial.task).pricing,
      tokenCounterFor: (trial) => planOf(trial.task).tokenCounter,
      ...(plan.pricingFile ? { pricingFile: { path: plan.pricingFile.file, sha256: plan.pricingFile.sha256 } } : {}),
      approvalFor: (trial) => planOf(trial.task).approvalFor(trial.key),
      defaults: { ...(request.maxSteps !== undefined ? { maxSteps: request.maxSteps } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
      sandboxFor: (trial) => sandbox.runs.get(taskKey(trial.task))!,
      listenRetries: (trial, listener) => plan.listenRetries(trialId(trial.key), listener),
      ...(cassette ? { cassette: { ...cassette, ...(recorder ? { recorder } : {}) } } : {}),
      recordedCassettesFor: (trial) => planOf(trial.task).recordedCassettes,
    },
    onProgress: context.onProgress,
    onNote: context.onNote,
    budget: { ...(request.maxCost !== undefined ? { maxCostUsd: request.maxCost } : {}), ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}) },
    ...(request.repeats !== undefined ? { repeats: request.repeats } : {}),
    gate: { ...(request.minPassRate !== undefined ? { minPassRate: request.minPassRate } : {}), ...(request.gate !== undefined ? { judgedOn: request.gate } : {}) },
    ...(request.stopEarly ? { stopEarly: true } : {}),
    ...(request.passAt !== undefined ? { passAt: request.passAt } : {}),
    ...(request.junitCases !== undefined ? { junitCases: request.junitCases } : {}),
    ...(quarantine ? { quarantine } : {}),
  }).finally(() => recorder?.release());
  return { ...outcome, runDir, selected: loaded.tasks.length, sandboxWarning: sandbox.warning };
}

function cassetteNote(cassette: CassetteSettings): string {
  switch (cassette.mode) {
    case "record": return `recording each trial's model exchanges to ${cassette.dir}`;
    case "strict": return `answering every model request from ${cassette.dir} (a request with no recorded answer fails its trial)`;
    case "hybrid": return `answering model requests from ${cassette.dir}; a trial's first request with no recorded answer and the rest of it go to the live model`;
    case "record-missing": return `answering model requests from ${cassette.dir}; what has no recorded answer goes to the live model and is recorded`;
  }
}

/**
 * The quarantine file read and checked (a bad one is exit 2 before anything runs); an entry no
 * task of the suite is (in any shard, selected or not) is a warning, not an error.
 */
export async function readQuarantine(file: string, known: readonly { suite: string; id: string }[], onNote: (note: string) => void): Promise<QuarantineRecord> {
  const list = await loadQuarantineFile(file);
  for (const warning of unknownQuarantineWarnings(list, known)) onNote(`warning: ${warning}`);
  return { file, entries: quarantineEntries(list) };
}

/**
 * What each task's commands run in: bwrap is probed once (looked up on `searchPath`, rhema's own
 * PATH), and only when some task's mode is not `off`. A task that requires bwrap (mode `bwrap`)
 * on a machine where it cannot run throws `SandboxUnavailableError` (exit 3); `auto` tasks then
 * run unsandboxed, and the one warning says so.
 */
async function settleSandboxes(
  settings: ReadonlyMap<string, TaskSandboxSetting>, searchPath: string | undefined,
): Promise<{ runs: Map<string, TaskSandboxRun>; warning: string | null }> {
  const modes = [...settings.values()].map((s) => s.mode);
  const probe = needsProbe(modes) ? await probeSandbox(sandboxSearchPath(searchPath)) : null;
  const runs = new Map<string, TaskSandboxRun>();
  let unsandboxed: Extract<SandboxUse, { mode: "none" }> | null = null;
  let count = 0;
  for (const [key, setting] of settings) {
    const use = chooseSandbox(setting.mode, probe, setting.askedBy);
    if (use.mode === "none") {
      unsandboxed = use;
      count += 1;
    }
    runs.set(key, { use, network: setting.network });
  }
  const warning = unsandboxed === null ? null
    : `warning: NO SANDBOX: ${unsandboxed.reason}. The shell commands, setup and checks of ${counted(count, "task")} (sandbox: auto) ` +
      `run UNSANDBOXED, with this machine's files and network. To sandbox them: ${unsandboxed.fix}. ` +
      "With --sandbox bwrap this is an error instead; --sandbox off says it is meant.";
  return { runs, warning };
}

/**
 * Unsandboxed commands are held by the reaper (src/process/subreaper.ts); where it cannot run,
 * the one note saying that a `setsid` escapee may outlive rhema. null when all is as it should be.
 */
async function unsandboxedReaperNote(runs: Iterable<TaskSandboxRun>): Promise<string | null> {
  if (![...runs].some((run) => run.use.mode !== "bwrap")) return null;
  const reaper = await probeReaper();
  return reaper.ok ? null
    : `note: ${reaper.reason}: unsandboxed commands are stopped with their process group and the process tree rhema can see, ` +
      "but one that leaves with setsid may outlive rhema (install perl, or run sandboxed)";
}

/** Where bwrap is looked up: rhema's PATH, else the system default. */
function sandboxSearchPath(path: string | undefined): { path?: string } {
  return path ? { path } : {};
}

function reportCopies(request: RunRequest, cwd: string) {
  return {
    ...(request.junit ? { junit: resolve(cwd, request.junit) } : {}),
    ...(request.stats ? { stats: resolve(cwd, request.stats) } : {}),
  };
}
