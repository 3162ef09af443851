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
  /** Which rule decided, for people: e.g. `"rule 4 (policy.yaml:12)"` or `"default (policy.yaml)"`. */
  rule?: string;
  /** True when no rule matched and the policy's default decided (`rule` then names the default). */
  byDefault?: boolean;
}

/**
 * A denial as data, kept on the denied call's state record in the session (never in a request):
 * `rule` null when the policy's default denied, else the rule as the decision names it.
 */
export interface Denial {
  rule: string | null;
  reason: string;
}

/**
 * Contract: `decide` resolves promptly (no human in the loop), never throws for a call it
 * merely dislikes (it denies), and rejects only when `signal` is aborted.
 */
export interface Approval {
  decide(req: ApprovalRequest, signal: AbortSignal): Promise<Decision>;
}

/** The tool result a denied call gets, for the model to read: "denied by RULE: REASON". */
export function denialText(decision: Decision): string {
  return `denied by ${decision.rule ?? "policy"}${decision.reason ? `: ${decision.reason}` : ""}`;
}

/** The denial a deny decision records: the default's as rule null, a decision naming no rule as "policy" (as its text says). */
export function denialOf(decision: Decision): Denial {
  return { rule: decision.byDefault ? null : decision.rule ?? "policy", reason: decision.reason ?? "" };
}

/** Allows everything: for library users who trust the model, and for tests. */
export const allowAll: Approval = {
  async decide() {
    return { decision: "allow", rule: "allow-all" };
  },
};
