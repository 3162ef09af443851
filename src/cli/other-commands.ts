/** `rhema validate` and `rhema report merge`. */
import { resolve } from "node:path";
import { PolicyFileError, formatPolicyIssue, loadPolicyFile } from "../policy/file/policy-file.js";
import { permissiveWarnings } from "../policy/file/permissive-warnings.js";
import { mergeRunReports } from "../runner/reports/report-merge.js";
import { loadTasks } from "../runner/tasks/suite-loader.js";
import { resolveTaskApprovals } from "../runner/tasks/task-policy.js";
import { describeSandboxSetting } from "../runner/tasks/task-sandbox.js";
import { compareTasks, taskKey } from "../runner/run-dir/task-result.js";
import type { SandboxMode } from "../process/sandbox-mode.js";
import { EXIT_OK, type ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { inputCapsFromEnv } from "./input-caps.js";
import { loadPricingFile } from "../runner/tasks/pricing-file.js";
import { formatCostTotal, sumCosts } from "../runner/reports/cost-figures.js";
import { counted } from "../core/counted.js";
import { RhemaError } from "../core/errors.js";
import { parseKList } from "../runner/trials/trial-figures.js";

/**
 * Checks task files, every policy they use, and every policy file among the paths (a file whose
 * top level is a policy is validated as one); runs nothing. Problems throw (exit 2).
 */
export async function validateCommand(args: { paths: string[]; policy?: string; sandbox?: SandboxMode; pricing?: string | undefined }, io: CliIo): Promise<ExitCode> {
  const pricing = args.pricing === undefined ? null : await loadPricingFile(resolve(io.cwd, args.pricing));
  const loaded = await loadTasks(args.paths, { cwd: io.cwd, caps: inputCapsFromEnv(io.env) });
  const approvals = await resolveTaskApprovals(loaded.tasks, { policyFlag: args.policy, cwd: io.cwd, sandboxFlag: args.sandbox });
  // A policy file both in use and among the paths would be warned about twice: each line once.
  const said = new Set<string>();
  const warn = (line: string): void => {
    if (said.has(line)) return;
    said.add(line);
    print(io.stderr, line);
  };
  for (const note of loaded.tasks.length > 0 ? approvals.notes : []) warn(`rhema: ${note}`);
  // Every policy file's problems together, not one file per run.
  const policies = await Promise.all(loaded.policies.map((file) => loadPolicyFile(file).catch((err: unknown) => {
    if (err instanceof PolicyFileError) return err;
    throw err;
  })));
  const problems = policies.flatMap((p) => (p instanceof PolicyFileError ? p.issues : []));
  if (problems.length > 0) throw new PolicyFileError(problems[0]!.file, problems);
  for (const policy of policies) {
    if (policy instanceof PolicyFileError) continue;
    for (const w of policy.warnings) warn(`rhema: ${formatPolicyIssue(w)}`);
    for (const w of permissiveWarnings(policy.policy)) warn(`rhema: warning: ${w}`);
  }
  const pricingNote = pricing ? `, a pricing file of ${counted(pricing.models.length, "model", "models")}` : "";
  if (loaded.tasks.length === 0) {
    print(io.stdout, `valid: ${counted(loaded.policies.length, "policy file", "policy files")}${pricingNote}`);
    return EXIT_OK;
  }
  const suites = new Set(loaded.tasks.map((t) => t.suite));
  const policyFiles = loaded.policies.length > 0 ? ` and ${counted(loaded.policies.length, "policy file", "policy files")}` : "";
  print(io.stdout, `valid: ${counted(loaded.tasks.length, "task", "tasks")} in ${counted(suites.size, "suite", "suites")}, ` +
    `${counted(approvals.policies, "policy", "policies")} in use${policyFiles}${pricingNote}`);
  // Each task's effective sandbox and where it came from (nothing is probed: validate runs nothing).
  for (const task of [...loaded.tasks].sort(compareTasks)) {
    const setting = approvals.sandbox.get(taskKey(task));
    if (setting) print(io.stdout, `  ${taskKey(task)}: ${describeSandboxSetting(setting)}`);
  }
  return EXIT_OK;
}


export async function reportMergeCommand(
  args: { dirs: string[]; out: string; allowPartial?: boolean; passAt?: string; junitCases?: string },
  io: CliIo,
): Promise<ExitCode> {
  const passAt = args.passAt === undefined ? [] : parseKList(args.passAt);
  if (!Array.isArray(passAt)) throw new RhemaError("usage", `--pass-at: ${passAt.error}`);
  const outcome = await mergeRunReports(args.dirs.map((d) => resolve(io.cwd, d)), resolve(io.cwd, args.out), {
    cwd: io.cwd, pid: io.pid, allowPartial: args.allowPartial === true,
    passAt, junitCases: args.junitCases === "trial" ? "trial" : "task",
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
