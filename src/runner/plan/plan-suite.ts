/**
 * The planner: every selected task resolved once into a `TaskPlan` (task-plan.ts), and every
 * problem a run can know before it starts raised here as a `usage`-class error (exit 2): a task
 * with no model and no --provider/--model, an unknown provider, a missing API key, a bad pricing
 * or policy file, a cost budget on an unpriced model, a bad limit flag, a bad calibration file. `rhema run` and
 * `rhema validate` both plan with it, so a suite one accepts the other accepts.
 */
import { RhemaError } from "../../core/errors.js";
import type { Approval } from "../../core/approval.js";
import type { ModelProvider } from "../../core/provider.js";
import { createProvider, envBaseUrl, isScriptedSpec, type ProviderEnv, type ProviderSpec } from "../../providers/provider-factory.js";
import { NAMED_PROVIDERS, isNamedProvider, nameList, providerEntry } from "../../providers/provider-registry.js";
import type { RetryNotice } from "../../providers/provider-retry.js";
import { PolicyApproval } from "../../policy/decide/policy-approval.js";
import { scrubEnvironment } from "../../process/secret-env.js";
import type { SandboxMode } from "../../process/sandbox-mode.js";
import { loadPricingFile, type LoadedPricingFile } from "../pricing/pricing-file.js";
import { loadPriceTable, priceTable, type ModelPricing } from "../pricing/prices.js";
import { unenforceableCostBudget } from "../pricing/run-budget.js";
import { taskPricing, type TaskPricing } from "../pricing/task-pricing.js";
import { LIMIT_TEXT_RULE, parseLimitText } from "../tasks/duration.js";
import { TaskFileError, type TaskDefinition, type TaskProblem } from "../tasks/task-file.js";
import { resolveTaskApprovals } from "../tasks/task-policy.js";
import { taskKey } from "../tasks/task-key.js";
import { planRecordedTask, recordedModelOf } from "./recorded-model.js";
import { trialFolderSegments, type TrialKey } from "../trials/trial-key.js";
import { trialId } from "../trials/trial.js";
import { scriptFor, type CommandEnvironment, type TaskPlan } from "./task-plan.js";
import { resolve } from "node:path";
import type { TokenCounter } from "../../core/token-counter.js";
import { chooseCounter } from "../../tokens/counter-choice.js";
import { loadCalibrationFile } from "./calibration-input.js";

/** The run flags that decide a plan (`rhema run`'s and `rhema validate`'s alike). */
export interface PlanFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  policy?: string;
  /** `--pricing FILE`, relative to cwd. */
  pricing?: string;
  maxCost?: number;
  sandbox?: SandboxMode;
  /** `--stream-idle` as given (a duration or `none`). */
  streamIdle?: string;
  allowEnv?: readonly string[];
  /** `--calibration FILE`, relative to cwd: every task counts tokens with its factors. */
  calibration?: string;
  /**
   * A strict cassette replay (`--cassette-mode strict`): every request is answered from the
   * cassettes, so named models are not made — no key is needed — and a request that reaches one is a bug.
   */
  offline?: boolean;
}

export interface PlanContext {
  cwd: string;
  env: ProviderEnv;
}

/** Told of one retry of a task's model (`task`) or its compaction worker (`worker`). */
export type PlanRetryListener = (who: "task" | "worker", notice: RetryNotice) => void | Promise<void>;

export interface SuitePlan {
  /** Each task's plan by `suite/id`, in the tasks' order. */
  plans: Map<string, TaskPlan>;
  /** Lines for the user (unpriced models, policy warnings, the default policy), in order. */
  notes: string[];
  pricingFile: LoadedPricingFile | null;
  /** What the run's commands run with (one for every task today; a plan holds its own). */
  commands: CommandEnvironment;
  /** How many distinct policies are in use. */
  policies: number;
  /** Whether some task's policy may run shell commands (the bash grammar is worth preloading). */
  mayRunCommands: boolean;
  /** Listens to the retries of task `key`'s providers (made before any task listens). */
  listenRetries(key: string, listener: PlanRetryListener): () => void;
}

/** A limit flag (`--timeout`, `--stream-idle`): milliseconds, Infinity for `none`, undefined when not given. */
export function parseLimitFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseLimitText(value);
  if (ms === null) throw new RhemaError("usage", `Expected ${flag} as ${LIMIT_TEXT_RULE}, got "${value}"`);
  return ms;
}

