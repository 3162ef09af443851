/**
 * The approval port: who decides whether a tool call may run. Headless there is nobody to ask,
 * so an implementation answers allow or deny at once.
 */
import type { ToolEffect } from "./tool.js";

export interface ApprovalRequest {
  callId: string;
  tool: string;
  effect: ToolEffect;
  input: unknown;
  /** The canonical workspace root. */
  workspace: string;
  /** Resolved paths the call touches, workspace-relative and `/`-separated. */
  paths: string[];
  /** The command line, for `shell`. */
  command?: string;
}

export interface Decision {
  decision: "allow" | "deny";
  reason?: string;
  /** Which rule decided, e.g. `"rule 4 (policy.yaml:12)"` or `"default"`. */
  rule?: string;
}

/**
 * Contract: `decide` resolves promptly (no human in the loop), never throws for a call it
 * merely dislikes (it denies), and rejects only when `signal` is aborted.
 */
export interface Approval {
  decide(req: ApprovalRequest, signal: AbortSignal): Promise<Decision>;
}

/**
 * The tool result a denied call gets: "denied by RULE: REASON". The model reads it; reports
 * read it back off the session with `readDenial` (so denials survive resumes).
 */
export function denialText(decision: Decision): string {
  return `denied by ${decision.rule ?? "policy"}${decision.reason ? `: ${decision.reason}` : ""}`;
}

/** The rule and reason of a `denialText`, or null for any other text. */
export function readDenial(text: string): { rule: string; reason: string } | null {
  const match = /^denied by (.+?)(?:: ([\s\S]*))?$/.exec(text);
  return match ? { rule: match[1]!, reason: match[2] ?? "" } : null;
}

/** Allows everything: for library users who trust the model, and for tests. */
export const allowAll: Approval = {
  async decide() {
    return { decision: "allow", rule: "allow-all" };
  },
};
