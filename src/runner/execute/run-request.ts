/**
 * One run as its edges ask for it (`rhema run` and the GitHub Action): load and check
 * everything first (tasks, models, policies: any problem is a `usage` error before a task
 * starts), then run the suite in the run directory, resuming what an earlier run left. The one
 * implementation of a run behind both edges; they differ only in how they read the request and
 * render the outcome.
 */
import { resolve } from "node:path";
import type { ModelProvider } from "../../core/provider.js";
import { RhemaError } from "../../core/errors.js";
import { createProvider, type ProviderEnv, type ProviderSpec } from "../../providers/provider-factory.js";
import { processCommandRunner } from "./command-runner.js";
import { parseDurationMs } from "../tasks/duration.js";
import { SecretRedactor } from "./secret-redactor.js";
import { loadTasks, parseShard } from "../tasks/suite-loader.js";
import type { InputCaps } from "../tasks/task-file.js";
import { runSuite, type RunProgress, type SuiteRunOutcome } from "./suite-runner.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { resolveTaskApprovals } from "../tasks/task-policy.js";
import type { Approval } from "../../core/approval.js";
import { PolicyApproval } from "../../policy/decide/policy-approval.js";
import { preloadBashParser } from "../../policy/shell/grammar/bash-parser.js";
import { taskKey } from "../run-dir/task-result.js";

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
  /** A duration: 90s, 10m, 1h. */
  timeout?: string;
  allowEnv: string[];
  /** Caps on prompt and image sizes (the CLI reads overrides from its environment). */
  caps?: InputCaps;
}

/** What a run needs from the process, handed in by the edge. */
export interface RunContext {
  cwd: string;
  env: ProviderEnv;
  pid: number;
  /** Aborted when the run must checkpoint and stop. */
  interrupt: AbortSignal;
  /** A line for the user (e.g. which default policy applies). */
  onNote(note: string): void;
  onProgress(progress: RunProgress): void;
}

export interface RunRequestOutcome extends SuiteRunOutcome {
  /** The run directory, absolute. */
  runDir: string;
  /** How many tasks were selected to run (after filter, tag and shard). */
  selected: number;
}

/** Loads, checks and runs `request`; throws a RhemaError (code `usage` for bad input) before anything runs. */
export async function runRequest(request: RunRequest, context: RunContext): Promise<RunRequestOutcome> {
  if (request.add && request.restart) throw new RhemaError("usage", "Expected at most one of --add and --restart, got both");
  const shard = request.shard !== undefined ? parseShard(request.shard) : null;
  const timeoutMs = parseTimeoutFlag(request.timeout);
  const loaded = await loadTasks(request.paths, { cwd: context.cwd, filters: request.filter, tags: request.tag, shard, ...(request.caps ? { caps: request.caps } : {}) });
  if (loaded.tasks.length === 0) throw new RhemaError("usage", `no task to run: ${request.paths.join(" ")} selected none${request.filter.length || request.tag.length || shard ? " (after --filter/--tag/--shard)" : ""}`);
  const providers = createProviders(loaded.tasks, request, context.env);
  const workers = createWorkerProviders(loaded.tasks, context.env);
  const approvals = await resolveTaskApprovals(loaded.tasks, { policyFlag: request.policy, cwd: context.cwd });
  for (const note of approvals.notes) context.onNote(note);
  // The first shell decision needs the bash grammar (~100 ms to compile): start it now, beside
  // the workspace copies and the first model request, when some task's policy may run commands.
  if ([...approvals.approvals.values()].some(mayRunCommands)) preloadBashParser();

  const runDir = resolve(context.cwd, request.out);
  const outcome = await runSuite({
    tasks: loaded.tasks,
    ...(request.reportSkipped ? { skipped: loaded.skipped } : {}),
    runDir,
    concurrency: request.concurrency,
    restartChanged: request.restartChanged,
    selection: request.restart ? "restart" : request.add ? "add" : "resume",
    retryErrored: request.retryErrored,
    reportCopies: reportCopies(request, context.cwd),
    ...(request.summary ? { summaryAppend: resolve(context.cwd, request.summary) } : {}),
    cwd: context.cwd,
    signal: context.interrupt,
    pid: context.pid,
    env: {
      now: () => new Date(),
      redactor: new SecretRedactor(context.env),
      runCommand: processCommandRunner({ baseEnv: context.env, allowEnv: request.allowEnv }),
      shellEnv: context.env,
      allowEnv: request.allowEnv,
      providerFor: (task) => providers.get(taskKey(task))!,
      workerProviderFor: (task) => workers.get(taskKey(task)) ?? null,
      approvalFor: (task) => approvals.approvals.get(taskKey(task))!,
      defaults: { ...(request.maxSteps !== undefined ? { maxSteps: request.maxSteps } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
    },
    onProgress: context.onProgress,
  });
  return { ...outcome, runDir, selected: loaded.tasks.length };
}

/** Whether an approval's policy may allow a shell command: default allow, or an allow rule that can match one. */
function mayRunCommands(approval: Approval): boolean {
  if (!(approval instanceof PolicyApproval)) return false;
  const { policy } = approval;
  return policy.default === "allow" || policy.rules.some((r) => r.effect === "allow" && (r.shell !== null || r.tools === null || r.tools.includes("shell")));
}

function parseTimeoutFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDurationMs(value);
  if (ms === null || ms <= 0) throw new RhemaError("usage", `Expected --timeout as a duration like 90s, 10m or 1h, got "${value}"`);
  return ms;
}

/** One provider per task, made before anything runs, so a missing key is exit 2 up front. */
function createProviders(tasks: readonly TaskDefinition[], request: RunRequest, env: ProviderEnv): Map<string, ModelProvider> {
  const providers = new Map<string, ModelProvider>();
  for (const task of tasks) providers.set(taskKey(task), createProvider(providerSpec(task, request), env));
  return providers;
}

/** The compaction workers tasks name (`transcript.worker`), made up front like the task models. */
function createWorkerProviders(tasks: readonly TaskDefinition[], env: ProviderEnv): Map<string, ModelProvider> {
  const workers = new Map<string, ModelProvider>();
  for (const task of tasks) {
    const worker = task.transcript?.worker;
    if (worker) workers.set(taskKey(task), createProvider({ provider: worker.provider, name: worker.name }, env));
  }
  return workers;
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
