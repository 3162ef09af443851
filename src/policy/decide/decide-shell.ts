/**
 * Deciding a shell call from its analysis (semantics in decide.ts): first every deny rule
 * against every command layer, operand and file; then every simple command, substitution and
 * written file must be allowed. The first failure is the decision, with its rule and reason.
 */
import type { ApprovalRequest } from "../../core/approval.js";
import { assertNever } from "../../core/errors.js";
import { firstMatchingGlob } from "../file/path-glob.js";
import { type PolicyDecision, SHELL_ANALYSIS, WORKSPACE_BOUNDARY, isOutsideWorkspace, ruleCoversTool } from "./policy-decision.js";
import type { Policy, PolicyRule } from "../file/policy-model.js";
import type { ShellFileAccess, SimpleCommand } from "../shell/shell-analysis.js";
import { type PathOutcome, type ShellFacts, argumentPathTexts, globFolder } from "../shell/shell-paths.js";
import { type PatternSubject, patternAllows, patternDenies, patternNamesRedirect, patternNamesSubstitution } from "../shell/shell-pattern.js";
import type { ShellWord } from "../shell/shell-words.js";

const WRITE_TOOLS = ["write_file", "edit_file"];
const READ_TOOLS = ["read_file"];

interface ShellContext {
  request: ApprovalRequest;
  policy: Policy;
  facts: ShellFacts;
  /** Allow rules that apply to this shell tool. */
  allowRules: PolicyRule[];
}

/** One allowed part of the call and the rule (or default) that allowed it. */
interface Grant {
  what: string;
  rule: PolicyRule | null;
}

type Verdict = { ok: true; grant: Grant | null } | { ok: false; decision: PolicyDecision };

const denyWith = (rule: string, reason: string): Verdict => ({ ok: false, decision: { decision: "deny", rule, reason } });
const words = (argv: readonly ShellWord[]): string => shown(argv.map((w) => w.raw).join(" "));

/** Source text as one short line, for reasons. */
export function shown(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 100 ? `${line.slice(0, 97)}...` : line;
}

/** Decides a shell call; `facts` is its analysis with paths resolved. */
export function decideShellCall(request: ApprovalRequest, policy: Policy, facts: ShellFacts): PolicyDecision {
  const analysis = facts.analysis;
  if (analysis.syntaxError !== null) {
    return { decision: "deny", rule: SHELL_ANALYSIS, reason: `${analysis.syntaxError}; a command that cannot be parsed cannot be judged` };
  }
  if (analysis.blockers.length > 0) return { decision: "deny", rule: SHELL_ANALYSIS, reason: analysis.blockers[0]! };
  const outside = request.paths.find(isOutsideWorkspace);
  if (outside !== undefined) {
    return { decision: "deny", rule: WORKSPACE_BOUNDARY, reason: `${request.tool} touches \`${outside}\`, which is outside the workspace` };
  }
  const allowRules = policy.rules.filter((r) => r.effect === "allow" && ruleCoversTool(r, [request.tool]));
  const ctx: ShellContext = { request, policy, facts, allowRules };
  return unnamedDynamicCommand(ctx) ?? firstDeny(ctx) ?? allowedOrDenied(ctx);
}

/**
 * A command whose name is only known at run time (`$X y`, `r*m`) could be anything, so every
 * deny pattern "matches" it; unless an allow pattern names it, say the real reason first.
 */
function unnamedDynamicCommand(ctx: ShellContext): PolicyDecision | null {
  for (const [index, command] of ctx.facts.analysis.commands.entries()) {
    const name = command.argv[0];
    if (name === undefined || name.kind === "literal" || command.blockers.length > 0) continue;
    if (allowingRule(ctx, command, index, command.argv) !== null) continue;
    return {
      decision: "deny", rule: SHELL_ANALYSIS,
      reason: `the command name \`${shown(name.raw)}\` is only known at run time; an allow rule must name it in a shell pattern (e.g. "${shown(name.raw)} *")`,
    };
  }
  return null;
}

function insideOutcomes(ctx: ShellContext, text: string): string[] {
  const outcomes = ctx.facts.paths.get(text) ?? [];
  return outcomes.flatMap((o) => (o.kind === "inside" ? [o.path] : []));
}

function insidePaths(ctx: ShellContext, word: ShellWord): string[] {
  return word.kind === "literal" ? insideOutcomes(ctx, word.value) : [];
}

/** Operands of a command that name paths (literal, not options). */
function operands(command: SimpleCommand): ShellWord[] {
  return command.argv.slice(1).filter((w) => w.kind !== "literal" || (w.value !== "" && !w.value.startsWith("-")));
}

