/**
 * One run as its edges ask for it (`rhema run` and the GitHub Action): load and check
 * everything first (tasks, models, policies: any problem is a `usage` error before a task
 * starts), then settle each task's sandbox (bwrap probed once: a required sandbox that cannot be
 * made is exit 3 before a task starts; an `auto` one that cannot is a loud warning), then run the
 * suite in the run directory, resuming what an earlier run left. The one
 * implementation of a run behind both edges; they differ only in how they read the request and
 * render the outcome.
 */
import { resolve } from "node:path";
import type { ModelProvider } from "../../core/provider.js";
import { RhemaError } from "../../core/errors.js";
import { createProvider, type ProviderEnv, type ProviderSpec } from "../../providers/provider-factory.js";
import { processCommandRunner } from "./command-runner.js";
import { LIMIT_TEXT_RULE, parseLimitText } from "../tasks/duration.js";
import { SecretRedactor } from "./secret-redactor.js";
import { formatShard, loadTasks, parseShard, taskStillDefined } from "../tasks/suite-loader.js";
import type { InputCaps } from "../tasks/task-file.js";
import { runSuite, type RunProgress, type SuiteRunOutcome } from "./suite-runner.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { resolveTaskApprovals } from "../tasks/task-policy.js";
import type { Approval } from "../../core/approval.js";
import { PolicyApproval } from "../../policy/decide/policy-approval.js";
import { preloadBashParser } from "../../policy/shell/grammar/bash-parser.js";
import { taskKey } from "../run-dir/task-result.js";
import { loadPriceTable, priceTable, type ModelPricing } from "../../providers/prices.js";
import { loadPricingFile } from "../tasks/pricing-file.js";
import { taskPricing, type TaskPricing } from "./task-pricing.js";
import { probeSandbox } from "../../process/sandbox-probe.js";
import { probeReaper } from "../../process/subreaper.js";
import { chooseSandbox, needsProbe, type SandboxMode, type SandboxUse } from "../../process/sandbox-mode.js";
import type { TaskSandboxSetting } from "../tasks/task-sandbox.js";
import type { RetryListener, TaskSandboxRun } from "./task-executor.js";
import type { RetryNotice } from "../../providers/provider-retry.js";
import { unenforceableCostBudget } from "./run-budget.js";
import type { LockTiming } from "../run-dir/lock-owner.js";
import { checkRunPaths } from "./run-paths.js";
import { counted } from "../../core/counted.js";
import type { JunitCases } from "../run-dir/task-result.js";
import { trialId, type Trial } from "../trials/trial.js";
import { chooseScript } from "../../providers/script-choice.js";

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
  /** `--sandbox`: the least sandbox the run asks for (a policy or task may ask for more); default auto. */
  sandbox?: SandboxMode;
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
  const streamIdleMs = parseLimitFlag("--stream-idle", request.streamIdle);
  // The sandbox probe (two bwrap processes, probeSandbox keeps its answer) starts now, to run
  // while the task files load, unless the flag turns the sandbox off (then only a policy or task
  // file could ask for it, and settleSandboxes probes then).
  if (request.sandbox !== "off") void probeSandbox(sandboxSearchPath(context.env.PATH));
  const loaded = await loadTasks(request.paths, { cwd: context.cwd, filters: request.filter, tags: request.tag, shard, exclude: [resolve(context.cwd, request.out)], ...(request.caps ? { caps: request.caps } : {}) });
  // Paths, --filter and --tag that select nothing are a mistake; a shard whose share of a
  // selection is nothing is not (a matrix sized once, a suite or tags shrinking it): it runs no
  // task and writes empty reports, so the job passes and its reports merge.
  if (loaded.selectedInAllShards === 0) {
    throw new RhemaError("usage", `no task to run: ${request.paths.join(" ")} selected none${request.filter.length || request.tag.length ? " (after --filter/--tag)" : ""}`);
  }
  if (loaded.tasks.length === 0 && shard !== null) {
    context.onNote(`shard ${formatShard(shard)} selected nothing (the ${counted(loaded.selectedInAllShards, "selected task")} ${loaded.selectedInAllShards === 1 ? "falls" : "fall"} in other shards): no task runs, its reports are empty`);
  }
  // Each task's model, resolved once (task file, else flags): providers, prices and budgets read it.
  const specs = new Map(loaded.tasks.map((task) => [taskKey(task), providerSpec(task, request)]));
  // Each task's stream idle limit: its own, else the flag's, else the providers' default.
  const idleOf = (task: TaskDefinition) => task.limits.streamIdleMs ?? streamIdleMs;
  const retries = new RetryRelay();
  // Each task's provider is made now (a missing key is exit 2 up front), and each trial gets its
  // own (a scripted one keeps its cache simulator and failure counts per trial).
  const providers = trialProviders(loaded.tasks, specs, context.env, idleOf, retries);
  const workers = createWorkerProviders(loaded.tasks, context.env, idleOf, retries);
  const pricingFile = request.pricing === undefined ? null : await loadPricingFile(resolve(context.cwd, request.pricing));
  const pricings = await priceTasks(loaded.tasks, specs, pricingFile?.models ?? [], context.env);
  checkCostBudgets(loaded.tasks, specs, pricings, request.maxCost);
  for (const note of unpricedNotes(loaded.tasks, specs, pricings)) context.onNote(note);
  const approvals = await resolveTaskApprovals(loaded.tasks, { policyFlag: request.policy, cwd: context.cwd, sandboxFlag: request.sandbox });
  for (const note of approvals.notes) context.onNote(note);
  // The first shell decision needs the bash grammar (~100 ms to compile): start it now, beside
  // the sandbox probe, the workspace copies and the first model request, when some task's
  // policy may run commands.
  if ([...approvals.approvals.values()].some(mayRunCommands)) preloadBashParser();
  const sandbox = await settleSandboxes(approvals.sandbox, context.env.PATH);
  if (sandbox.warning !== null) context.onNote(sandbox.warning);
  const reaperNote = await unsandboxedReaperNote(sandbox.runs.values());
  if (reaperNote !== null) context.onNote(reaperNote);

  const runDir = resolve(context.cwd, request.out);
  const copies = reportCopies(request, context.cwd);
  const summaryAppend = request.summary ? resolve(context.cwd, request.summary) : undefined;
  await checkRunPaths({
    runDir, tasks: loaded.tasks,
    outputs: new Map([
      ...(copies.junit ? [["--junit", copies.junit] as const] : []), ...(copies.stats ? [["--stats", copies.stats] as const] : []),
      ...(summaryAppend ? [["--summary", summaryAppend] as const] : []),
    ]),
    inputs: [
      ...(request.policy !== undefined && !request.policy.startsWith("preset:") ? [resolve(context.cwd, request.policy)] : []),
      ...(pricingFile ? [pricingFile.file] : []),
    ],
  });
  const outcome = await runSuite({
    tasks: loaded.tasks,
    ...(request.reportSkipped ? { skipped: loaded.skipped } : {}),
    runDir,
    shard: shard === null ? null : formatShard(shard),
    concurrency: request.concurrency,
    restartChanged: request.restartChanged,
    selection: request.restart ? "restart" : request.add ? "add" : "resume",
    retryErrored: request.retryErrored,
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
      runCommand: processCommandRunner({ baseEnv: context.env, allowEnv: request.allowEnv }),
      shellEnv: context.env,
      allowEnv: request.allowEnv,
      providerFor: (trial) => providers(trial),
      workerProviderFor: (trial) => workers.get(taskKey(trial.task)) ?? null,
      pricingFor: (trial) => pricings.get(taskKey(trial.task))!,
      ...(pricingFile ? { pricingFile: { path: pricingFile.file, sha256: pricingFile.sha256 } } : {}),
      approvalFor: (trial) => approvals.approvals.get(taskKey(trial.task))!,
      defaults: { ...(request.maxSteps !== undefined ? { maxSteps: request.maxSteps } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
      sandboxFor: (trial) => sandbox.runs.get(taskKey(trial.task))!,
      listenRetries: (trial, listener) => retries.listen(trialId(trial.key), listener),
    },
    onProgress: context.onProgress,
    onNote: context.onNote,
    budget: { ...(request.maxCost !== undefined ? { maxCostUsd: request.maxCost } : {}), ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}) },
    ...(request.repeats !== undefined ? { repeats: request.repeats } : {}),
    gate: { ...(request.minPassRate !== undefined ? { minPassRate: request.minPassRate } : {}), ...(request.gate !== undefined ? { judgedOn: request.gate } : {}) },
    ...(request.stopEarly ? { stopEarly: true } : {}),
    ...(request.passAt !== undefined ? { passAt: request.passAt } : {}),
    ...(request.junitCases !== undefined ? { junitCases: request.junitCases } : {}),
  });
  return { ...outcome, runDir, selected: loaded.tasks.length, sandboxWarning: sandbox.warning };
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

