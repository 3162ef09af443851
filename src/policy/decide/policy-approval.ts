/**
 * `PolicyApproval`: the `Approval` port backed by a policy. For a shell call it parses the
 * command (bash grammar, loaded once), resolves the paths it names through the workspace's
 * symlinks, then calls the pure `decide`. It never asks anyone and never throws for a call it
 * dislikes: a failure to analyse is a denial. It keeps the denials so the runner can report them.
 */
import type { Approval, ApprovalRequest, Decision } from "../../core/approval.js";
import { CancelledError, errorMessage } from "../../core/errors.js";
import { type BashParser, loadBashParser } from "../shell/grammar/bash-parser.js";
import { type PolicyDecision, decide } from "./decide.js";
import { SHELL_ANALYSIS } from "./policy-decision.js";
import type { Policy } from "../file/policy-model.js";
import { analyzeShell } from "../shell/shell-analysis.js";
import { type ShellFacts, type TreeInterest, resolveShellPaths } from "../shell/shell-paths.js";
import { compileGlobs } from "../match/path-glob.js";
import { folderCouldHold } from "./operand-shape.js";

/** One denied call, as the runner reports it. */
export interface PolicyDenial {
  callId: string;
  tool: string;
  rule: string;
  reason: string;
  /** The shell command, for shell calls. */
  command?: string;
  paths: readonly string[];
}

export interface PolicyApprovalOptions {
  /** Supplies the bash parser; default: the shared tree-sitter one. For tests. */
  loadParser?: () => Promise<BashParser>;
}

/** What a folder walk must look for under `policy`: the paths of its deny rules. */
function treeInterest(policy: Policy): TreeInterest {
  const globs = policy.rules.flatMap((r) => (r.effect === "deny" && r.paths !== null ? [...r.paths] : []));
  const denies = globs.length === 0 ? () => false : compileGlobs(globs);
  return { couldHold: (folder) => folderCouldHold(folder, globs), denies };
}

export class PolicyApproval implements Approval {
  readonly policy: Policy;
  readonly #denials: PolicyDenial[] = [];
  readonly #loadParser: () => Promise<BashParser>;
  readonly #interest: TreeInterest;

  constructor(policy: Policy, options: PolicyApprovalOptions = {}) {
    this.policy = policy;
    this.#loadParser = options.loadParser ?? loadBashParser;
    this.#interest = treeInterest(policy);
  }

  /** Denied calls so far, oldest first. */
  get denials(): readonly PolicyDenial[] {
    return this.#denials;
  }

  get denialCount(): number {
    return this.#denials.length;
  }

  async decide(req: ApprovalRequest, signal: AbortSignal): Promise<Decision> {
    if (signal.aborted) throw new CancelledError("the approval was cancelled", { cause: signal.reason });
    const decided = await this.#decide(req);
    if (signal.aborted) throw new CancelledError("the approval was cancelled", { cause: signal.reason });
    // The default's label is the policy's own (`default (SOURCE)`), unlike any rule's: which one decided, as data.
    const decision = { ...decided, ...(decided.rule === this.policy.defaultLabel ? { byDefault: true } : {}) };
    if (decision.decision === "deny") {
      this.#denials.push({
        callId: req.callId, tool: req.tool, rule: decision.rule, reason: decision.reason,
        ...(req.command === undefined ? {} : { command: req.command }), paths: [...req.paths],
      });
    }
    return decision;
  }

  async #decide(req: ApprovalRequest): Promise<PolicyDecision> {
    if (req.command === undefined) return decide(req, this.policy);
    let facts: ShellFacts;
    try {
      const parser = await this.#loadParser();
      facts = await resolveShellPaths(analyzeShell(req.command, parser), req.workspace, { interest: this.#interest });
    } catch (err) {
      return { decision: "deny", rule: SHELL_ANALYSIS, reason: `the command could not be analysed (${errorMessage(err)}), so it is denied` };
    }
    return decide(req, this.policy, facts);
  }
}
