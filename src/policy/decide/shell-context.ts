/**
 * What the parts of a shell decision share: the call, the policy, the analysed command with its
 * paths resolved, and the small helpers that phrase reasons (decide-shell.ts and its parts).
 */
import type { ApprovalRequest } from "../../core/approval.js";
import type { PolicyRule } from "../file/policy-model.js";
import type { Policy } from "../file/policy-model.js";
import type { PolicyDecision } from "./policy-decision.js";
import type { ShellFileAccess } from "../shell/shell-model.js";
import type { ShellFacts } from "../shell/shell-paths.js";
import type { ShellWord } from "../shell/grammar/shell-words.js";

export interface ShellContext {
  request: ApprovalRequest;
  policy: Policy;
  facts: ShellFacts;
  /** Allow rules that apply to this shell tool. */
  allowRules: PolicyRule[];
}

/** One allowed part of the call and the rule (or default) that allowed it. */
export interface Grant {
  what: string;
  rule: PolicyRule | null;
}

export type Verdict = { ok: true; grant: Grant | null } | { ok: false; decision: PolicyDecision };

export const WRITE_TOOLS = ["write_file", "edit_file"];
export const READ_TOOLS = ["read_file", "grep", "glob", "list_dir"];

export const denyWith = (rule: string, reason: string): Verdict => ({ ok: false, decision: { decision: "deny", rule, reason } });

/** Source text as one short line, for reasons. */
export function shown(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 100 ? `${line.slice(0, 97)}...` : line;
}

export const words = (argv: readonly ShellWord[]): string => shown(argv.map((w) => w.raw).join(" "));

/** True when a rule's `tools` take in this kind of file access from the shell (no tools: every tool). */
export function ruleCoversAccess(rule: PolicyRule, shellTool: string, access: ShellFileAccess["access"]): boolean {
  if (rule.tools === null || rule.tools.includes(shellTool)) return true;
  const tools = access === "write" ? WRITE_TOOLS : READ_TOOLS;
  return rule.tools.some((t) => tools.includes(t));
}
