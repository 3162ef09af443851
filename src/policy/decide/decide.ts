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
 * - **Shell calls**: the command is split into simple commands (see shell-analysis.ts), each
 *   with the directories it may run in (`cd test && echo x > a.js` writes `test/a.js`). Each must
 *   be allowed — by a rule whose `shell` pattern matches it, or a rule that names the shell tool
 *   in `tools` — and none denied. Deny patterns see every layer: wrappers (`sudo`, `nice`,
 *   `ionice`, `timeout`, `xargs`, `find -exec`, `bash -c '…'`, `su -c`, …), git without its
 *   global options, a program by the real name a link gives it, and every tail of an unknown
 *   program's words (`fakeroot rm x`). Files a call writes — redirections, and the write options
 *   and operands of known commands (`tee F`, `sort -o F`, `git log --output=F`, `cp A B`, `uniq
 *   A B`) — are judged by the rules that govern `write_file` (a rule listing `write_file`, the
 *   shell tool, or no tools); an allow rule for the command grants none of them. Deny rules with
 *   `paths` also see every operand and file read: a glob or brace operand by what it could
 *   expand to (`cat .e*` meets `**\/.env`), a folder read whole (`grep -r`, `find -exec`, `cp
 *   -r`) by what it holds on disk or could hold by text, a run-time operand of a file command as
 *   any path. No file read or written lies outside the workspace, through `..`, `~` or a link a
 *   command follows (`ls -L dir` looks through the links among dir's entries; `diff -r`, `zip -r`
 *   and `scp -r` follow the links in a tree unless told not to; `chmod -R -L` changes what they
 *   lead to), and no redirection opens `/dev/tcp`. In a rule with both `shell` and
 *   `paths`, every operand of the matched command must lie under the paths (a glob operand by
 *   the folder it expands in; no operand means the directory it runs in); such a rule grants
 *   the files the command writes as operands (`tee`), never the shell's redirections. A command
 *   or process substitution is allowed when every command inside it is — so is text bash parses
 *   and expands again (`declare -a 'x=([$(cmd)]=1)'`, a subscript or arithmetic text given to a
 *   builtin, `compgen -W 'WORDS'`, the target of `>&WORD`): what it runs is judged like any
 *   command, and arithmetic on a command's output is denied. Constructs that cannot
 *   be judged statically — a dynamic command name, an environment prefix, a dynamic
 *   redirection target, a relative write after an unknowable `cd`, a shell reading commands
 *   from its input, builtins that keep text to run later (`alias`, `hash -p`; a literal `trap`
 *   action is judged as a script), array
 *   subscripts and arithmetic on values the line chose, assignments to variables that run code
 *   (`BASH_ENV`, `PROMPT_COMMAND`), options and git configuration that run programs — are
 *   denied (`shell analysis`) unless an allow pattern names them, whatever the default.
 */
import type { ApprovalRequest } from "../../core/approval.js";
import { decideShellCall } from "./decide-shell.js";
import { firstMatchingGlob } from "../match/path-glob.js";
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
