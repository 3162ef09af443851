/**
 * `rhema run PATHS..`: load and check everything first (tasks, models, policies: any problem
 * is exit 2 before a task starts), then run the suite in the run directory, resuming what an
 * earlier run left. Exit 0 all passed, 1 a task failed, errored or stopped on a budget (unless
 * --stopped-ok), 3 a provider refused the run (its key, its quota: one line names it and the fix),
 * 130 interrupted; an error
 * that stops the run reaches main, which maps its code (2 invalid input, 3 the run could not
 * continue: its own output cannot be written).
 */
import { join, resolve } from "node:path";
import { runRequest, type RunRequest, type RunRequestOutcome } from "../runner/execute/run-request.js";
import { EXIT_CANNOT_CONTINUE, EXIT_INTERRUPTED, EXIT_OK, EXIT_TASK_FAILED, type ExitCode } from "./exit-codes.js";
import { refusalMessage } from "../runner/reports/refusal-text.js";
import { print, type CliIo } from "./io.js";
import { RhemaError, parseUsd } from "../core/errors.js";
import { chooseProgressView } from "./progress-view.js";
import { inputCapsFromEnv } from "./input-caps.js";
import { lockTimingFromEnv } from "./lock-timing.js";
import { formatCostTotal, sumCosts } from "../runner/pricing/cost-figures.js";
import { counted } from "../core/counted.js";
import { parseKList } from "../runner/trials/trial-figures.js";
import { failsGate, selectedTaskVerdicts } from "../runner/reports/task-trials.js";
import { JUNIT_CASES } from "../runner/reports/report-meta.js";
import { parsePassRate } from "../runner/trials/trial-gate.js";
import { MAX_REPEATS } from "../runner/tasks/task-schema.js";
import { taskKey } from "../runner/tasks/task-key.js";
import { trialLabel } from "../runner/trials/trial-key.js";
import { RUN_FILES, trialKeyOf } from "../runner/run-dir/run-dir.js";
import type { TaskResult, TaskTrialPlan } from "../runner/run-dir/task-result.js";

export const DEFAULT_RUN_DIR = ".rhema/runs/latest";

export interface RunArgs extends Omit<RunRequest, "concurrency" | "maxSteps" | "pricing" | "maxCost" | "maxTokens" | "repeats" | "minPassRate" | "gate" | "passAt" | "junitCases"> {
  /** The trial flags as given: checked by `parseTrialFlags`. */
  repeats?: number | string | undefined;
  minPassRate?: number | string | undefined;
  gate?: string | undefined;
  passAt?: string | undefined;
  junitCases?: string | undefined;
  /** Tasks at once: the flag's text, checked by `parseCountFlag` (a positive integer). */
  concurrency: number | string;
  /** Step cap for tasks that set none: the flag's text, checked like `concurrency`. */
  maxSteps?: number | string | undefined;
  /** `--pricing FILE`: a pricing file, read and checked before anything runs. */
  pricing?: string | undefined;
  /** The run's budgets, as the flags' text: dollars (a number above 0) and tokens (a whole number from 1 up). */
  maxCost?: number | string | undefined;
  maxTokens?: number | string | undefined;
  /** A task stopped on a budget does not fail the run (exit 0 if every other task passed). */
  stoppedOk?: boolean;
  json: boolean;
}

