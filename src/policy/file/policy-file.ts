/**
 * Reading policy files: YAML read by yaml-source (which locates every node), validated by the
 * zod schema, every problem reported as `file:line:column: message` in a `PolicyFileError` (code
 * `policy_invalid`), and doubtful-but-valid choices returned as warnings beside the policy.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { closest, distance } from "fastest-levenshtein";
import type { z } from "zod";
import { RhemaError, errorMessage, throwIfMachineLimit } from "../../core/errors.js";
import { splitSchemaIssues, type UnknownKey } from "../../yaml-source/schema-keys.js";
import { formatLocatedMessage, parseYamlSource, valueAtPath, type SourcePosition, type YamlProblem } from "../../yaml-source/yaml-source.js";
import { type Policy, compilePolicy } from "./policy-model.js";
import { type PolicyFileContent, policyFileSchema } from "./policy-schema.js";

/** One located problem or remark; `line`/`column` are 1-based and absent when not tied to a place. */
export interface PolicyIssue {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

export interface PolicyWarning extends PolicyIssue {
  /**
   * A rule's tool name of an MCP server's tools (`mcp__<server>__…`) names this server: the
   * warning holds only where no task using the policy declares it (the runner drops it there).
   */
  mcpServer?: string;
}

/** An MCP tool name or pattern, `mcp__<server>__<tool>` (the tool may be a `*` pattern): its server. */
export function mcpServerOfToolName(name: string): string | null {
  const match = /^mcp__([A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*)__./.exec(name);
  return match ? match[1]! : null;
}

/** `file:line:column: message`. */
export function formatPolicyIssue(issue: PolicyIssue): string {
  const at = issue.line === undefined ? undefined : { line: issue.line, column: issue.column ?? 1 };
  return formatLocatedMessage(issue.file, at, issue.message);
}

/** A policy that cannot be used: names the file, line and column of each problem. */
export class PolicyFileError extends RhemaError {
  readonly file: string;
  readonly issues: readonly PolicyIssue[];
  constructor(file: string, issues: readonly PolicyIssue[], options?: { cause?: unknown }) {
    super("policy_invalid", issues.map(formatPolicyIssue).join("\n"), options);
    this.file = file;
    this.issues = issues;
  }
  /** Line of the first problem, if it has one. */
  get line(): number | undefined {
    return this.issues[0]?.line;
  }
  get column(): number | undefined {
    return this.issues[0]?.column;
  }
}

export interface LoadedPolicy {
  policy: Policy;
  warnings: PolicyWarning[];
}

export interface ParsePolicyOptions {
  /** The file name shown in rule labels; default: the basename of `file`. */
  label?: string;
}

/** Where the value at a key path is written. */
type Locate = (path: readonly PropertyKey[]) => SourcePosition;

/** "`x`: unknown key `k`; did you mean `key`?" — one unknown key, where it is written. */
function describeUnknownKey(u: UnknownKey): string {
  const where = u.path.length > 0 ? `${u.path.join(".")}: ` : "";
  return `${where}unknown key \`${u.key}\`${u.suggestion === null ? "" : `; did you mean \`${u.suggestion}\`?`}`;
}

/**
 * Every problem of a policy value that fails its schema, at once: each unknown key on its own
 * (with a "did you mean"), the other schema issues, and misspelt tool names wherever the rules'
 * shape can still be read — so a user fixes them in one round, not one kind per run.
 */
function schemaIssues(issues: readonly z.core.$ZodIssue[], value: unknown, file: string, where: {
  locateKey: (path: readonly PropertyKey[], key: string) => SourcePosition;
  locateIssue: (issue: z.core.$ZodIssue) => SourcePosition;
  locate: Locate;
  prefix: string;
}): PolicyIssue[] {
  const { unknownKeys, others } = splitSchemaIssues(issues, policyFileSchema, value);
  const found: (PolicyIssue & SourcePosition)[] = [
    ...unknownKeys.map((u) => ({ file, ...where.locateKey(u.path, u.key), message: `${where.prefix}${describeUnknownKey(u)}` })),
    ...others.map((issue) => ({ file, ...where.locateIssue(issue), message: `${where.prefix}${describeIssue(issue, value)}` })),
    ...misspelledToolIssues(rawRuleToolNames(value), file, where.locate, where.prefix),
  ];
  return found.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Tool names in rules of a value that may not fit the schema: wherever `rules[i].allow|deny.tools[j]` is a string. */
function rawRuleToolNames(value: unknown): { name: string; path: PropertyKey[] }[] {
  const rules = valueAtPath(value, ["rules"]);
  if (!Array.isArray(rules)) return [];
  return rules.flatMap((_rule, i) => (["allow", "deny"] as const).flatMap((effect) => {
    const tools = valueAtPath(value, ["rules", i, effect, "tools"]);
    if (!Array.isArray(tools)) return [];
    return tools.flatMap((name, t) => (typeof name === "string" ? [{ name, path: ["rules", i, effect, "tools", t] }] : []));
  }));
}

function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  const missing = issue.path.length > 0 && (issue.code === "invalid_type" || issue.code === "invalid_value") && valueAtPath(value, issue.path) === undefined;
  if (missing) {
    const parent = issue.path.slice(0, -1).join(".");
    return `${parent === "" ? "" : `${parent}: `}missing key \`${String(issue.path.at(-1))}\``;
  }
  if (issue.code === "unrecognized_keys") {
    return `${where}unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `\`${k}\``).join(", ")}`;
  }
  return `${where}${issue.message}`;
}

/** Parses and validates a policy file's text; throws `PolicyFileError` with every located problem. */
export function parsePolicyText(text: string | Uint8Array, file: string, options: ParsePolicyOptions = {}): LoadedPolicy {
  const yaml = parseYamlSource(text);
  if (yaml.encodingProblem !== null) throw new PolicyFileError(file, [{ file, ...yaml.encodingProblem }]);
  const invalidYaml = (problems: readonly YamlProblem[]): PolicyFileError =>
    new PolicyFileError(file, problems.map((p) => ({ file, line: p.line, column: p.column, message: `invalid YAML: ${p.message}` })));
  if (yaml.syntaxProblems.length > 0) throw invalidYaml(yaml.syntaxProblems);
  if (yaml.rootKind === "empty") {
    throw new PolicyFileError(file, [{ file, line: 1, column: 1, message: "the policy file is empty: it needs version, default and rules" }]);
  }
  const plain = yaml.toValue({ maxAliasCount: 50 });
  if (!plain.ok) throw invalidYaml([plain.problem]);
  const value = plain.value;
  const parsed = policyFileSchema.safeParse(value);
  if (!parsed.success) {
    throw new PolicyFileError(file, schemaIssues(parsed.error.issues, value, file, {
      locateKey: yaml.locateKey, locateIssue: yaml.locateIssue, locate: yaml.locateValue, prefix: "",
    }));
  }
  const misspelled = misspelledToolIssues(ruleToolNames(parsed.data), file, yaml.locateValue);
  if (misspelled.length > 0) throw new PolicyFileError(file, misspelled);
  const ruleLines = parsed.data.rules.map((_rule, i) => yaml.locateValue(["rules", i]).line);
  const policy = compilePolicy(parsed.data, { source: options.label ?? basename(file), ruleLines });
  return { policy, warnings: policyWarnings(parsed.data, file, yaml.locateValue) };
}

export interface InlinePolicyOptions {
  /** The file the inline policy is written in (a task file). */
  file: string;
  /** Where the inline policy starts in that file; problems without a better place are reported there. */
  line: number;
  column: number;
  /**
   * Where the value at a key path inside the inline policy is written (`["rules", 0, "allow",
   * "tools", 1]`), so a problem or warning points at the offending name, not the block's start.
   */
  locate?: (path: readonly PropertyKey[]) => SourcePosition;
  /** Inline policies may leave out `version` (it can only be 1). Default true. */
  versionOptional?: boolean;
}

/**
 * Validates a policy given as a value inside another file (a task's inline `policy:`). Problems
 * are located at the inline block, with the key path in the message.
 */
export function parsePolicyValue(value: unknown, options: InlinePolicyOptions): LoadedPolicy {
  const { file, line, column } = options;
  const locate: Locate = options.locate ?? (() => ({ line, column }));
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  const withVersion = isObject && options.versionOptional !== false && !("version" in value) ? { version: 1, ...value } : value;
  const parsed = policyFileSchema.safeParse(withVersion);
  if (!parsed.success) {
    throw new PolicyFileError(file, schemaIssues(parsed.error.issues, withVersion, file, {
      locateKey: (path, key) => locate([...path, key]), locateIssue: (issue) => locate(issue.path), locate, prefix: "policy: ",
    }));
  }
  const misspelled = misspelledToolIssues(ruleToolNames(parsed.data), file, locate, "policy: ");
  if (misspelled.length > 0) throw new PolicyFileError(file, misspelled);
  const policy = compilePolicy(parsed.data, { source: `${basename(file)}:${line}` });
  return { policy, warnings: policyWarnings(parsed.data, file, locate) };
}

/** The built-in tools' names, as policies and `policy check` spell them. */
export const BUILTIN_TOOL_NAMES: readonly string[] = ["read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "shell"];

/**
 * The built-in tool a name is probably a misspelling of (`edit_fiel` → `edit_file`,
 * `shel` → `shell`): the closest by edit distance, within two edits or a third of its length.
 */
export function closestToolName(name: string): string | null {
  const best = closest(name, [...BUILTIN_TOOL_NAMES]);
  return distance(name, best) <= Math.max(2, Math.floor(best.length / 3)) ? best : null;
}

/** "`x` is not a built-in tool: did you mean `y`?" or the list of built-in tools. */
export function unknownToolMessage(name: string): string {
  const guess = closestToolName(name);
  return guess !== null
    ? `\`${name}\` is not a built-in tool: did you mean \`${guess}\`?`
    : `\`${name}\` is not a built-in tool (${BUILTIN_TOOL_NAMES.join(", ")})`;
}

