/**
 * Deny rules against a shell call: shell patterns against every layer of every command (as
 * written, through each wrapper, git without its global options, a program by the real name a
 * link gives it, every tail of an unknown program's words); path globs against every operand,
 * file and folder the call touches — a glob operand by what it could expand to, a run-time
 * operand of a file command as any path, a folder read whole by what it holds (on disk) or
 * could hold (by text).
 */
import { firstMatchingGlob } from "../match/path-glob.js";
import type { PolicyRule } from "../file/policy-model.js";
import { filesArePrecise } from "../shell/commands/file-command-table.js";
import { readGit } from "../shell/commands/git-command.js";
import type { ShellFileAccess, SimpleCommand } from "../shell/shell-model.js";
import { argumentPathTexts, pathOutcomes, treeKey } from "../shell/shell-paths.js";
import { patternDenies } from "../match/shell-pattern.js";
import { type ShellWord, literalWord } from "../shell/grammar/shell-words.js";
import { folderCouldHold, operandShape, shapeMatch } from "./operand-shape.js";
import type { PolicyDecision } from "./policy-decision.js";
import { ruleCoversTool } from "./policy-decision.js";
import { type ShellContext, ruleCoversAccess, shown } from "./shell-context.js";

interface DenyHit {
  text: string;
  /** The match relied on a word only known at run time. */
  dynamic: boolean;
}

/** The first deny rule (in file order) the call meets, as a decision. */
export function firstDeny(ctx: ShellContext): PolicyDecision | null {
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

/** The layers deny patterns see: as analysed, plus the program a path names by its real name. */
export function denyLayers(ctx: ShellContext, command: SimpleCommand): ShellWord[][] {
  const layers = command.layers.length > 0 ? [...command.layers] : [command.argv];
  const name = command.argv[0];
  const real = name?.kind === "literal" ? ctx.facts.programs.get(name.value) : undefined;
  if (real !== undefined && real.split("/").pop() !== name!.value.split("/").pop()) {
    const layer = [literalWord(real), ...command.argv.slice(1)];
    layers.push(layer);
    const git = real.endsWith("/git") ? readGit(layer).normalized : null;
    if (git !== null) layers.push(git);
  }
  return layers;
}

function denyHit(rule: PolicyRule, ctx: ShellContext): DenyHit | null {
  const coversShell = ruleCoversTool(rule, [ctx.request.tool]);
  if (rule.shell !== null) {
    if (!coversShell) return null;
    for (const [index, command] of ctx.facts.analysis.commands.entries()) {
      for (const layer of denyLayers(ctx, command)) {
        const pattern = rule.shell.find((p) => patternDenies(p, { env: command.env, argv: layer, workspace: ctx.request.workspace }));
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
  if (rule.matchPath !== null) return pathDenyHit(rule, ctx, coversShell);
  return coversShell ? { text: `${ctx.request.tool} is denied`, dynamic: false } : null;
}

function pathDenyHit(rule: PolicyRule, ctx: ShellContext, coversShell: boolean): DenyHit | null {
  const match = rule.matchPath!;
  const globs = rule.paths!;
  const because = (what: string, path: string, dynamic = false): DenyHit => {
    const glob = firstMatchingGlob(globs, path);
    const could = `which could match \`${globs.join("`, `")}\``;
    return { text: glob === undefined ? `${what} ${dynamic ? path : `\`${path}\``}, ${could}` : `${what} \`${path}\`, which matches \`${glob}\``, dynamic };
  };
  if (coversShell) {
    const path = ctx.request.paths.find(match);
    if (path !== undefined) return because(`${ctx.request.tool} touches`, path);
    for (const command of ctx.facts.analysis.commands) {
      if (filesArePrecise(command.argv[0])) continue;
      for (const text of argumentPathTexts(command.argv)) {
        const hit = pathOutcomes(ctx.facts, text, command.cwd).find((o) => o.kind === "inside" && match(o.path));
        if (hit !== undefined && hit.kind === "inside") return because(`\`${shown(command.text)}\` names`, hit.path);
      }
      for (const word of command.argv.slice(1)) {
        if (word.kind !== "glob") continue;
        const hit = shapeMatch(operandShape(ctx.facts, word, command.cwd), match, globs);
        if (hit !== null) return because(`\`${shown(command.text)}\` names \`${word.raw}\`, which could expand to`, hit, true);
      }
    }
  }
  for (const file of ctx.facts.analysis.files) {
    if (!coversShell && !ruleCoversAccess(rule, ctx.request.tool, file.access)) continue;
    const verb = file.access === "write" ? "writes" : "reads";
    const shape = operandShape(ctx.facts, file.target, file.cwd);
    const hit = shapeMatch(shape, match, globs);
    if (hit !== null && shape.kind === "anything") return because(`\`${shown(file.text)}\` ${verb} a path only known at run time:`, hit, true);
    if (hit !== null) return because(`\`${shown(file.text)}\` ${verb}`, hit, shape.kind !== "path");
    const held = treeHit(ctx, file, match, globs);
    if (held !== null) return because(`\`${shown(file.text)}\` ${verb} everything under it:`, held, held.startsWith("anything"));
  }
  return null;
}

/** For a folder taken whole: a path under it the rule matches (on disk), or one it could hold (by text). */
function treeHit(ctx: ShellContext, file: ShellFileAccess, match: (p: string) => boolean, globs: readonly string[]): string | null {
  if (file.tree === null || (file.tree === "names" && file.access === "read") || file.target.kind !== "literal") return null;
  const walked = ctx.facts.trees.get(treeKey(file));
  if (file.tree !== "incoming" && walked?.kind === "walked") {
    const found = walked.entries.find(match);
    if (found !== undefined) return found;
    if (walked.complete) return null;
  }
  for (const outcome of pathOutcomes(ctx.facts, file.target.value, file.cwd)) {
    if (outcome.kind === "inside" && folderCouldHold(outcome.path, globs)) return `anything under \`${outcome.path}\``;
  }
  return null;
}

/** Workspace paths a command names (arguments and its own files), for deny rules with both shell and paths. */
function commandPaths(ctx: ShellContext, command: SimpleCommand, index: number): string[] {
  const inside = (text: string, cwd = command.cwd): string[] =>
    pathOutcomes(ctx.facts, text, cwd).flatMap((o) => (o.kind === "inside" ? [o.path] : []));
  const owned = ctx.facts.analysis.files.filter((f) => f.owner === index && f.target.kind === "literal");
  return [...argumentPathTexts(command.argv).flatMap((t) => inside(t)), ...owned.flatMap((f) => inside(f.target.value, f.cwd))];
}