export async function runCommand(args: RunArgs, io: CliIo): Promise<ExitCode> {
  // Made at the first progress, after the checks and notes, so nothing prints under it.
  let view: ReturnType<typeof chooseProgressView> | undefined;
  let outcome: RunRequestOutcome;
  try {
    // Every flag is checked before anything is read or written: exit 2 naming the flag.
    const concurrency = parseCountFlag("--concurrency", args.concurrency);
    const maxSteps = args.maxSteps === undefined ? undefined : parseCountFlag("--max-steps", args.maxSteps);
    const maxCost = args.maxCost === undefined ? undefined : parseUsdFlag("--max-cost", args.maxCost);
    const maxTokens = args.maxTokens === undefined ? undefined : parseCountFlag("--max-tokens", args.maxTokens);
    const trials = parseTrialFlags(args);
    const { maxSteps: _given, maxCost: _cost, maxTokens: _tokens, stoppedOk: _ok, pricing, repeats: _r, minPassRate: _m, gate: _g, passAt: _p, junitCases: _j, ...rest } = args;
    const lockTiming = lockTimingFromEnv(io.env);
    const request: RunRequest = {
      ...rest, ...trials, concurrency, caps: inputCapsFromEnv(io.env), ...(lockTiming ? { lockTiming } : {}),
      ...(maxSteps !== undefined ? { maxSteps } : {}), ...(maxCost !== undefined ? { maxCost } : {}), ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(pricing !== undefined ? { pricing } : {}),
    };
    outcome = await runRequest(request, {
      cwd: io.cwd, env: io.env, pid: io.pid, interrupt: io.interrupt, ...(io.redactor ? { redactor: io.redactor } : {}), ...(io.stalled ? { stalled: io.stalled } : {}),
      onNote: (note) => print(io.stderr, `rhema: ${note}`),
      onProgress: (p) => {
        view ??= chooseProgressView({ json: args.json, ci: io.env.CI === "true", color: !io.env.NO_COLOR, streams: { out: io.stdout, err: io.stderr } });
        view.update(p);
      },
    });
  } finally {
    view?.close();
  }
  if (!args.json) print(io.stdout, finalSummary(outcome, outcome.runDir, reportCopies(args, io.cwd)));
  // A provider that refused the run (a dead key, a spent quota): said once, here; its trials wait unfinished.
  for (const refusal of outcome.refusals) print(io.stderr, `rhema: ${refusalMessage(refusal)}`);
  if (outcome.interrupted) return EXIT_INTERRUPTED;
  if (outcome.refusals.length > 0) return EXIT_CANNOT_CONTINUE;
  // A task passes by its gate (one trial: that trial's status); a quarantined one's failure does not count.
  const verdicts = selectedTaskVerdicts(outcome);
  return verdicts.some((t) => failsGate(t, { stoppedOk: args.stoppedOk === true })) ? EXIT_TASK_FAILED : EXIT_OK;
}

/** A count flag's value as a whole number from 1 up, or exit 2 naming the flag and what was given. */
export function parseCountFlag(flag: string, value: number | string): number {
  const text = String(value).trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new RhemaError("usage", `Expected ${flag} to be a whole number from 1 and up, got "${String(value)}"`);
  return n;
}

/** The trial flags (`--repeats`, `--min-pass-rate`, `--gate`, `--pass-at`, `--junit-cases`) checked: exit 2 naming the flag. */
export function parseTrialFlags(args: Pick<RunArgs, "repeats" | "minPassRate" | "gate" | "passAt" | "junitCases">): Pick<RunRequest, "repeats" | "minPassRate" | "gate" | "passAt" | "junitCases"> {
  const repeats = args.repeats === undefined ? undefined : parseCountFlag("--repeats", args.repeats);
  if (repeats !== undefined && repeats > MAX_REPEATS) throw new RhemaError("usage", `Expected --repeats to be at most ${MAX_REPEATS}, got ${repeats}`);
  const minPassRate = args.minPassRate === undefined ? undefined : parsePassRate(String(args.minPassRate));
  if (minPassRate === null) throw new RhemaError("usage", `Expected --min-pass-rate to be a number above 0 and at most 1 (such as 0.8), got "${String(args.minPassRate)}"`);
  if (args.gate !== undefined && args.gate !== "rate" && args.gate !== "lower") throw new RhemaError("usage", `Expected --gate to be rate or lower, got "${args.gate}"`);
  const junitCases = args.junitCases === undefined ? undefined : JUNIT_CASES.find((c) => c === args.junitCases);
  if (args.junitCases !== undefined && junitCases === undefined) {
    throw new RhemaError("usage", `Expected --junit-cases to be ${JUNIT_CASES.join(", ")}, got "${args.junitCases}"`);
  }
  const passAt = args.passAt === undefined ? undefined : parseKList(args.passAt);
  if (passAt !== undefined && !Array.isArray(passAt)) throw new RhemaError("usage", `Expected --pass-at as k's such as 1,3: ${passAt.error}`);
  return {
    ...(repeats !== undefined ? { repeats } : {}), ...(minPassRate !== undefined ? { minPassRate } : {}),
    ...(args.gate !== undefined ? { gate: args.gate } : {}), ...(passAt !== undefined ? { passAt } : {}),
    ...(junitCases !== undefined ? { junitCases } : {}),
  };
}

/** A dollar flag's value as a number above 0, or exit 2 naming the flag and what was given. */
export function parseUsdFlag(flag: string, value: number | string): number {
  const n = parseUsd(String(value));
  if (n === null) throw new RhemaError("usage", `Expected ${flag} to be a number of dollars above 0 (such as 20 or 0.5), got "${String(value)}"`);
  return n;
}

