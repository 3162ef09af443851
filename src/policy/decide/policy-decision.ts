/**
 * The shape of a policy decision and the small rule tests both deciders share (file calls in
 * decide.ts, shell calls in decide-shell.ts).
 */
import type { PolicyRule } from "../file/policy-model.js";

export interface PolicyDecision {
  decision: "allow" | "deny";
  /** `rule 4 (policy.yaml:12)`, `default (policy.yaml)`, `shell analysis` or `workspace boundary`. */
  rule: string;
  /** A sentence the model (or a person) can act on. */
  reason: string;
}

/** The rule label of denials the shell analysis makes itself (unparseable or unjudgeable commands). */
export const SHELL_ANALYSIS = "shell analysis";
/** The rule label of denials for paths outside the workspace. */
export const WORKSPACE_BOUNDARY = "workspace boundary";

/** True when the rule has no `tools` or names one of `tools` (a name with `*` is a pattern: `mcp__github__*`). */
export function ruleCoversTool(rule: PolicyRule, tools: readonly string[]): boolean {
  return rule.tools === null || tools.some((tool) => rule.tools!.some((name) => toolNameMatches(name, tool)));
}

/** Whether a rule's tool name covers `tool`: the same name, or a pattern whose `*` stands for any characters. */
export function toolNameMatches(name: string, tool: string): boolean {
  if (!name.includes("*")) return name === tool;
  const pattern = name.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${pattern}$`).test(tool);
}

/** A path that left the workspace: absolute, or climbing out with `..`. */
export function isOutsideWorkspace(path: string): boolean {
  return path.startsWith("/") || path === ".." || path.startsWith("../") || /^[A-Za-z]:/.test(path);
}

export function listPaths(paths: readonly string[]): string {
  const shown = paths.slice(0, 3).map((p) => `\`${p}\``).join(", ");
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

/** Whether a rule without shell patterns matches a call of one of `tools` on `paths`. */
export function pathRuleMatches(rule: PolicyRule, tools: readonly string[], paths: readonly string[]): boolean {
  if (rule.shell !== null || !ruleCoversTool(rule, tools)) return false;
  if (rule.matchPath === null) return true;
  return rule.effect === "deny" ? paths.some(rule.matchPath) : paths.length > 0 && paths.every(rule.matchPath);
}