function firstDeny(ctx: ShellContext): PolicyDecision | null {
  for (const rule of ctx.policy.rules) {
    if (rule.effect !== "deny") continue;
    const hit = denyHit(rule, ctx);
    if (hit === null) continue;
    // A match through a dynamic word is a "could be": say so beside the rule's own reason.
    const reason = rule.reason === null ? hit.text : hit.dynamic ? `${rule.reason} (${hit.text})` : rule.reason;
    return { decision: "deny", rule: rule.label, reason };
  }
  return null;
}

function subject(ctx: ShellContext, command: SimpleCommand, argv: readonly ShellWord[]): PatternSubject {
  return { env: command.env, argv, workspace: ctx.request.workspace };
}

interface DenyHit {
  text: string;
  /** The match relied on a word only known at run time. */
  dynamic: boolean;
}

/** What a deny rule finds wrong with the call, or null. */
function denyHit(rule: PolicyRule, ctx: ShellContext): DenyHit | null {
  const coversShell = ruleCoversTool(rule, [ctx.request.tool]);
  const { commands, files } = ctx.facts.analysis;
  if (rule.shell !== null) {
    if (!coversShell) return null;
    for (const [index, command] of commands.entries()) {
      const layers = command.layers.length > 0 ? command.layers : [command.argv];
      for (const layer of layers) {
        const pattern = rule.shell.find((p) => patternDenies(p, subject(ctx, command, layer)));
        if (pattern === undefined) continue;
        if (rule.matchPath === null || commandPaths(ctx, command, index).some(rule.matchPath)) {
          const dynamic = layer.some((w) => w.kind !== "literal") || command.env.some((a) => a.value.kind !== "literal");
          const verb = dynamic ? "could match" : "matches";
          return { text: `\`${shown(command.text)}\` ${verb} the deny pattern \`${pattern.source}\``, dynamic };
        }
      }
    }
    return null;
  }
  if (rule.matchPath !== null) {
    const text = pathDenyHit(rule, ctx, coversShell, { commands, files });
    return text === null ? null : { text, dynamic: false };
  }
  return coversShell ? { text: `${ctx.request.tool} is denied`, dynamic: false } : null;
}

function pathDenyHit(
  rule: PolicyRule, ctx: ShellContext, coversShell: boolean,
  parts: { commands: readonly SimpleCommand[]; files: readonly ShellFileAccess[] },
): string | null {
  const match = rule.matchPath!;
  const because = (what: string, path: string): string => `${what} \`${path}\`, which matches \`${firstMatchingGlob(rule.paths!, path)}\``;
  if (coversShell) {
    const path = ctx.request.paths.find(match);
    if (path !== undefined) return because(`${ctx.request.tool} touches`, path);
    for (const command of parts.commands) {
      for (const text of argumentPathTexts(command.argv)) {
        const hit = insideOutcomes(ctx, text).find(match);
        if (hit !== undefined) return because(`\`${shown(command.text)}\` names`, hit);
      }
    }
  }
  for (const file of parts.files) {
    const tools = file.access === "write" ? WRITE_TOOLS : READ_TOOLS;
    if (!coversShell && !(rule.tools ?? []).some((t) => tools.includes(t))) continue;
    const hit = insidePaths(ctx, file.target).find(match);
    if (hit !== undefined) return because(`\`${shown(file.text)}\` ${file.access === "write" ? "writes" : "reads"}`, hit);
  }
  return null;
}

/** Workspace paths a command names (arguments and its own redirections), for deny rules with paths. */
function commandPaths(ctx: ShellContext, command: SimpleCommand, index: number): string[] {
  const owned = ctx.facts.analysis.files.filter((f) => f.owner === index).map((f) => f.target);
  return [...argumentPathTexts(command.argv).flatMap((t) => insideOutcomes(ctx, t)), ...owned.flatMap((w) => insidePaths(ctx, w))];
}

/**
 * For an allow rule with paths: every operand and owned file lies inside and under the globs —
 * a literal by its own path, a glob by the folder it expands in. A command that names no path
 * (`ls`, `git status`) works on the folder it stands in, the workspace root: covered when the
 * globs take in "." (`**` does, `build/**` does not).
 */
function commandPathsCovered(ctx: ShellContext, command: SimpleCommand, index: number, match: (p: string) => boolean): boolean {
  // Redirections are the shell's writes, judged by write rules (fileVerdict), not operands.
  const owned = ctx.facts.analysis.files.filter((f) => f.owner === index && !isRedirection(f)).map((f) => f.target);
  const named = [...operands(command), ...owned];
  if (named.length === 0) return match(".");
  return named.every((word) => {
    const text = word.kind === "literal" ? word.value : word.kind === "glob" ? globFolder(word.value) : null;
    if (text === null) return false;
    const outcomes: readonly PathOutcome[] = ctx.facts.paths.get(text) ?? [];
    return outcomes.length > 0 && outcomes.every((o) => o.kind === "inside" && match(o.path));
  });
}