/** Whether an approval's policy may allow a shell command: default allow, or an allow rule that can match one. */
function mayRunCommands(approval: Approval): boolean {
  if (!(approval instanceof PolicyApproval)) return false;
  const { policy } = approval;
  return policy.default === "allow" || policy.rules.some((r) => r.effect === "allow" && (r.shell !== null || r.tools === null || r.tools.includes("shell")));
}

/** A limit flag (`--timeout`, `--stream-idle`): milliseconds, Infinity for `none`, undefined when not given. */
function parseLimitFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseLimitText(value);
  if (ms === null) throw new RhemaError("usage", `Expected ${flag} as ${LIMIT_TEXT_RULE}, got "${value}"`);
  return ms;
}

/**
 * The providers' retries, told to the task that runs them: providers are made up front, before
 * any task listens, so each is given a notice hook that finds its task's listener (if any) here.
 */
class RetryRelay {
  private readonly listeners = new Map<string, RetryListener>();

  /** The `onRetry` for the provider of task `key` (`who`: its model or its compaction worker). */
  hook(key: string, who: "task" | "worker"): (notice: RetryNotice) => void | Promise<void> {
    return (notice) => this.listeners.get(key)?.(who, notice);
  }

  /** The `onRetry` of a provider its task's trials share: told to each of them that listens. */
  hookTask(taskKeyText: string, who: "task" | "worker"): (notice: RetryNotice) => Promise<void> {
    return async (notice) => {
      for (const [key, listener] of this.listeners) if (key.startsWith(`${taskKeyText}/`)) await listener(who, notice);
    };
  }

