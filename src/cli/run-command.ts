/**
 * `rhema run PATHS..`: load and check everything first (tasks, models, policies: any problem
 * is exit 2 before a task starts), then run the suite in the run directory, resuming what an
 * earlier run left. Exit 0 all passed, 1 a task failed or errored, 130 interrupted; an error
 * that stops the run reaches main, which maps its code (2 invalid input, 3 the run could not
 * continue: its own output cannot be written).
 */
import { resolve } from "node:path";
import type { ModelProvider } from "../core/provider.js";
import { RhemaError } from "../core/errors.js";
import { createProvider, type ProviderSpec } from "../providers/provider-factory.js";
import { processCommandRunner } from "../runner/execute/command-runner.js";
import { parseDurationMs } from "../runner/tasks/duration.js";
import { SecretRedactor } from "../runner/execute/secret-redactor.js";
import { loadTasks, parseShard } from "../runner/tasks/suite-loader.js";
import { runSuite, type SuiteRunOutcome } from "../runner/execute/suite-runner.js";
import type { TaskDefinition } from "../runner/tasks/task-file.js";
import { resolveTaskApprovals } from "../runner/tasks/task-policy.js";
import { taskKey } from "../runner/run-dir/task-result.js";
import { EXIT_INTERRUPTED, EXIT_OK, EXIT_TASK_FAILED, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { chooseProgressView } from "./progress-view.js";
import { inputCapsFromEnv } from "./input-caps.js";

export const DEFAULT_RUN_DIR = ".rhema/runs/latest";

export interface RunArgs {
  paths: string[];
  out: string;
  /** Tasks at once: the flag's text, checked by `parseCountFlag` (a positive integer). */
  concurrency: number | string;
  policy?: string;
  provider?: string;
  model?: string;
  filter: string[];
  tag: string[];
  shard?: string;
  junit?: string;
  stats?: string;
  summary?: string;
  restartChanged: boolean;
  retryErrored: boolean;
  reportSkipped: boolean;
  json: boolean;
  /** Step cap for tasks that set none: the flag's text, checked like `concurrency`. */
  maxSteps?: number | string;
  timeout?: string;
  allowEnv: string[];
}

export async function runCommand(args: RunArgs, io: CliIo): Promise<ExitCode> {
  // Every flag is checked before anything is read or written: exit 2 naming the flag.
  const shard = args.shard !== undefined ? parseShard(args.shard) : null;
  const timeoutMs = parseTimeoutFlag(args.timeout);
  const concurrency = parseCountFlag("--concurrency", args.concurrency);
  const maxSteps = args.maxSteps === undefined ? undefined : parseCountFlag("--max-steps", args.maxSteps);
  const caps = inputCapsFromEnv(io.env);
  const loaded = await loadTasks(args.paths, { cwd: io.cwd, filters: args.filter, tags: args.tag, shard, caps });
  if (loaded.tasks.length === 0) throw new RhemaError("usage", `no task to run: ${args.paths.join(" ")} selected none${args.filter.length || args.tag.length || shard ? " (after --filter/--tag/--shard)" : ""}`);
  const providers = createProviders(loaded.tasks, args, io.env);
  const workers = createWorkerProviders(loaded.tasks, io.env);
  const approvals = await resolveTaskApprovals(loaded.tasks, { policyFlag: args.policy, cwd: io.cwd });
  for (const note of approvals.notes) print(io.stderr, `rhema: ${note}`);

  const view = chooseProgressView({ json: args.json, ci: io.env.CI === "true", color: !io.env.NO_COLOR, streams: { out: io.stdout, err: io.stderr } });
  const runDir = resolve(io.cwd, args.out);
  let outcome: SuiteRunOutcome;
  try {
    outcome = await runSuite({
      tasks: loaded.tasks,
      ...(args.reportSkipped ? { skipped: loaded.skipped } : {}),
      runDir,
      concurrency,
      restartChanged: args.restartChanged,
      retryErrored: args.retryErrored,
      reportCopies: reportCopies(args, io.cwd),
      signal: io.interrupt,
      pid: io.pid,
      env: {
        now: () => new Date(),
        redactor: new SecretRedactor(io.env),
        runCommand: processCommandRunner({ baseEnv: io.env, allowEnv: args.allowEnv }),
        shellEnv: io.env,
        allowEnv: args.allowEnv,
        providerFor: (task) => providers.get(taskKey(task))!,
        workerProviderFor: (task) => workers.get(taskKey(task)) ?? null,
        approvalFor: (task) => approvals.approvals.get(taskKey(task))!,
        defaults: { ...(maxSteps !== undefined ? { maxSteps } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
      },
      onProgress: (p) => view.update(p),
    });
  } finally {
    view.close();
  }
  if (!args.json) print(io.stdout, finalSummary(outcome, runDir));
  if (outcome.interrupted) return EXIT_INTERRUPTED;
  return outcome.results.every((r) => r.status === "passed") ? EXIT_OK : EXIT_TASK_FAILED;
}

/** A whole number from 1 up, as `--NAME` gave it; anything else is a usage error quoting the text. */
export function parseCountFlag(flag: string, value: number | string): number {
  const text = String(value).trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new RhemaError("usage", `Expected ${flag} to be a whole number from 1 and up, got "${String(value)}"`);
  return n;
}

function parseTimeoutFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDurationMs(value);
  if (ms === null || ms <= 0) throw new RhemaError("usage", `Expected --timeout as a duration like 90s, 10m or 1h, got "${value}"`);
  return ms;
}

/** One provider per task, made before anything runs, so a missing key is exit 2 up front. */
function createProviders(tasks: readonly TaskDefinition[], args: RunArgs, env: CliIo["env"]): Map<string, ModelProvider> {
  const providers = new Map<string, ModelProvider>();
  for (const task of tasks) {
    const spec = providerSpec(task, args);
    providers.set(taskKey(task), createProvider(spec, env));
  }
  return providers;
}

/** The compaction workers tasks name (`transcript.worker`), made up front like the task models. */
function createWorkerProviders(tasks: readonly TaskDefinition[], env: CliIo["env"]): Map<string, ModelProvider> {
  const workers = new Map<string, ModelProvider>();
  for (const task of tasks) {
    const worker = task.transcript?.worker;
    if (worker) workers.set(taskKey(task), createProvider({ provider: worker.provider, name: worker.name }, env));
  }
  return workers;
}

function providerSpec(task: TaskDefinition, args: RunArgs): ProviderSpec {
  if (task.model?.provider === "scripted") return { provider: "scripted", script: task.model.script, name: taskKey(task) };
  if (task.model) return { provider: task.model.provider, name: task.model.name, ...(task.model.baseUrl ? { baseUrl: task.model.baseUrl } : {}) };
  if (args.provider === undefined) {
    throw new RhemaError("usage", `${task.file}: the task names no model: add \`model:\` to it, or pass --provider and --model`);
  }
  if (args.provider !== "anthropic" && args.provider !== "openai") {
    throw new RhemaError("usage", `Expected --provider to be anthropic or openai (scripted models are given in the task file), got "${args.provider}"`);
  }
  if (!args.model) throw new RhemaError("usage", `--provider ${args.provider} needs --model NAME`);
  return { provider: args.provider, name: args.model };
}

function reportCopies(args: RunArgs, cwd: string) {
  return {
    ...(args.junit ? { junit: resolve(cwd, args.junit) } : {}),
    ...(args.stats ? { stats: resolve(cwd, args.stats) } : {}),
    ...(args.summary ? { summary: resolve(cwd, args.summary) } : {}),
  };
}

/** The closing lines: counts, denials, where the reports are. */
export function finalSummary(outcome: SuiteRunOutcome, runDir: string): string {
  const count = (s: string) => outcome.results.filter((r) => r.status === s).length;
  const denials = outcome.results.reduce((n, r) => n + r.policyDenials.count, 0);
  const lines = [
    `Tasks: ${outcome.results.length} finished — passed ${count("passed")}, failed ${count("failed")}, errored ${count("errored")}` +
      (denials ? `; ${denials} tool call(s) denied by policy` : ""),
  ];
  if (outcome.interrupted) lines.push(`Interrupted: run the same command again to continue (${runDir}).`);
  lines.push(`Reports: ${outcome.reports.junit}, ${outcome.reports.stats}, ${outcome.reports.summary}`);
  return lines.join("\n");
}
