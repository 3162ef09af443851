/** `rhema validate`, `rhema report merge` and `rhema report html`. */
import { resolve } from "node:path";
import { PolicyFileError, formatPolicyIssue, loadPolicyFile } from "../policy/file/policy-file.js";
import { permissiveWarnings } from "../policy/file/permissive-warnings.js";
import { mergeRunReports } from "../runner/reports/report-merge.js";
import { JUNIT_CASES } from "../runner/reports/report-meta.js";
import { checkReportHtmlPaths, writeReportHtml } from "../runner/reports/report-html-file.js";
import { loadTasks } from "../runner/tasks/suite-loader.js";
import { parseLimitFlag, planSuite } from "../runner/plan/plan-suite.js";
import type { TaskDefinition } from "../runner/tasks/task-file.js";
import { fewestPassing, fewestTrialsToPass } from "../runner/trials/trial-gate.js";
import { gateOf, repeatsOf } from "../runner/trials/trial.js";
import { readQuarantine, type RunRequest } from "../runner/execute/run-request.js";
import { RhemaError, formatUsd } from "../core/errors.js";
import { parseTrialFlags, parseUsdFlag } from "./run-command.js";
import { describeSandboxSetting } from "../runner/tasks/task-sandbox.js";
import { baseTaskKey, compareTasks, taskKey } from "../runner/tasks/task-key.js";
import { loadQuarantineFile } from "../runner/tasks/quarantine-file.js";
import { loadMatrixFile, type CellBudget } from "../runner/tasks/matrix-file.js";
import type { SandboxMode } from "../process/sandbox-mode.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { inputCapsFromEnv } from "./input-caps.js";
import { formatCostTotal, sumCosts } from "../runner/pricing/cost-figures.js";
import { counted } from "../core/counted.js";
import { parseKList } from "../runner/trials/trial-figures.js";
import { RUN_FILES } from "../runner/run-dir/run-dir.js";

/** `rhema validate`'s arguments: the paths and the run flags the planner reads (as `rhema run` takes them). */
export interface ValidateArgs {
  paths: string[];
  policy?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  baseUrl?: string | undefined;
  sandbox?: SandboxMode | undefined;
  pricing?: string | undefined;
  calibration?: string | undefined;
  matrix?: string | undefined;
  maxCost?: number | string | undefined;
  timeout?: string | undefined;
  streamIdle?: string | undefined;
  allowEnv?: string[] | undefined;
  repeats?: number | string | undefined;
  minPassRate?: number | string | undefined;
  gate?: string | undefined;
  /** `--quarantine FILE`: checked too (its format; a label no task of the suite is, a warning). */
  quarantine?: string | undefined;
}

/**
 * Checks task files, every policy they use, and every policy file among the paths (a file whose
 * top level is a policy is validated as one), and plans the tasks as `rhema run` would with the
 * same flags (runner/plan/): a suite validate passes is one run accepts. Runs nothing. Problems
 * throw (exit 2). Warns of a task whose gate no outcome of its trials can pass.
 */
