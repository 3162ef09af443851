/**
 * `rhema policy check --policy FILE --tool NAME --input JSON [--workspace DIR] [--json]`:
 * decides one tool call the way a run would — the built-in tool's own `plan` resolves its
 * paths, then `PolicyApproval` decides — and prints the decision, the rule and the reason.
 * Exit 0 allow, 1 deny (so a script can branch on it), 2 for a bad policy, an unknown tool,
 * bad input JSON or a missing workspace. A path the tool refuses because it is outside the
 * workspace is a deny by the workspace boundary, as in a run. With `--json` every outcome is
 * one JSON object on stdout: `{decision, rule, reason}` or `{error}` (exit 2) — main prints the
 * flag errors yargs finds (a missing `--policy`, an unknown flag) the same way; warnings stay on
 * stderr. `policyCheck` returns its output instead of printing, so tests call it directly;
 * `policyCheckCommand` is main's handler, and `policyCheckOptions` the one list of its flags.
 */
import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import type { Argv } from "yargs";
import type { ApprovalRequest } from "../core/approval.js";
import { RhemaError, ToolError, errorMessage } from "../core/errors.js";
import type { ToolEffect, ToolPlan } from "../core/tool.js";
import { compileInputChecks } from "../core/tool-input/tool-input-check.js";
import { PolicyApproval, WORKSPACE_BOUNDARY, formatPolicyIssue, loadPolicy, type LoadedPolicy } from "../policy/index.js";
import { BUILTIN_TOOL_NAMES, mcpServerOfToolName, unknownToolMessage } from "../policy/file/policy-file.js";
import { permissiveWarnings } from "../policy/file/permissive-warnings.js";
import { builtinTools } from "../tools/index.js";
import type { ExitCode } from "./exit-codes.js";
import { print, type CliIo } from "./io.js";
import { withExamples } from "./help-format.js";

export interface PolicyCheckArgs {
  /** A policy file or `preset:NAME`. */
  policy: string;
  /** A built-in tool's name; anything else is exit 2 with the list of names. */
  tool: string;
  /** The call's input, as JSON. */
  input: string;
  /** The workspace the call runs in; default `cwd`. */
  workspace?: string;
  json?: boolean;
  /** The directory relative paths are taken from (the CLI's working directory). */
  cwd: string;
}

/** What `policy check` prints and exits with: 0 allow, 1 deny, 2 invalid input. */
export interface PolicyCheckResult {
  exitCode: 0 | 1 | 2;
  stdout: string;
  stderr: string;
}

const EFFECTS: Readonly<Record<string, ToolEffect>> = {
  read_file: "read", list_dir: "read", glob: "read", grep: "read",
  write_file: "write", edit_file: "write", shell: "exec",
};