/** Each rule's tool names with their key paths, in file order. */
function ruleToolNames(content: PolicyFileContent): { name: string; path: PropertyKey[] }[] {
  return content.rules.flatMap((rule, i) => {
    const effect = rule.allow !== undefined ? "allow" : "deny";
    return ((rule.allow ?? rule.deny)?.tools ?? []).map((name, t) => ({ name, path: ["rules", i, effect, "tools", t] }));
  });
}

/**
 * Tool names that are a misspelling of a built-in one are errors, not warnings: a `deny` of
 * `shel` would silently deny nothing. A name far from every built-in is a custom tool (a warning).
 */
function misspelledToolIssues(names: readonly { name: string; path: PropertyKey[] }[], file: string, locate: Locate, prefix = ""): (PolicyIssue & SourcePosition)[] {
  return names
    .filter(({ name }) => !BUILTIN_TOOL_NAMES.includes(name) && closestToolName(name) !== null)
    .map(({ name, path }) => ({ file, ...locate(path), message: `${prefix}${path.join(".")}: ${unknownToolMessage(name)}` }));
}

/**
 * Valid but doubtful: a default that allows everything, tool names that are not built in (and
 * not a misspelling of one: that is an error), `*` patterns.
 */
export function policyWarnings(content: PolicyFileContent, file: string, locate: Locate): PolicyWarning[] {
  const warnings: PolicyWarning[] = [];
  const warn = (path: readonly PropertyKey[], message: string): void => {
    warnings.push({ file, ...locate(path), message: `warning: ${message}` });
  };
  if (content.default === "allow" && content.rules.length === 0) {
    warn(["default"], "`default: allow` with no rules allows every tool call, shell commands included");
  } else if (content.default === "allow" && !content.rules.some((r) => r.deny !== undefined)) {
    warn(["default"], "`default: allow` and no deny rule: every call is allowed, the allow rules change nothing");
  }
  for (const { name, path } of ruleToolNames(content)) {
    const server = mcpServerOfToolName(name);
    if (server !== null) {
      warnings.push({ file, ...locate(path), mcpServer: server, message: `warning: \`${name}\` names the tools of the MCP server \`${server}\`, which no task using this policy declares under mcp:` });
    } else if (!BUILTIN_TOOL_NAMES.includes(name)) warn(path, `${unknownToolMessage(name)}; fine if it is a custom tool`);
  }
  content.rules.forEach((rule, i) => {
    const effect = rule.allow !== undefined ? "allow" : "deny";
    rule.allow?.shell?.forEach((pattern, p) => {
      if (/^\s*\*{1,2}\s*$/.test(pattern)) warn(["rules", i, effect, "shell", p], `\`${pattern}\` allows every command`);
    });
  });
  return warnings;
}

/** Reads and parses a policy file. */
export async function loadPolicyFile(file: string, options: ParsePolicyOptions = {}): Promise<LoadedPolicy> {
  let text: Buffer;
  try {
    text = await readRegularPolicyFile(file);
  } catch (err) {
    // Out of file handles or memory is the machine's (exit 3, the same command continues), not a bad file.
    throwIfMachineLimit(err);
    throw new PolicyFileError(file, [{ file, message: `cannot read the policy file: ${errorMessage(err)}` }], { cause: err });
  }
  return parsePolicyText(text, file, options);
}

/**
 * The text of a regular file: opened without blocking and checked on the descriptor, so a FIFO
 * (which `readFile` would wait on without end) or a device is refused at once, naming it.
 * (The policy layer reads its own files: store/input-file.ts does the same for the runner.)
 */
async function readRegularPolicyFile(file: string): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error("EISDIR: illegal operation on a directory, read"), { code: "EISDIR" });
    if (!info.isFile()) throw new Error(`${file} is ${info.isFIFO() ? "a FIFO" : info.isSocket() ? "a socket" : "a device"}, not a regular file: nothing was read from it`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
