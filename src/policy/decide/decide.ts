/**
 * The decision: a pure function from a request and a policy (and, for a shell call, the
 * analysed command) to allow or deny, naming the rule and the reason. Semantics:
 *
 * - **Deny beats allow.** Every deny rule is checked first, in file order; the first that
 *   matches decides. Only then must the call be allowed — by a rule, or by `default: allow`.
 *   There is no "ask": headless, anything not allowed is denied at once.
 * - **A rule's matchers all have to match** (AND). `tools` names tools; `paths` are workspace
 *   globs; `shell` patterns apply only to shell calls (a request carrying `command`).
 * - **Paths**: a deny rule matches when *any* path the call touches matches one of its globs;
 *   an allow rule only when there is at least one path and *every* path matches. So
 *   `allow: {tools: [write_file], paths: ["src/**"]}` allows a write only inside src/, and
 *   `deny: {paths: [".github/**"]}` (no tools) denies any tool touching .github/. A path outside
 *   the workspace is always denied (`workspace boundary`).
 * - **Shell calls**: the command is split into simple commands (see shell-analysis.ts). Each
 *   must be allowed — by a rule whose `shell` pattern matches it, or a rule that names the shell
 *   tool in `tools` — and none denied; deny patterns see every wrapper layer (`sudo`, `xargs`,
 *   `find -exec`, `bash -c '…'`). Redirections and `tee` files are writes, judged by the rules
 *   that govern `write_file` (a rule listing `write_file`, the shell tool, or no tools); deny
 *   rules with `paths` also see a command's arguments, so `cat .env` meets `deny: **\/.env`.
 *   In a rule with both `shell` and `paths`, every operand of the matched command must lie
 *   under the paths (a glob operand by the folder it expands in; no operand means the
 *   workspace root, "."); such a rule grants the files the command writes as operands (`tee`),
 *   never the shell's redirections. Constructs that cannot be judged statically — command and process
 *   substitution, a dynamic command name, an environment prefix, a dynamic redirection target,
 *   a relative write after an unknowable `cd` — are denied (`shell analysis`) unless an allow
 *   pattern names them, whatever the default.
 */
import type { ApprovalRequest } from "../../core/approval.js";
import { decideShellCall } from "./decide-shell.js";
import { firstMatchingGlob } from "../file/path-glob.js";
import {
  type PolicyDecision, SHELL_ANALYSIS, WORKSPACE_BOUNDARY, isOutsideWorkspace, listPaths, pathRuleMatches,
} from "./policy-decision.js";
import type { Policy } from "../file/policy-model.js";
import type { ShellFacts } from "../shell/shell-paths.js";

export type { PolicyDecision } from "./policy-decision.js";

/**
 * Decides one call. `shell` is the analysed command for a shell call (`request.command` set);
 * without it a shell call is denied, since nothing can be judged.
 */
export function decide(request: ApprovalRequest, policy: Policy, shell?: ShellFacts): PolicyDecision {
  if (request.command !== undefined) {
    if (shell === undefined) {
      return { decision: "deny", rule: SHELL_ANALYSIS, reason: "the shell command was not analysed, so it cannot be judged" };
    }
    return decideShellCall(request, policy, shell);
  }
  return decideFileCall(request, policy);
}

function decideFileCall(request: ApprovalRequest, policy: Policy): PolicyDecision {
  const { tool, paths } = request;
  const outside = paths.find(isOutsideWorkspace);
  if (outside !== undefined) {
    return { decision: "deny", rule: WORKSPACE_BOUNDARY, reason: `${tool} touches \`${outside}\`, which is outside the workspace` };
  }
  for (const rule of policy.rules) {
    if (rule.effect !== "deny" || !pathRuleMatches(rule, [tool], paths)) continue;
    const path = rule.paths === null ? undefined : paths.find(rule.matchPath!);
    const generated = path === undefined
      ? `${tool} is denied`
      : `${tool} on \`${path}\` matches \`${firstMatchingGlob(rule.paths!, path)}\``;
    return { decision: "deny", rule: rule.label, reason: rule.reason ?? generated };
  }
  for (const rule of policy.rules) {
    if (rule.effect !== "allow" || !pathRuleMatches(rule, [tool], paths)) continue;
    const on = paths.length > 0 ? ` on ${listPaths(paths)}` : "";
    return { decision: "allow", rule: rule.label, reason: rule.reason ?? `${tool}${on} is allowed` };
  }
  if (policy.default === "allow") {
    return { decision: "allow", rule: policy.defaultLabel, reason: `no rule decides ${tool}, and the default is allow` };
  }
  return { decision: "deny", rule: policy.defaultLabel, reason: defaultDenyReason(policy, tool, paths) };
}

/** Says why nothing allowed the call, pointing at a rule for the tool whose paths missed. */
function defaultDenyReason(policy: Policy, tool: string, paths: readonly string[]): string {
  const near = policy.rules.find((r) => r.effect === "allow" && r.shell === null && r.tools?.includes(tool) && r.matchPath !== null);
  if (near !== undefined) {
    const missed = paths.find((p) => !near.matchPath!(p));
    if (missed !== undefined) {
      return `${tool} on \`${missed}\` is outside the paths ${near.label} allows (${near.paths!.join(", ")}), and the default is deny`;
    }
  }
  const on = paths.length > 0 ? ` on ${listPaths(paths)}` : "";
  return `no rule allows ${tool}${on}, and the default is deny`;
}