export async function validateCommand(args: ValidateArgs, io: CliIo): Promise<ExitCode> {
  const maxCost = args.maxCost === undefined ? undefined : parseUsdFlag("--max-cost", args.maxCost);
  parseLimitFlag("--timeout", args.timeout);
  const gateFlags = parseGateFlags(args);
  const matrix = args.matrix === undefined ? null : await loadMatrixFile(resolve(io.cwd, args.matrix));
  const loaded = await loadTasks(args.paths, { cwd: io.cwd, caps: inputCapsFromEnv(io.env), matrix });
  const plan = await planSuite(loaded.tasks, {
    ...definedOnly({ provider: args.provider, model: args.model, baseUrl: args.baseUrl, policy: args.policy, pricing: args.pricing, calibration: args.calibration, sandbox: args.sandbox, streamIdle: args.streamIdle }),
    ...(maxCost !== undefined ? { maxCost } : {}),
    allowEnv: args.allowEnv ?? [],
  }, { cwd: io.cwd, env: io.env });
  const pricing = plan.pricingFile;
  // A policy file both in use and among the paths would be warned about twice: each line once.
  const said = new Set<string>();
  const warn = (line: string): void => {
    if (said.has(line)) return;
    said.add(line);
    print(io.stderr, line);
  };
  for (const note of loaded.tasks.length > 0 ? plan.notes : []) warn(`rhema: ${note}`);
  const quarantine = args.quarantine === undefined ? null
    : await readQuarantine(resolve(io.cwd, args.quarantine), [...loaded.tasks, ...loaded.skipped, ...loaded.otherShards], (note) => warn(`rhema: ${note}`));
  for (const task of loaded.tasks) {
    const warning = unpassableGateWarning(task, gateFlags);
    if (warning !== null) warn(`rhema: warning: ${warning}`);
  }
  // Every policy file's problems together, not one file per run.
  const policies = await Promise.all(loaded.policies.map((file) => loadPolicyFile(file).catch((err: unknown) => {
    if (err instanceof PolicyFileError) return err;
    throw err;
  })));
  // A matrix file among the paths is checked as one (it applies only when --matrix names it).
  for (const file of loaded.matrices) if (file !== matrix?.file) await loadMatrixFile(file);
  // So is a quarantine file (it applies only when --quarantine names it).
  for (const file of loaded.quarantines) if (file !== quarantine?.file) await loadQuarantineFile(file);
  const problems = policies.flatMap((p) => (p instanceof PolicyFileError ? p.issues : []));
  if (problems.length > 0) throw new PolicyFileError(problems[0]!.file, problems);
  for (const policy of policies) {
    if (policy instanceof PolicyFileError) continue;
    for (const w of policy.warnings) warn(`rhema: ${formatPolicyIssue(w)}`);
    for (const w of permissiveWarnings(policy.policy)) warn(`rhema: warning: ${w}`);
  }
  const pricingNote = (pricing ? `, a pricing file of ${counted(pricing.models.length, "model", "models")}` : "") +
    (quarantine ? `, a quarantine file of ${counted(quarantine.entries.length, "task")}` : "");
  if (loaded.tasks.length === 0) {
    print(io.stdout, `valid: ${counted(loaded.policies.length, "policy file", "policy files")}${pricingNote}`);
    return EXIT_OK;
  }
  const suites = new Set(loaded.tasks.map((t) => t.suite));
  const taskCount = new Set(loaded.tasks.map(baseTaskKey)).size;
  const policyFiles = loaded.policies.length > 0 ? ` and ${counted(loaded.policies.length, "policy file", "policy files")}` : "";
  const cellNote = loaded.variants === null ? "" : ` × ${counted(loaded.variants.cells.length, "cell", "cells")} of the matrix`;
  print(io.stdout, `valid: ${counted(taskCount, "task", "tasks")}${cellNote} in ${counted(suites.size, "suite", "suites")}, ` +
    `${counted(plan.policies, "policy", "policies")} in use${policyFiles}${pricingNote}`);
  if (loaded.variants !== null) {
    for (const cell of loaded.variants.cells) print(io.stdout, `  cell ${cell.variant}${cellBudgetNote(cell.budget)}`);
    for (const [key, axes] of [...loaded.variants.pinned].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      print(io.stdout, `  pinned: ${key} keeps its own ${axes.join(", ")}`);
    }
  }
  // Each task's effective sandbox and where it came from (nothing is probed: validate runs nothing).
  for (const task of [...loaded.tasks].sort(compareTasks)) {
    const setting = plan.plans.get(taskKey(task))?.sandbox;
    if (setting) print(io.stdout, `  ${taskKey(task)}: ${describeSandboxSetting(setting)}`);
  }
  return EXIT_OK;
}

/** The gate flags as `rhema run` takes them (`parseTrialFlags`): `--repeats N`, `--min-pass-rate R`, `--gate rate|lower`. */
type GateFlags = Pick<RunRequest, "repeats" | "minPassRate" | "gate">;

function parseGateFlags(args: ValidateArgs): GateFlags {
  const { repeats, minPassRate, gate } = parseTrialFlags({ repeats: args.repeats, minPassRate: args.minPassRate, gate: args.gate });
  return { ...(repeats !== undefined ? { repeats } : {}), ...(minPassRate !== undefined ? { minPassRate } : {}), ...(gate !== undefined ? { gate } : {}) };
}