  listen(key: string, listener: RetryListener): () => void {
    this.listeners.set(key, listener);
    return () => {
      if (this.listeners.get(key) === listener) this.listeners.delete(key);
    };
  }
}

/**
 * Each trial's provider, made when the trial asks for it and kept for it; every task's is made
 * once up front too, so a missing key is exit 2 before anything runs.
 */
function trialProviders(
  tasks: readonly TaskDefinition[], specs: ReadonlyMap<string, ProviderSpec>, env: ProviderEnv, idleOf: (task: TaskDefinition) => number | undefined,
  retries: RetryRelay,
): (trial: Trial) => ModelProvider {
  const make = (task: TaskDefinition, hookKey: string, trial?: Trial) => createProvider(trialSpec(specs.get(taskKey(task))!, task, trial), env, {
    ...idleOption(idleOf(task)), retry: { onRetry: retries.hook(hookKey, "task") },
  });
  for (const task of tasks) make(task, taskKey(task));
  const made = new Map<string, ModelProvider>();
  return (trial) => {
    const id = trialId(trial.key);
    let provider = made.get(id);
    if (provider === undefined) made.set(id, provider = make(trial.task, id, trial));
    return provider;
  };
}

/** The compaction workers tasks name (`transcript.worker`), made up front like the task models. */
function createWorkerProviders(
  tasks: readonly TaskDefinition[], env: ProviderEnv, idleOf: (task: TaskDefinition) => number | undefined, retries: RetryRelay,
): Map<string, ModelProvider> {
  const workers = new Map<string, ModelProvider>();
  for (const task of tasks) {
    const worker = task.transcript?.worker;
    if (worker) {
      // One per task (a remote model keeps no state per conversation); its retries are told to whichever trial of the task listens.
      workers.set(taskKey(task), createProvider({ provider: worker.provider, name: worker.name }, env, {
        ...idleOption(idleOf(task)), retry: { onRetry: retries.hookTask(taskKey(task), "worker") },
      }));
    }
  }
  return workers;
}

/** A trial's model: a scripted task with `scripts` plays the alternative its seed and trial key draw (script-choice.ts). */
function trialSpec(spec: ProviderSpec, task: TaskDefinition, trial: Trial | undefined): ProviderSpec {
  if (spec.provider !== "scripted" || trial === undefined || task.model?.provider !== "scripted") return spec;
  return { ...spec, script: chooseScript(task.model, task.seed ?? "", trial.key) };
}

function idleOption(streamIdleMs: number | undefined): { streamIdleMs?: number } {
  return streamIdleMs === undefined ? {} : { streamIdleMs };
}

/**
 * What each task's requests are priced as, decided up front (a cost budget needs to know). The
 * bundled table is loaded only when some task names a model to price: a suite of scripted
 * tasks without `priceAs` starts without it.
 */