/** Plans `tasks`; throws (exit 2) on the first problem a run would meet before starting. */
export async function planSuite(tasks: readonly TaskDefinition[], flags: PlanFlags, context: PlanContext): Promise<SuitePlan> {
  const streamIdleMs = parseLimitFlag("--stream-idle", flags.streamIdle);
  // A task whose model is a recording is planned as the model it recorded, replayed offline.
  const recorded = new Map(await Promise.all(tasks.flatMap((task) => {
    const model = recordedModelOf(task);
    return model === null ? [] : [planRecordedTask(task, model).then((planned) => [taskKey(task), planned] as const)];
  })));
  const specs = new Map(tasks.map((task) => [taskKey(task), recorded.get(taskKey(task))?.spec ?? providerSpec(task, flags)]));
  const idleOf = (task: TaskDefinition) => task.limits.streamIdleMs ?? streamIdleMs;
  const retries = new RetryRelay();
  const counters = await chooseCounters(specs, flags.calibration === undefined ? undefined : await loadCalibrationFile(resolve(context.cwd, flags.calibration)));
  const makerOf = (task: TaskDefinition) => (flags.offline === true || recorded.has(taskKey(task)) ? offlineProvider : createProvider);
  const providers = new Map(tasks.map((task) => [taskKey(task), providerMaker(task, specs.get(taskKey(task))!, context.env, { streamIdleMs: idleOf(task), counter: counters.get(taskKey(task))! }, retries, makerOf(task))]));
  const workers = createWorkerProviders(tasks, context.env, idleOf, retries, makerOf);
  const pricingFile = flags.pricing === undefined ? null : await loadPricingFile(resolve(context.cwd, flags.pricing));
  const pricings = await priceTasks(tasks, specs, pricingFile?.models ?? [], context.env);
  checkCostBudgets(tasks, specs, pricings, flags.maxCost);
  const notes = unpricedNotes(tasks, specs, pricings);
  const approvals = await resolveTaskApprovals(tasks, { policyFlag: flags.policy, cwd: context.cwd, sandboxFlag: flags.sandbox });
  notes.push(...approvals.notes);
  const commands = commandEnvironment(context.env, flags.allowEnv ?? []);
  checkMcpReferences(tasks, commands);
  const plans = new Map<string, TaskPlan>();
  for (const task of tasks) {
    const key = taskKey(task);
    const spec = specs.get(key)!;
    plans.set(key, {
      task, key, spec,
      capabilities: providerEntry(spec.provider).capabilities,
      providerFor: providers.get(key)!,
      worker: workers.get(key) ?? null,
      pricing: pricings.get(key)!,
      approvalFor: freshApprovals(approvals.approvals.get(key)!),
      sandbox: approvals.sandbox.get(key)!,
      streamIdleMs: idleOf(task),
      commands,
      tokenCounter: counters.get(key)!,
      recordedCassettes: recorded.get(key)?.cassettes ?? null,
    });
  }
  return {
    plans, notes, pricingFile, commands, policies: approvals.policies,
    mayRunCommands: [...approvals.approvals.values()].some(mayRunCommands),
    listenRetries: (key, listener) => retries.listen(key, listener),
  };
}

/** The task's model, resolved once: the task file's, else the flags'. */
function providerSpec(task: TaskDefinition, flags: PlanFlags): ProviderSpec {
  const model = task.model;
  if (model && "script" in model) return { provider: model.provider, script: model.script, name: taskKey(task) };
  if (model && "name" in model) return { provider: model.provider, name: model.name, ...(model.baseUrl ? { baseUrl: model.baseUrl } : {}) };
  if (flags.provider === undefined) {
    throw new RhemaError("usage", `${task.file}: the task names no model: add \`model:\` to it, or pass --provider and --model`);
  }
  if (!isNamedProvider(flags.provider)) {
    throw new RhemaError("usage", `Expected --provider to be ${nameList(NAMED_PROVIDERS)} (scripted models are given in the task file), got "${flags.provider}"`);
  }
  if (!flags.model) throw new RhemaError("usage", `--provider ${flags.provider} needs --model NAME`);
  return { provider: flags.provider, name: flags.model, ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}) };
}

/** Each task's token counter: its provider's way of counting for its model, or the calibration given. */
async function chooseCounters(specs: ReadonlyMap<string, ProviderSpec>, calibration: Awaited<ReturnType<typeof loadCalibrationFile>> | undefined): Promise<Map<string, TokenCounter>> {
  const counters = new Map<string, TokenCounter>();
  for (const [key, spec] of specs) {
    counters.set(key, await chooseCounter(providerEntry(spec.provider).tokenCounting, isScriptedSpec(spec) ? null : spec.name, calibration));
  }
  return counters;
}

