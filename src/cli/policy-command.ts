/**
 * `rhema policy check --policy FILE --tool NAME --input JSON [--workspace DIR] [--json]`:
 * decides one tool call the way a run would — the built-in tool's own `plan` resolves its
 * paths, then `PolicyApproval` decides — and prints the decision, the rule and the reason.
 * Exit 0 whatever the decision; 2 for a bad policy, bad input JSON or a missing workspace.
 * `policyCheck` returns its output instead of printing, so tests call it directly;
 * `policyCheckCommand` is main's handler, and `policyCheckOptions` the one list of its flags.
 */
import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import type { Argv } from "yargs";
import type { ApprovalRequest } from "../core/approval.js";
import { RhemaError, errorMessage } from "../core/errors.js";
import type { ToolEffect, ToolPlan } from "../core/tool.js";
import { compileInputChecks } from "../core/tool-input-check.js";
import { PolicyApproval, formatPolicyIssue, loadPolicy, type LoadedPolicy } from "../policy/index.js";
import { builtinTools } from "../tools/index.js";
import type { ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";

export interface PolicyCheckArgs {
  /** A policy file or `preset:NAME`. */
  policy: string;
  tool: string;
  /** The call's input, as JSON. */
  input: string;
  /** The workspace the call runs in; default `cwd`. */
  workspace?: string;
  json?: boolean;
  /** The directory relative paths are taken from (the CLI's working directory). */
  cwd: string;
}

export interface PolicyCheckResult {
  exitCode: 0 | 2;
  stdout: string;
  stderr: string;
}

const EFFECTS: Readonly<Record<string, ToolEffect>> = {
  read_file: "read", list_dir: "read", glob: "read", grep: "read",
  write_file: "write", edit_file: "write", shell: "exec",
};

const invalid = (message: string, stderr = ""): PolicyCheckResult => ({ exitCode: 2, stdout: "", stderr: `${stderr}rhema: ${message}\n` });

/** Runs `policy check`. Never throws for bad input: it returns exit code 2 and the message. */
export async function policyCheck(args: PolicyCheckArgs): Promise<PolicyCheckResult> {
  let loaded: LoadedPolicy;
  try {
    loaded = await loadPolicy(args.policy, { baseDir: args.cwd });
  } catch (err) {
    if (err instanceof RhemaError) return invalid(err.message);
    throw err;
  }
  const warnings = loaded.warnings.map((w) => `${formatPolicyIssue(w)}\n`).join("");
  let input: unknown;
  try {
    input = JSON.parse(args.input);
  } catch (err) {
    return invalid(`--input is not valid JSON: ${errorMessage(err)}`, warnings);
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return invalid(`--input must be a JSON object (the tool call's input), got ${JSON.stringify(input)}`, warnings);
  }
  let workspace: string;
  try {
    workspace = await realpath(resolve(args.cwd, args.workspace ?? "."));
  } catch (err) {
    return invalid(`the workspace cannot be used: ${errorMessage(err)}`, warnings);
  }
  let plan: ToolPlan;
  try {
    plan = await planCall(args.tool, input as Record<string, unknown>, workspace);
  } catch (err) {
    return invalid(`${args.tool} rejects this input before any policy sees it: ${errorMessage(err)}`, warnings);
  }
  const request: ApprovalRequest = {
    callId: "policy-check", tool: args.tool, effect: EFFECTS[args.tool] ?? "exec", input, workspace, paths: plan.paths,
    ...(plan.command === undefined ? {} : { command: plan.command }),
  };
  const decision = await new PolicyApproval(loaded.policy).decide(request, new AbortController().signal);
  const output = { decision: decision.decision, rule: decision.rule ?? "", reason: decision.reason ?? "" };
  const stdout = args.json
    ? `${JSON.stringify(output)}\n`
    : `decision: ${output.decision}\nrule: ${output.rule}\nreason: ${output.reason}\n`;
  return { exitCode: 0, stdout, stderr: warnings };
}

/**
 * What the call touches, as the engine would see it: the built-in tool's `plan`, or for a
 * custom tool name, `path` and `command` fields taken at face value.
 */
async function planCall(tool: string, input: Record<string, unknown>, workspace: string): Promise<ToolPlan> {
  const builtin = builtinTools().find((t) => t.spec.name === tool);
  if (builtin?.plan) {
    const checked = compileInputChecks([builtin.spec]).check(tool, input);
    if (!checked.ok) throw new Error(checked.message);
    return builtin.plan(checked.input, { workspace, signal: new AbortController().signal });
  }
  const paths = typeof input.path === "string" ? [input.path] : [];
  return typeof input.command === "string" ? { paths, command: input.command } : { paths };
}

/** `policy check` as main runs it: flags and the process's io in, the output printed, the exit code out. */
export async function policyCheckCommand(flags: Omit<PolicyCheckArgs, "cwd">, io: CliIo): Promise<ExitCode> {
  const result = await policyCheck({ ...flags, cwd: io.cwd });
  if (result.stdout) print(io.stdout, result.stdout);
  if (result.stderr) print(io.stderr, result.stderr);
  return result.exitCode;
}

/** The options of `policy check`, for its yargs builder: the one place they are declared. */
export function policyCheckOptions<T>(y: Argv<T>) {
  return y
    .option("policy", { type: "string", demandOption: true, describe: "policy file, or preset:read-only|workspace-write|ci" })
    .option("tool", { type: "string", demandOption: true, describe: "tool name, e.g. shell or write_file" })
    .option("input", { type: "string", demandOption: true, describe: "the call's input as JSON, e.g. '{\"command\":\"npm test\"}'" })
    .option("workspace", { type: "string", describe: "workspace folder (default: the current folder)" })
    .option("json", { type: "boolean", default: false, describe: "print one JSON object {decision, rule, reason}" });
}
