/**
 * Which policy decides each task's tool calls: the task's own (a file, or inline), else the
 * run's --policy (a file or `preset:NAME`), else the read-only preset — said out loud, since a
 * run whose tasks cannot write is rarely what was meant. Every policy is loaded and checked
 * before any task starts — a `--policy` too when every task names its own — so a bad one is exit
 * 2 with its location, and the problems of every policy come together, not one policy per run.
 */
import type { Approval } from "../../core/approval.js";
import { PolicyFileError, formatPolicyIssue, parsePolicyValue, type LoadedPolicy, type PolicyIssue } from "../../policy/file/policy-file.js";
import { loadPolicy } from "../../policy/file/load-policy.js";
import { PolicyApproval } from "../../policy/decide/policy-approval.js";
import { permissiveWarnings } from "../../policy/file/permissive-warnings.js";
import type { SandboxMode } from "../../process/sandbox-mode.js";
import type { TaskDefinition } from "./task-file.js";
import { resolveTaskSandbox, type TaskSandboxSetting } from "./task-sandbox.js";
import { taskKey } from "./task-key.js";

export const DEFAULT_POLICY = "preset:read-only";

export interface TaskApprovals {
  /** A fresh approval per task (by `suite/id`), so denials are counted per task. */
  approvals: Map<string, Approval>;
  /** Warnings and notices for the user. */
  notes: string[];
  /** How many distinct policies are in use. */
  policies: number;
  /** Each task's sandbox setting (by `suite/id`): the strictest of --sandbox, its policy's and its own. */
  sandbox: Map<string, TaskSandboxSetting>;
}

export async function resolveTaskApprovals(
  tasks: readonly TaskDefinition[],
  opts: { policyFlag: string | undefined; cwd: string; sandboxFlag?: SandboxMode | undefined },
): Promise<TaskApprovals> {
  const loaded = new Map<string, LoadedPolicy>();
  const notes: string[] = [];
  const approvals = new Map<string, Approval>();
  const sandbox = new Map<string, TaskSandboxSetting>();
  let defaulted = 0;
  // Every policy in use is loaded first, and all their problems are thrown together. A --policy
  // is loaded (and must be readable and valid) even when every task names its own.
  const sources = new Map<string, () => Promise<LoadedPolicy>>();
  if (opts.policyFlag !== undefined) sources.set(flagKey(opts.policyFlag), flagLoader(opts.policyFlag, opts.cwd));
  for (const task of tasks) {
    const { key, load } = policySource(task, opts);
    if (!sources.has(key)) sources.set(key, load);
  }
  const issues: PolicyIssue[] = [];
  for (const [key, load] of sources) {
    try {
      loaded.set(key, await load());
    } catch (err) {
      if (!(err instanceof PolicyFileError)) throw err;
      issues.push(...err.issues);
    }
  }
  if (issues.length > 0) throw new PolicyFileError(issues[0]!.file, issues);
  // Warnings only for the policies tasks use (a --policy every task overrides warns of nothing).
  const inUse = new Set(tasks.map((task) => policySource(task, opts).key));
  for (const key of inUse) {
    const policy = loaded.get(key)!;
    // A rule naming an MCP server's tools warns only when no task using the policy declares that server.
    const declared = new Set(tasks.filter((task) => policySource(task, opts).key === key).flatMap((task) => Object.keys(task.mcp ?? {})));
    for (const w of policy.warnings) if (w.mcpServer === undefined || !declared.has(w.mcpServer)) notes.push(formatPolicyIssue(w));
    for (const w of permissiveWarnings(policy.policy)) notes.push(`warning: ${w}`);
  }
  for (const task of tasks) {
    const { key } = policySource(task, opts);
    if (task.policy === null && opts.policyFlag === undefined) defaulted += 1;
    const policy = loaded.get(key)!;
    approvals.set(taskKey(task), new PolicyApproval(policy.policy));
    sandbox.set(taskKey(task), resolveTaskSandbox({
      flag: opts.sandboxFlag,
      policy: { sandbox: policy.policy.sandbox, network: policy.policy.network, source: policy.policy.source },
      task: { sandbox: task.sandbox, file: task.file },
    }));
  }
  if (defaulted > 0) {
    notes.push(`${defaulted === 1 ? "1 task names" : `${defaulted} tasks name`} no policy and no --policy was given: ${defaulted === 1 ? "it runs" : "they run"} under the read-only preset (no edits; only read-only commands such as ls, cat, git status)`);
  }
  return { approvals, notes, policies: inUse.size, sandbox };
}

function policySource(task: TaskDefinition, opts: { policyFlag: string | undefined; cwd: string }): { key: string; load: () => Promise<LoadedPolicy> } {
  const policy = task.policy;
  if (policy?.kind === "file") return { key: `file:${policy.path}`, load: () => loadPolicy(policy.path) };
  if (policy?.kind === "inline") {
    return {
      key: `inline:${policy.file}:${policy.line}`,
      load: async () => parsePolicyValue(policy.data, {
        file: policy.file, line: policy.line, column: policy.column,
        locate: (path) => policy.positions[path.join(".")] ?? { line: policy.line, column: policy.column },
      }),
    };
  }
  const spec = opts.policyFlag ?? DEFAULT_POLICY;
  return { key: flagKey(spec), load: flagLoader(spec, opts.cwd) };
}

function flagKey(spec: string): string {
  return `flag:${spec}`;
}

function flagLoader(spec: string, cwd: string): () => Promise<LoadedPolicy> {
  return () => loadPolicy(spec, { baseDir: cwd });
}