/**
 * How a task's provider is made per trial. A named model's is made now (a missing key is exit 2
 * before anything runs) and shared by the trials; a scripted task's is made per trial from
 * `scriptFor`, each trial with its own script cursor.
 */
function providerMaker(
  task: TaskDefinition, spec: ProviderSpec, env: ProviderEnv, settings: { streamIdleMs: number | undefined; counter: TokenCounter }, retries: RetryRelay,
  make: typeof createProvider,
): (trial: TrialKey) => ModelProvider {
  const options = (onRetry: (notice: RetryNotice) => void | Promise<void>) => ({ ...idleOption(settings.streamIdleMs), retry: { onRetry }, tokenCounter: settings.counter });
  if (!isScriptedSpec(spec)) {
    // Shared by the task's trials: a retry is told to each of them that listens.
    const provider = make(spec, env, options(retries.hookTask(trialPrefix(task), "task")));
    return () => provider;
  }
  const made = new Map<string, ModelProvider>();
  return (trial) => {
    const id = trialId(trial);
    let provider = made.get(id);
    if (provider === undefined) {
      provider = createProvider({ ...spec, script: scriptFor(task, trial) }, env, options(retries.hook(id, "task")));
      made.set(id, provider);
    }
    return provider;
  };
}

/** The compaction workers tasks name (`transcript.worker`), made up front like the task models. */
function createWorkerProviders(
  tasks: readonly TaskDefinition[], env: ProviderEnv, idleOf: (task: TaskDefinition) => number | undefined, retries: RetryRelay,
  makerOf: (task: TaskDefinition) => typeof createProvider,
): Map<string, ModelProvider> {
  const workers = new Map<string, ModelProvider>();
  for (const task of tasks) {
    const worker = task.transcript?.worker;
    if (worker) {
      workers.set(taskKey(task), makerOf(task)({ provider: worker.provider, name: worker.name }, env, {
        ...idleOption(idleOf(task)), retry: { onRetry: retries.hookTask(trialPrefix(task), "worker") },
      }));
    }
  }
  return workers;
}

/**
 * A named model that is never asked (a strict replay answers from the cassettes): its id is the
 * live model's, so results read alike; a scripted spec is made as always (it needs no key).
 */
function offlineProvider(spec: ProviderSpec, env: ProviderEnv, options: Parameters<typeof createProvider>[2]): ModelProvider {
  if (isScriptedSpec(spec)) return createProvider(spec, env, options);
  return {
    id: `${spec.provider}:${spec.name}`,
    // eslint-disable-next-line require-yield
    async *stream() {
      throw new RhemaError("provider_unavailable", `a strict cassette replay asked the live model ${spec.provider}:${spec.name}; strict replays answer every request from the cassette`);
    },
  };
}

function idleOption(streamIdleMs: number | undefined): { streamIdleMs?: number } {
  return streamIdleMs === undefined ? {} : { streamIdleMs };
}

/**
 * Every `${NAME}` in a task's MCP env and header values names an `--allow-env` variable that is
 * set: all the problems at once, each at its file, line and field (exit 2).
 */
function checkMcpReferences(tasks: readonly TaskDefinition[], commands: CommandEnvironment): void {
  const problems: TaskProblem[] = [];
  for (const task of tasks) {
    for (const server of Object.values(task.mcp ?? {})) {
      for (const ref of server.references) {
        const message = !commands.allowEnv.includes(ref.variable)
          ? `\${${ref.variable}} names a variable --allow-env does not let through; an MCP server's env and headers take only --allow-env variables (pass --allow-env ${ref.variable})`
          : commands.env[ref.variable] === undefined ? `\${${ref.variable}} is not set in rhema's environment` : null;
        if (message !== null) problems.push({ file: ref.file, line: ref.line, column: ref.column, field: ref.field, message });
      }
    }
  }
  if (problems.length > 0) throw new TaskFileError(problems);
}

/** The environment commands see, scrubbed once: lower layers receive the result, not the list to apply. */
function commandEnvironment(env: ProviderEnv, allowEnv: readonly string[]): CommandEnvironment {
  const scrubbed = scrubEnvironment(env, allowEnv).env;
  return { env: scrubbed, allowEnv };
}