async function priceTasks(
  tasks: readonly TaskDefinition[], specs: ReadonlyMap<string, ProviderSpec>, models: readonly ModelPricing[], env: ProviderEnv,
): Promise<Map<string, TaskPricing>> {
  const namesModel = (task: TaskDefinition) =>
    specs.get(taskKey(task))!.provider !== "scripted" || priceAsOf(task) !== undefined || task.transcript?.worker !== undefined;
  const table = tasks.some(namesModel) ? await loadPriceTable(models) : priceTable(models, null);
  const openaiBaseUrl = env.OPENAI_BASE_URL || undefined;
  const pricings = new Map<string, TaskPricing>();
  for (const task of tasks) {
    const priceAs = priceAsOf(task);
    pricings.set(taskKey(task), taskPricing({
      spec: specs.get(taskKey(task))!,
      ...(priceAs !== undefined ? { priceAs } : {}),
      ...(task.transcript?.worker ? { worker: task.transcript.worker } : {}),
      ...(openaiBaseUrl !== undefined ? { openaiBaseUrl } : {}),
    }, table));
  }
  return pricings;
}

/**
 * "unpriced: model M has no known price; …", once per model a task or its worker names that has
 * no price. A scripted task without `priceAs` is unpriced too, but unremarked: it names no model.
 */
function unpricedNotes(tasks: readonly TaskDefinition[], specs: ReadonlyMap<string, ProviderSpec>, pricings: ReadonlyMap<string, TaskPricing>): string[] {
  const models = new Set<string>();
  for (const task of tasks) {
    const pricing = pricings.get(taskKey(task))!;
    const spec = specs.get(taskKey(task))!;
    const priceAs = priceAsOf(task);
    if (pricing.task === null && spec.provider !== "scripted") models.add(`${spec.provider}/${spec.name}`);
    if (pricing.task === null && priceAs !== undefined) models.add(priceAs);
    const worker = task.transcript?.worker;
    if (worker && pricing.worker === null) models.add(`${worker.provider}/${worker.name}`);
  }
  return [...models].sort().map((m) => `unpriced: model ${m} has no known price; add it to a pricing file (--pricing)`);
}

/** A cost budget on a task whose requests have no price cannot be kept: exit 2 before any task starts. */
function checkCostBudgets(
  tasks: readonly TaskDefinition[], specs: ReadonlyMap<string, ProviderSpec>, pricings: ReadonlyMap<string, TaskPricing>, runMaxCost: number | undefined,
): void {
  for (const task of tasks) {
    const spec = specs.get(taskKey(task))!;
    const worker = task.transcript?.worker;
    const priceAs = priceAsOf(task);
    const problem = unenforceableCostBudget({
      file: task.file, key: taskKey(task), model: spec.provider === "scripted" ? priceAs ?? "scripted" : `${spec.provider}/${spec.name}`,
      scriptedWithoutPriceAs: spec.provider === "scripted" && priceAs === undefined,
      pricing: pricings.get(taskKey(task))!,
      ...(task.limits.maxCostUsd !== undefined ? { maxCostUsd: task.limits.maxCostUsd } : {}),
      ...(worker ? { worker: `${worker.provider}/${worker.name}` } : {}),
    }, runMaxCost);
    if (problem) throw new RhemaError("usage", problem);
  }
}

/** A scripted task's `model.priceAs`, the model its requests are priced as. */
function priceAsOf(task: TaskDefinition): string | undefined {
  return task.model?.provider === "scripted" ? task.model.priceAs : undefined;
}

function providerSpec(task: TaskDefinition, request: RunRequest): ProviderSpec {
  if (task.model?.provider === "scripted") return { provider: "scripted", script: task.model.script, name: taskKey(task) };
  if (task.model) return { provider: task.model.provider, name: task.model.name, ...(task.model.baseUrl ? { baseUrl: task.model.baseUrl } : {}) };
  if (request.provider === undefined) {
    throw new RhemaError("usage", `${task.file}: the task names no model: add \`model:\` to it, or pass --provider and --model`);
  }
  if (request.provider !== "anthropic" && request.provider !== "openai") {
    throw new RhemaError("usage", `Expected --provider to be anthropic or openai (scripted models are given in the task file), got "${request.provider}"`);
  }
  if (!request.model) throw new RhemaError("usage", `--provider ${request.provider} needs --model NAME`);
  return { provider: request.provider, name: request.model, ...(request.baseUrl ? { baseUrl: request.baseUrl } : {}) };
}

function reportCopies(request: RunRequest, cwd: string) {
  return {
    ...(request.junit ? { junit: resolve(cwd, request.junit) } : {}),
    ...(request.stats ? { stats: resolve(cwd, request.stats) } : {}),
  };
}
