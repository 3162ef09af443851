/**
 * Deciding a shell call from its analysis (semantics in decide.ts): a command that cannot be
 * parsed or judged is denied; then every deny rule against every command layer, operand, file
 * and folder (shell-deny.ts); then the workspace boundary (shell-boundary.ts); then every simple
 * command and written file must be allowed (shell-allow.ts). The first failure is the
 * decision, with its rule and reason.
 */
import type { ApprovalRequest } from "../../core/approval.js";
import type { Policy } from "../file/policy-model.js";
import type { ShellFacts } from "../shell/shell-paths.js";
import { type PolicyDecision, SHELL_ANALYSIS, ruleCoversTool } from "./policy-decision.js";
import { allowedOrDenied, unnamedDynamicCommand } from "./shell-allow.js";
import { boundaryProblem } from "./shell-boundary.js";
import type { ShellContext } from "./shell-context.js";
import { firstDeny } from "./shell-deny.js";

export { shown } from "./shell-context.js";

/** Decides a shell call; `facts` is its analysis with paths resolved. */
export function decideShellCall(request: ApprovalRequest, policy: Policy, facts: ShellFacts): PolicyDecision {
  const analysis = facts.analysis;
  if (analysis.syntaxError !== null) {
    return { decision: "deny", rule: SHELL_ANALYSIS, reason: `${analysis.syntaxError}; a command that cannot be parsed cannot be judged` };
  }
  if (analysis.blockers.length > 0) return { decision: "deny", rule: SHELL_ANALYSIS, reason: analysis.blockers[0]! };
  // A command whose words cannot be read (an unknown wrapper option, a keyword in command position) is not matched against rules at all.
  const blocked = analysis.commands.find((c) => c.blockers.length > 0);
  if (blocked !== undefined) return { decision: "deny", rule: SHELL_ANALYSIS, reason: blocked.blockers[0]! };
  const allowRules = policy.rules.filter((r) => r.effect === "allow" && ruleCoversTool(r, [request.tool]));
  const ctx: ShellContext = { request, policy, facts, allowRules };
  return unnamedDynamicCommand(ctx) ?? firstDeny(ctx) ?? boundaryProblem(ctx) ?? allowedOrDenied(ctx);
}