function judgeable(command: SimpleCommand, argv: readonly ShellWord[]): boolean {
  return argv.length > 0 && argv[0]!.kind === "literal" && command.env.length === 0 && command.unjudgeable === null;
}

/** The first allow rule that allows `argv` (with the command's env) to run, or null. */
function allowingRule(ctx: ShellContext, command: SimpleCommand, index: number, argv: readonly ShellWord[]): PolicyRule | null {
  for (const rule of ctx.allowRules) {
    if (rule.shell !== null) {
      if (!rule.shell.some((p) => patternAllows(p, subject(ctx, command, argv)))) continue;
    } else if (!rule.tools?.includes(ctx.request.tool) || !judgeable(command, argv)) {
      continue;
    }
    if (rule.matchPath !== null && !commandPathsCovered(ctx, command, index, rule.matchPath)) continue;
    return rule;
  }
  return null;
}

function allowedOrDenied(ctx: ShellContext): PolicyDecision {
  const { constructs, commands, files } = ctx.facts.analysis;
  const grants: Grant[] = [];
  for (const construct of constructs) {
    const rule = ctx.allowRules.find((r) => r.shell?.some((p) => patternNamesSubstitution(p, construct.text)));
    if (rule === undefined) {
      const what = construct.kind === "command_substitution" ? "command substitution" : "process substitution";
      return {
        decision: "deny", rule: SHELL_ANALYSIS,
        reason: `the ${what} \`${shown(construct.text)}\` cannot be judged statically; an allow rule must name it in a shell pattern (e.g. "${shown(construct.text)}")`,
      };
    }
    grants.push({ what: shown(construct.text), rule });
  }
  for (const [index, command] of commands.entries()) {
    const verdict = commandVerdict(ctx, command, index);
    if (!verdict.ok) return verdict.decision;
    if (verdict.grant) grants.push(verdict.grant);
  }
  for (const file of files) {
    const verdict = fileVerdict(ctx, file);
    if (!verdict.ok) return verdict.decision;
    if (verdict.grant) grants.push(verdict.grant);
  }
  return allowDecision(ctx, grants);
}

function commandVerdict(ctx: ShellContext, command: SimpleCommand, index: number): Verdict {
  if (command.blockers.length > 0) return denyWith(SHELL_ANALYSIS, command.blockers[0]!);
  if (command.argv.length === 0 && command.env.length === 0) return { ok: true, grant: null };
  for (const guarded of command.guarded) {
    if (allowingRule(ctx, command, index, guarded) === null && ctx.policy.default !== "allow") {
      return denyWith(ctx.policy.defaultLabel, `\`${words(guarded)}\` raises privileges, and no rule allows it`);
    }
  }
  const rule = allowingRule(ctx, command, index, command.argv);
  if (rule !== null) return { ok: true, grant: { what: shown(command.text), rule } };
  const name = command.argv[0];
  if (name !== undefined && name.kind !== "literal") {
    return denyWith(SHELL_ANALYSIS, `the command name \`${shown(name.raw)}\` is only known at run time; an allow rule must name it in a shell pattern (e.g. "${shown(name.raw)} *")`);
  }
  if (command.unjudgeable !== null) {
    return denyWith(SHELL_ANALYSIS, `${command.unjudgeable}; an allow rule must name it in a shell pattern (e.g. "${words(command.argv)}")`);
  }
  if (command.env.length > 0) {
    const prefix = shown(command.env.map((a) => a.raw).join(" "));
    const names = command.env.map((a) => `${a.name}=*`).join(" ");
    if (command.argv.length === 0) {
      return denyWith(SHELL_ANALYSIS, `the assignment \`${prefix}\` is not allowed by name; a pattern must list it (e.g. "${names}")`);
    }
    return denyWith(SHELL_ANALYSIS, `the environment prefix \`${prefix}\` in \`${shown(command.text)}\` is not allowed by name; a pattern must list it (e.g. "${names} ${words(command.argv)}")`);
  }
  if (ctx.policy.default === "allow") return { ok: true, grant: { what: shown(command.text), rule: null } };
  const runs = command.layers.length > 1 ? ` runs \`${words(command.argv)}\`, which` : "";
  return denyWith(ctx.policy.defaultLabel, `\`${shown(command.text)}\`${runs} is not allowed by any rule, and the default is deny`);
}