/**
 * "suite/id: rate 0.8 judged on the lower bound: 5 of 5 cannot pass it; it takes 16 of 16" when
 * no outcome of the task's trials passes its gate (its `pass.rate`, else `--min-pass-rate`; its
 * `repeats`, else `--repeats`, else 1); null when some outcome can.
 */
export function unpassableGateWarning(task: TaskDefinition, flags: GateFlags): string | null {
  const gate = gateOf(task, { minPassRate: flags.minPassRate, judgedOn: flags.gate });
  const trials = repeatsOf(task, flags.repeats);
  if (fewestPassing(gate, trials) !== null) return null;
  const needed = fewestTrialsToPass(gate);
  const judged = gate.kind === "rate" ? `rate ${gate.min} judged on ${gate.judgedOn === "lower" ? "the lower bound of its 95 % interval" : "the rate"}` : "every trial";
  return `${taskKey(task)}: ${judged}: ${trials} of ${trials} cannot pass it; ` +
    (needed === null ? "no number of trials can" : `it takes ${needed} of ${needed} (raise repeats:, or lower pass.rate)`);
}

export async function reportMergeCommand(
  args: { dirs: string[]; out: string; allowPartial?: boolean; passAt?: string; junitCases?: string },
  io: CliIo,
): Promise<ExitCode> {
  const passAt = args.passAt === undefined ? [] : parseKList(args.passAt);
  if (!Array.isArray(passAt)) throw new RhemaError("usage", `--pass-at: ${passAt.error}`);
  const outcome = await mergeRunReports(args.dirs.map((d) => resolve(io.cwd, d)), resolve(io.cwd, args.out), {
    cwd: io.cwd, pid: io.pid, allowPartial: args.allowPartial === true,
    passAt, junitCases: JUNIT_CASES.find((c) => c === args.junitCases) ?? "task",
  });
  for (const missing of outcome.missingTranscripts) print(io.stderr, `rhema: transcript not found, not copied: ${missing}`);
  const missingShards = outcome.meta.shards?.missing ?? [];
  if (missingShards.length > 0) print(io.stderr, `rhema: partial merge: ${missingShards.length === 1 ? "shard" : "shards"} ${missingShards.join(", ")} missing; the merged reports say so`);
  const cost = sumCosts(outcome.results);
  const shards = outcome.meta.shards ? ` (shards ${outcome.meta.shards.merged.join(", ")} of ${outcome.meta.shards.count})` : "";
  print(io.stdout, `merged ${counted(outcome.results.length, "task result")} from ${counted(args.dirs.length, "run")}${shards}${cost === null ? "" : `, cost ${formatCostTotal(cost)}`}: ` +
    `${outcome.files.junit}, ${outcome.files.stats}, ${outcome.files.summary}`);
  return EXIT_OK;
}

/** `rhema report html DIR [--out FILE]`: the run directory's page, written at DIR/report.html or FILE. */
export async function reportHtmlCommand(args: { dir: string; out?: string }, io: CliIo): Promise<ExitCode> {
  const dir = resolve(io.cwd, args.dir);
  const out = args.out === undefined ? resolve(dir, RUN_FILES.html) : resolve(io.cwd, args.out);
  await checkReportHtmlPaths(dir, out);
  print(io.stdout, `wrote ${await writeReportHtml(dir, out)}`);
  return EXIT_OK;
}

/** `obj` without its undefined fields (the planner's flags are optional, not undefined). */
function definedOnly<T extends Record<string, unknown>>(obj: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/** ` (budget $2.00, 100000 tokens)`: what validate says of a cell's budget; empty for none. */
function cellBudgetNote(budget: CellBudget | undefined): string {
  if (budget === undefined) return "";
  const parts = [...(budget.maxCostUsd !== undefined ? [formatUsd(budget.maxCostUsd)] : []), ...(budget.maxTokens !== undefined ? [`${budget.maxTokens} tokens`] : [])];
  return ` (budget ${parts.join(", ")})`;
}