/** The report copies the flags asked for (`--junit`, `--stats`, `--summary`), as absolute paths. */
export interface ReportCopies {
  junit?: string;
  stats?: string;
  summary?: string;
}

function reportCopies(args: Pick<RunArgs, "junit" | "stats" | "summary">, cwd: string): ReportCopies {
  return {
    ...(args.junit ? { junit: resolve(cwd, args.junit) } : {}),
    ...(args.stats ? { stats: resolve(cwd, args.stats) } : {}),
    ...(args.summary ? { summary: resolve(cwd, args.summary) } : {}),
  };
}

/** The closing lines: counts, denials, cost, where the reports are (the run directory's, then the copies the flags asked for). */
/** A stopped trial as the progress names it: `suite/id`, with `@variant` in a matrix and `#n` among repeats. */
function stoppedLabel(result: TaskResult, plans: readonly TaskTrialPlan[]): string {
  const key = trialKeyOf(result);
  const plan = plans.find((p) => taskKey(p) === taskKey(key));
  return trialLabel(key, { repeats: plan?.trials ?? 1, variants: key.variant !== null });
}

export function finalSummary(outcome: Pick<RunRequestOutcome, "results" | "interrupted" | "reports"> & Partial<Pick<RunRequestOutcome, "plans" | "unfinished" | "quarantine">>, runDir: string, copies: ReportCopies = {}): string {
  // Tasks are counted by their gate; with repeats, the trials and flaky tasks are said too.
  const tasks = selectedTaskVerdicts(outcome).filter((t) => t.status !== "unfinished");
  const count = (s: string) => tasks.filter((t) => t.status === s).length;
  const denials = outcome.results.reduce((n, r) => n + r.policyDenials.count, 0);
  const trials = tasks.reduce((n, t) => n + t.results.length, 0);
  const flaky = tasks.filter((t) => t.figures.flaky).length;
  const lines = [
    `Tasks: ${tasks.length} finished — passed ${count("passed")}, failed ${count("failed")}, errored ${count("errored")}` +
      (count("stopped") ? `, stopped ${count("stopped")}` : "") +
      (trials !== tasks.length ? ` (${counted(trials, "trial")}${flaky ? `, ${counted(flaky, "flaky task")}` : ""})` : "") +
      (denials ? `; ${counted(denials, "tool call")} denied by policy` : ""),
  ];
  const quarantined = tasks.filter((t) => t.quarantine !== null);
  if (quarantined.length > 0) {
    const failing = quarantined.filter((t) => t.status !== "passed");
    lines.push(`Quarantined: ${counted(quarantined.length, "task")}, ${failing.length} not passing (reported, not failing the run)` +
      (failing.length ? `: ${failing.map((t) => `${t.suite}/${t.id} ${t.status}`).join(", ")}` : ""));
  }
  const cost = sumCosts(outcome.results);
  if (cost !== null) lines.push(`Cost: ${formatCostTotal(cost)}`);
  const stopped = outcome.results.filter((r) => r.status === "stopped");
  for (const r of stopped) lines.push(`Stopped: ${stoppedLabel(r, outcome.plans ?? [])}: ${r.error?.message ?? "a budget was spent"}`);
  if (stopped.length) lines.push("Raise the budget (limits.maxCostUsd / maxTokens, a matrix cell's budget, --max-cost, --max-tokens) and run the same command to continue the stopped tasks.");
  if (outcome.results.some((r) => r.status === "errored" && r.error?.code === "step_cap")) {
    lines.push("Raise the step cap (--max-steps, or limits.maxSteps for a task that sets its own) and run the same command to continue the step-capped tasks from their checkpoints.");
  }
  if (outcome.interrupted) lines.push(`Interrupted: run the same command again to continue (${runDir}).`);
  const refused = (outcome.unfinished ?? []).filter((u) => u.refusedBy).length;
  if (refused > 0) lines.push(`Not finished: ${counted(refused, "trial")}, stopped by a provider's refusal; the same command continues them.`);
  const extra = [
    ...(copies.junit ? [`--junit ${copies.junit}`] : []), ...(copies.stats ? [`--stats ${copies.stats}`] : []),
    ...(copies.summary ? [`--summary ${copies.summary} (appended)`] : []),
  ];
  // report.html is written with them (the run's end, an interrupt): the page to read the run by.
  lines.push(`Reports: ${outcome.reports.junit}, ${outcome.reports.stats}, ${outcome.reports.summary}, ${join(runDir, RUN_FILES.html)}${extra.length ? `; copies: ${extra.join(", ")}` : ""}`);
  return lines.join("\n");
}