/** A rule that governs writing `path` from this shell call (no shell patterns; write tool, the shell, or any tool). */
function writeRule(ctx: ShellContext, path: string): PolicyRule | null {
  const tools = [ctx.request.tool, "write_file"];
  return ctx.policy.rules.find((r) =>
    r.effect === "allow" && r.shell === null && ruleCoversTool(r, tools) && (r.matchPath === null || r.matchPath(path))) ?? null;
}

function fileVerdict(ctx: ShellContext, file: ShellFileAccess): Verdict {
  if (file.access === "read") return { ok: true, grant: null };
  if (file.target.kind !== "literal") {
    const rule = ctx.allowRules.find((r) => r.shell?.some((p) => patternNamesRedirect(p, file.target)));
    if (rule !== undefined) return { ok: true, grant: { what: shown(file.text), rule } };
    return denyWith(SHELL_ANALYSIS, `\`${shown(file.text)}\` writes to a path only known at run time; an allow rule must name the target (e.g. "… ${shown(file.text)}")`);
  }
  let grant: Grant | null = null;
  const outcomes = ctx.facts.paths.get(file.target.value) ?? [{ kind: "unknown" } as const];
  // Outside and unknown outcomes first: they decide whatever the rules say about the others.
  const ordered = [...outcomes].sort((a, b) => outcomeRank(a) - outcomeRank(b));
  for (const outcome of ordered) {
    switch (outcome.kind) {
      case "device":
        continue;
      case "outside":
        return denyWith(WORKSPACE_BOUNDARY, `\`${shown(file.text)}\` writes \`${outcome.path}\`, which is outside the workspace`);
      case "unknown":
        return denyWith(SHELL_ANALYSIS, `\`${shown(file.text)}\` writes a relative path after a \`cd\` whose target is only known at run time`);
      case "inside": {
        // A command's own rule with paths covers the files it writes as operands (`tee F`), not
        // the shell's redirections: `allow {shell: [cat *], paths: [**]}` lets cat read anywhere
        // inside, and must not make `cat a > b` a write.
        const ownerRule = file.owner === null || isRedirection(file) ? null : allowedWithPaths(ctx, file.owner, outcome.path);
        const rule = ownerRule ?? writeRule(ctx, outcome.path);
        if (rule !== null) grant = { what: shown(file.text), rule };
        else if (ctx.policy.default === "allow") grant = { what: shown(file.text), rule: null };
        else return denyWith(ctx.policy.defaultLabel, `\`${shown(file.text)}\` writes \`${outcome.path}\`, which no rule allows writing, and the default is deny`);
        continue;
      }
      default:
        return assertNever(outcome);
    }
  }
  return { ok: true, grant };
}

function outcomeRank(outcome: PathOutcome): number {
  return outcome.kind === "outside" ? 0 : outcome.kind === "unknown" ? 1 : 2;
}

function isRedirection(file: ShellFileAccess): boolean {
  return /^\s*(\d+|&|\{\w+\})?[<>]/.test(file.text);
}

/** The shell rule with paths that allowed the owning command, when its globs cover `path`. */
function allowedWithPaths(ctx: ShellContext, owner: number, path: string): PolicyRule | null {
  const command = ctx.facts.analysis.commands[owner];
  if (command === undefined) return null;
  const rule = allowingRule(ctx, command, owner, command.argv);
  return rule !== null && rule.shell !== null && rule.matchPath !== null && rule.matchPath(path) ? rule : null;
}

function allowDecision(ctx: ShellContext, grants: readonly Grant[]): PolicyDecision {
  const distinct = grants.filter((g, i) => grants.findIndex((h) => h.what === g.what && h.rule === g.rule) === i);
  if (distinct.length === 0) return { decision: "allow", rule: SHELL_ANALYSIS, reason: "the command runs nothing" };
  const labels = [...new Set(distinct.map((g) => g.rule?.label ?? ctx.policy.defaultLabel))];
  if (distinct.length === 1) {
    const only = distinct[0]!;
    const reason = only.rule?.reason ?? (only.rule === null ? `\`${only.what}\` is allowed by default` : `\`${only.what}\` is allowed`);
    return { decision: "allow", rule: labels[0]!, reason };
  }
  const parts = distinct.slice(0, 4).map((g) => `\`${g.what}\` (${g.rule === null ? "default" : `rule ${g.rule.index}`})`);
  const more = distinct.length > 4 ? ` and ${distinct.length - 4} more` : "";
  return { decision: "allow", rule: labels.join("; "), reason: `every part is allowed: ${parts.join(", ")}${more}` };
}
