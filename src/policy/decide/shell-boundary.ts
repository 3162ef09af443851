/**
 * The workspace boundary for a shell call: no file it reads or writes — by redirection, as the
 * file operand of a known command, or behind a link a command follows — lies outside the
 * workspace; no redirection opens a network socket (`/dev/tcp/…`); a relative operand of any
 * command but echo-like ones that leads outside (`../x`, `~/x`, a link out) is refused; a file
 * operand only known at run time could be anywhere, so only a rule spelling it allows it.
 */
import { isOutsideWorkspace } from "./policy-decision.js";
import { type PolicyDecision, SHELL_ANALYSIS, WORKSPACE_BOUNDARY } from "./policy-decision.js";
import type { ShellFileAccess } from "../shell/shell-model.js";
import { argumentPathTexts, pathOutcomes, treeKey } from "../shell/shell-paths.js";
import { filesArePrecise } from "../shell/commands/file-command-table.js";
import { INERT_COMMANDS } from "../shell/commands/shell-programs.js";
import { commandName } from "../shell/commands/shell-wrappers.js";
import { type OperandShape, operandShape, shapeOutside } from "./operand-shape.js";
import { type ShellContext, shown } from "./shell-context.js";

const deny = (rule: string, reason: string): PolicyDecision => ({ decision: "deny", rule, reason });

/** The first place the call leaves the workspace, as a decision; null when it stays inside. */
export function boundaryProblem(ctx: ShellContext): PolicyDecision | null {
  const outside = ctx.request.paths.find(isOutsideWorkspace);
  if (outside !== undefined) return deny(WORKSPACE_BOUNDARY, `${ctx.request.tool} touches \`${outside}\`, which is outside the workspace`);
  for (const file of ctx.facts.analysis.files) {
    const problem = fileProblem(ctx, file);
    if (problem !== null) return problem;
  }
  for (const command of ctx.facts.analysis.commands) {
    const name = commandName(command.argv[0]);
    if (name === null || INERT_COMMANDS.has(name) || filesArePrecise(command.argv[0])) continue;
    for (const text of argumentPathTexts(command.argv)) {
      if (text.startsWith("/")) continue;
      const out = pathOutcomes(ctx.facts, text, command.cwd).find((o) => o.kind === "outside");
      if (out !== undefined && out.kind === "outside") {
        return deny(WORKSPACE_BOUNDARY, `\`${shown(command.text)}\` names \`${text}\`, which leads to \`${out.path}\`, outside the workspace`);
      }
    }
  }
  return null;
}

function fileProblem(ctx: ShellContext, file: ShellFileAccess): PolicyDecision | null {
  const problem = shapeProblem(ctx, file, operandShape(ctx.facts, file.target, file.cwd));
  if (problem !== null) return problem;
  if (file.tree !== null && file.target.kind === "literal") {
    const tree = ctx.facts.trees.get(treeKey(file));
    if (tree?.kind === "walked" && tree.outside.length > 0) {
      return deny(WORKSPACE_BOUNDARY, `\`${shown(file.text)}\` follows a link out of the workspace, to \`${tree.outside[0]}\``);
    }
  }
  return null;
}

function shapeProblem(ctx: ShellContext, file: ShellFileAccess, shape: OperandShape): PolicyDecision | null {
  const verb = file.access === "write" ? "writes" : "reads";
  switch (shape.kind) {
    case "path":
      for (const outcome of shape.outcomes) {
        if (outcome.kind === "network") return deny(WORKSPACE_BOUNDARY, `\`${shown(file.text)}\` opens a network connection (\`${outcome.path}\`)`);
        if (outcome.kind === "outside") return deny(WORKSPACE_BOUNDARY, `\`${shown(file.text)}\` ${verb} \`${outcome.path}\`, which is outside the workspace`);
        if (outcome.kind === "unknown") return deny(SHELL_ANALYSIS, `\`${shown(file.text)}\` ${verb} a relative path after a \`cd\` whose target is only known at run time`);
      }
      return null;
    case "glob": {
      const out = shapeOutside(shape);
      return out === null ? null : deny(WORKSPACE_BOUNDARY, `\`${shown(file.text)}\` ${verb} \`${file.target.raw}\`, which can expand to \`${out}\`, outside the workspace`);
    }
    case "anything":
      if (file.access === "write" || spelledByAllowRule(ctx, file)) return null;
      return deny(SHELL_ANALYSIS, `\`${shown(file.text)}\` reads a path only known at run time (${shape.why}), which could lie outside the workspace; an allow rule must spell it (e.g. "${shown(file.text)}")`);
    case "opaque":
      return null;
    case "oneOf":
      return shape.shapes.map((s) => shapeProblem(ctx, file, s)).find((p) => p !== null) ?? null;
  }
}

/** A dynamic operand an allow pattern writes out (`cat $(git ls-files)`), the way dynamic redirections are allowed. */
function spelledByAllowRule(ctx: ShellContext, file: ShellFileAccess): boolean {
  return ctx.allowRules.some((r) => r.shell?.some((p) => p.source.includes(file.target.raw)) ?? false);
}