/** What every trial id (`trialId`) of `task` (of its variant, with a matrix) starts with. */
function trialPrefix(task: TaskDefinition): string {
  return `${trialFolderSegments({ suite: task.suite, id: task.id, variant: task.variant ?? null, repeat: 1 }).slice(0, 3).join("/")}/`;
}

/** A fresh approval per trial from the task's policy (its first trial gets the one resolved). */
function freshApprovals(first: Approval): (trial: TrialKey) => Approval {
  const made = new Map<string, Approval>();
  return (trial) => {
    const label = trialId(trial);
    let approval = made.get(label);
    if (approval === undefined) {
      approval = made.size === 0 || !(first instanceof PolicyApproval) ? first : new PolicyApproval(first.policy);
      made.set(label, approval);
    }
    return approval;
  };
}

/** Whether an approval's policy may allow a shell command: default allow, or an allow rule that can match one. */
function mayRunCommands(approval: Approval): boolean {
  if (!(approval instanceof PolicyApproval)) return false;
  const { policy } = approval;
  return policy.default === "allow" || policy.rules.some((r) => r.effect === "allow" && (r.shell !== null || r.tools === null || r.tools.includes("shell")));
}

/**
 * The providers' retries, told to the task that runs them: providers are made up front, before
 * any task listens, so each is given a notice hook that finds its task's listener (if any) here.
 */
class RetryRelay {
  private readonly listeners = new Map<string, PlanRetryListener>();

  /** The `onRetry` for the provider of one trial (`trialId`; `who`: its model or its compaction worker). */
  hook(trial: string, who: "task" | "worker"): (notice: RetryNotice) => void | Promise<void> {
    return (notice) => this.listeners.get(trial)?.(who, notice);
  }

  /** The `onRetry` of a provider a task's trials share (`prefix`: trialPrefix): told to each of them that listens. */
  hookTask(prefix: string, who: "task" | "worker"): (notice: RetryNotice) => Promise<void> {
    return async (notice) => {
      for (const [key, listener] of [...this.listeners]) if (key.startsWith(prefix)) await listener(who, notice);
    };
  }

  listen(key: string, listener: PlanRetryListener): () => void {
    this.listeners.set(key, listener);
    return () => {
      if (this.listeners.get(key) === listener) this.listeners.delete(key);
    };
  }
}

/** A scripted task's `model.priceAs`, the model its requests are priced as. */
function priceAsOf(task: TaskDefinition): string | undefined {
  return task.model && "script" in task.model ? task.model.priceAs : undefined;
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
    !isScriptedSpec(specs.get(taskKey(task))!) || priceAsOf(task) !== undefined || task.transcript?.worker !== undefined;
  const table = tasks.some(namesModel) ? await loadPriceTable(models) : priceTable(models, null);
  const pricings = new Map<string, TaskPricing>();
  for (const task of tasks) {
    const spec = specs.get(taskKey(task))!;
    const priceAs = priceAsOf(task);
    const fromEnv = isScriptedSpec(spec) ? undefined : envBaseUrl(spec.provider, env);
    pricings.set(taskKey(task), taskPricing({
      spec,
      ...(priceAs !== undefined ? { priceAs } : {}),
      ...(task.transcript?.worker ? { worker: task.transcript.worker } : {}),
      ...(fromEnv !== undefined ? { envBaseUrl: fromEnv } : {}),
    }, table));
  }
  return pricings;
}

/** `anthropic/claude-sonnet-4-6`, or a scripted task's `priceAs` (else `scripted`): the model a budget message names. */
function modelLabel(spec: ProviderSpec, priceAs: string | undefined): string {
  return isScriptedSpec(spec) ? priceAs ?? spec.provider : `${spec.provider}/${spec.name}`;
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
    if (pricing.task === null && !isScriptedSpec(spec)) models.add(modelLabel(spec, priceAs));
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
      file: task.file, key: taskKey(task), model: modelLabel(spec, priceAs),
      scriptedWithoutPriceAs: isScriptedSpec(spec) && priceAs === undefined,
      pricing: pricings.get(taskKey(task))!,
      ...(task.limits.maxCostUsd !== undefined ? { maxCostUsd: task.limits.maxCostUsd } : {}),
      ...(task.variant != null ? { cell: { variant: task.variant, ...(task.cellBudget?.maxCostUsd !== undefined ? { maxCostUsd: task.cellBudget.maxCostUsd } : {}) } } : {}),
      ...(worker ? { worker: `${worker.provider}/${worker.name}` } : {}),
    }, runMaxCost);
    if (problem) throw new RhemaError("usage", problem);
  }
}

