/**
 * The allow side of a shell decision: every simple command must be allowed — by a rule whose
 * shell pattern matches it (and, for a rule with paths, whose globs cover its operands), by a
 * rule naming the shell tool, or by `default: allow` — and every file it writes must be allowed
 * by the rules that govern writing. Constructs that hide what runs are allowed only by name.
 */
import { assertNever } from "../../core/errors.js";
import type { PolicyRule } from "../file/policy-model.js";
import { type PolicyDecision, SHELL_ANALYSIS, WORKSPACE_BOUNDARY, ruleCoversTool } from "./policy-decision.js";
import type { ShellFileAccess, SimpleCommand } from "../shell/shell-model.js";
import { type PathOutcome, globFolder, pathOutcomes } from "../shell/shell-paths.js";
import { patternAllows, patternNamesRedirect } from "../match/shell-pattern.js";
import type { ShellWord } from "../shell/grammar/shell-words.js";
import { type Grant, type ShellContext, type Verdict, denyWith, shown, words } from "./shell-context.js";

/** Operands of a command that name paths (literal, not options). */
function operands(command: SimpleCommand): ShellWord[] {
  return command.argv.slice(1).filter((w) => w.kind !== "literal" || (w.value !== "" && !w.value.startsWith("-")));
}

/**
 * For an allow rule with paths: every operand and owned file lies inside and under the globs —
 * a literal by its own path, a glob by the folder it expands in. A command that names no path
 * (`ls`, `git status`) works on the folder it stands in: covered when the globs take in every
 * directory it may run in (`**` takes in "."; `build/**` does not).
 */
function commandPathsCovered(ctx: ShellContext, command: SimpleCommand, index: number, match: (p: string) => boolean): boolean {
  // Redirections are the shell's writes, judged by write rules (fileVerdict), not operands.
  const owned = ctx.facts.analysis.files.filter((f) => f.owner === index && f.via === "operand");
  const named = [...operands(command).map((word) => ({ word, cwd: command.cwd })), ...owned.map((f) => ({ word: f.target, cwd: f.cwd }))];
  const covered = (text: string, cwd = command.cwd): boolean => {
    const outcomes: readonly PathOutcome[] = pathOutcomes(ctx.facts, text, cwd);
    return outcomes.length > 0 && outcomes.every((o) => o.kind === "inside" && match(o.path));
  };
  if (named.length === 0) return covered(".");
  return named.every(({ word, cwd }) => {
    const text = word.kind === "literal" ? word.value : word.kind === "glob" ? globFolder(word.value) : null;
    return text !== null && covered(text, cwd);
  });
}

function judgeable(command: SimpleCommand, argv: readonly ShellWord[]): boolean {
  return argv.length > 0 && argv[0]!.kind === "literal" && command.env.length === 0 && command.unjudgeable === null && command.mustName.length === 0;
}

/** The first allow rule that allows `argv` (with the command's env) to run, or null. */
export function allowingRule(ctx: ShellContext, command: SimpleCommand, index: number, argv: readonly ShellWord[]): PolicyRule | null {
  const subject = { env: command.env, argv, workspace: ctx.request.workspace };
  for (const rule of ctx.allowRules) {
    if (rule.shell !== null) {
      const spells = (source: string): boolean => command.mustName.every((word) => source.includes(word));
      if (!rule.shell.some((p) => patternAllows(p, subject) && spells(p.source))) continue;
    } else if (!rule.tools?.includes(ctx.request.tool) || !judgeable(command, argv)) {
      continue;
    }
    if (rule.matchPath !== null && !commandPathsCovered(ctx, command, index, rule.matchPath)) continue;
    return rule;
  }
  return null;
}

const runtimeName = (raw: string): string =>
  `the command name \`${shown(raw)}\` is only known at run time; an allow rule must name it in a shell pattern (e.g. "${shown(raw)} *")`;

/**
 * A command whose name is only known at run time (`$X y`, `r*m`) could be anything, so every
 * deny pattern "matches" it; unless an allow pattern names it, say the real reason first.
 */
export function unnamedDynamicCommand(ctx: ShellContext): PolicyDecision | null {
  for (const [index, command] of ctx.facts.analysis.commands.entries()) {
    const name = command.argv[0];
    if (name === undefined || name.kind === "literal" || command.blockers.length > 0) continue;
    if (allowingRule(ctx, command, index, command.argv) !== null) continue;
    return { decision: "deny", rule: SHELL_ANALYSIS, reason: runtimeName(name.raw) };
  }
  return null;
}

/** Every command allowed, every written file allowed: the decision with the rules that allowed each part. */
export function allowedOrDenied(ctx: ShellContext): PolicyDecision {
  const grants: Grant[] = [];
  for (const [index, command] of ctx.facts.analysis.commands.entries()) {
    const verdict = commandVerdict(ctx, command, index);
    if (!verdict.ok) return verdict.decision;
    if (verdict.grant) grants.push(verdict.grant);
  }
  for (const file of ctx.facts.analysis.files) {
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
  if (name !== undefined && name.kind !== "literal") return denyWith(SHELL_ANALYSIS, runtimeName(name.raw));
  if (command.unjudgeable !== null) {
    const spell = command.mustName.length > 0 ? `spelling ${command.mustName.map((w) => `\`${w}\``).join(", ")} ` : "";
    return denyWith(SHELL_ANALYSIS, `${command.unjudgeable}; an allow rule must name it in a shell pattern ${spell}(e.g. "${words(command.argv)}")`);
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
  const runs = command.argv !== command.layers[0] ? ` runs \`${words(command.argv)}\`, which` : "";
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
  const outcomes = pathOutcomes(ctx.facts, file.target.value, file.cwd);
  for (const outcome of outcomes.length > 0 ? outcomes : [{ kind: "unknown" } as const]) {
    switch (outcome.kind) {
      case "device":
        continue;
      case "outside":
      case "network":
        return denyWith(WORKSPACE_BOUNDARY, `\`${shown(file.text)}\` writes \`${outcome.path}\`, which is outside the workspace`);
      case "unknown":
        return denyWith(SHELL_ANALYSIS, `\`${shown(file.text)}\` writes a relative path after a \`cd\` whose target is only known at run time`);
      case "inside": {
        // A command's own rule with paths covers the files it writes as operands (`tee F`), not
        // the shell's redirections: `allow {shell: [cat *], paths: [**]}` lets cat read anywhere
        // inside, and must not make `cat a > b` a write.
        const ownerRule = file.owner === null || file.via === "redirect" ? null : allowedWithPaths(ctx, file.owner, outcome.path);
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