/** Runs `policy check`. Never throws for bad input: it returns exit code 2 and the message. */
export async function policyCheck(args: PolicyCheckArgs): Promise<PolicyCheckResult> {
  const invalid = (message: string, stderr = ""): PolicyCheckResult => args.json
    ? { exitCode: 2, stdout: `${JSON.stringify({ error: message })}\n`, stderr }
    : { exitCode: 2, stdout: "", stderr: `${stderr}rhema: ${message}\n` };
  let loaded: LoadedPolicy;
  try {
    loaded = await loadPolicy(args.policy, { baseDir: args.cwd });
  } catch (err) {
    if (err instanceof RhemaError) return invalid(err.message);
    throw err;
  }
  // No task declares servers here: a rule naming an MCP server's tools is not doubtful in itself.
  const warnings = [...loaded.warnings.filter((w) => w.mcpServer === undefined).map(formatPolicyIssue), ...permissiveWarnings(loaded.policy).map((w) => `warning: ${w}`)]
    .map((w) => `${w}\n`).join("");
  const mcpServer = mcpServerOfToolName(args.tool);
  if (!BUILTIN_TOOL_NAMES.includes(args.tool) && (mcpServer === null || args.tool.includes("*"))) {
    return invalid(`--tool: ${unknownToolMessage(args.tool)}; the tools are ${BUILTIN_TOOL_NAMES.join(", ")} and an MCP server's mcp__<server>__<tool>`, warnings);
  }
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
  // An MCP tool's input is its server's to check; the policy sees it as the run does: exec, no paths.
  const planned: PlannedCall = mcpServer !== null ? { kind: "planned", plan: { paths: [] } } : await planCall(args.tool, input as Record<string, unknown>, workspace);
  let output: { decision: "allow" | "deny"; rule: string; reason: string };
  if (planned.kind === "outside") {
    output = { decision: "deny", rule: WORKSPACE_BOUNDARY, reason: planned.reason };
  } else if (planned.kind === "rejected") {
    return invalid(`${args.tool} rejects this input before any policy sees it: ${planned.reason}`, warnings);
  } else {
    const { plan } = planned;
    const request: ApprovalRequest = {
      callId: "policy-check", tool: args.tool, effect: EFFECTS[args.tool] ?? "exec", input, workspace, paths: plan.paths,
      ...(plan.command === undefined ? {} : { command: plan.command }),
    };
    const decision = await new PolicyApproval(loaded.policy).decide(request, new AbortController().signal);
    output = { decision: decision.decision, rule: decision.rule ?? "", reason: decision.reason ?? "" };
  }
  const stdout = args.json
    ? `${JSON.stringify(output)}\n`
    : `decision: ${output.decision}\nrule: ${output.rule}\nreason: ${output.reason}\n`;
  return { exitCode: output.decision === "allow" ? 0 : 1, stdout, stderr: warnings };
}

type PlannedCall =
  | { kind: "planned"; plan: ToolPlan }
  /** The tool refuses a path outside the workspace: a run denies that call at the boundary. */
  | { kind: "outside"; reason: string }
  /** The input does not fit the tool (a missing field, a wrong type). */
  | { kind: "rejected"; reason: string };

/** What the call touches, as the engine would see it: the built-in tool's input check and `plan`. */
async function planCall(tool: string, input: Record<string, unknown>, workspace: string): Promise<PlannedCall> {
  const builtin = builtinTools().find((t) => t.spec.name === tool)!;
  const checked = compileInputChecks([builtin.spec]).check(tool, input);
  if (!checked.ok) return { kind: "rejected", reason: checked.message };
  if (!builtin.plan) return { kind: "planned", plan: { paths: [] } };
  try {
    return { kind: "planned", plan: await builtin.plan(checked.input, { workspace, signal: new AbortController().signal }) };
  } catch (err) {
    // The workspace scope's refusal is a ToolError saying "is outside the workspace"; any other
    // ToolError is the input's fault.
    if (err instanceof ToolError && /is outside the workspace/.test(err.message)) return { kind: "outside", reason: err.message };
    if (err instanceof ToolError) return { kind: "rejected", reason: err.message };
    throw err;
  }
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
  return withExamples(y, [
    ["$0 policy check --policy tasks/policies/ci.yaml --tool shell --input '{\"command\":\"npm test\"}'", "exit 0 if allowed, 1 if denied"],
    ["$0 policy check --policy preset:read-only --tool write_file --input '{\"path\":\"src/a.ts\",\"content\":\"x\"}' --json", "the decision as one JSON object"],
  ])
    .option("policy", { type: "string", demandOption: true, describe: "policy file, or preset:read-only|workspace-write|ci" })
    .option("tool", { type: "string", demandOption: true, describe: `built-in tool name (${BUILTIN_TOOL_NAMES.join(", ")}) or an MCP tool's, mcp__SERVER__TOOL` })
    .option("input", { type: "string", demandOption: true, describe: "the call's input as JSON, e.g. '{\"command\":\"npm test\"}'" })
    .option("workspace", { type: "string", describe: "workspace folder (default: the current folder)" })
    .option("json", { type: "boolean", default: false, describe: "print one JSON object: {decision, rule, reason}, or {error} for invalid input" })
    .epilogue("Exit codes: 0 allowed, 1 denied, 2 invalid input (policy, tool name, --input, workspace).");
}
