/**
 * Static analysis of a shell command line with the bash grammar: every simple command it runs
 * (across `&& || ; | |& &`, newlines, subshells, brace groups, `if/for/while/case` bodies,
 * functions, substitutions, trap actions and literal `bash -c`/`eval` strings), seen through
 * wrappers; every file it reads or writes (redirections, and the file operands of known
 * commands); every command or process substitution; and the directories each command runs in.
 * It judges nothing — `decide` does — but it never drops a command: syntax it does not model
 * becomes a blocker, which denies. The walk is shell-walk.ts and shell-record.ts; this module
 * starts it and makes the checks that need the whole line: arithmetic and variable names on
 * values the line chose, and the directories of code that runs later or in a loop.
 */
import type { AnalysisState } from "./analysis-state.js";
import type { BashParser } from "./grammar/bash-parser.js";
import { arithmeticTextProblem } from "./commands/shell-arithmetic.js";
import { UNKNOWN_CWD, WORKSPACE_ROOT, type CwdSet, unionCwds } from "./shell-cwd.js";
import type { ShellAnalysis } from "./shell-model.js";
import { ALWAYS_TAINTED } from "./commands/shell-programs.js";
import { scanWords, walkScript } from "./shell-walk.js";
import { COMMAND_OUTPUT } from "./grammar/shell-words.js";

export type { ShellAnalysis, ShellConstruct, ShellFileAccess, SimpleCommand } from "./shell-model.js";
export type { ShellAssignment } from "./grammar/shell-words.js";

/** Parses and analyses one command line. Synchronous: the parser must already be loaded. */
export function analyzeShell(source: string, parser: BashParser): ShellAnalysis {
  const result: ShellAnalysis = { source, syntaxError: null, commands: [], files: [], constructs: [], blockers: [], tainted: [], loopChoices: [] };
  const state: AnalysisState = {
    parser, result, nesting: 0, scriptDepth: 0, tainted: new Set(), loopWords: new Map(), otherwiseSet: new Set(), pending: [], widen: [],
    integers: new Map(), walkScript, scanWords,
  };
  walkScript(source, state, WORKSPACE_ROOT);
  finishChecks(state);
  widenDirectories(state);
  result.tainted = [...state.tainted].sort();
  result.loopChoices = [...state.loopWords].filter(([name]) => !state.otherwiseSet.has(name)).map(([name, words]) => ({ name, words }));
  return result;
}

/** Arithmetic and variable names that read a value the line chose are code: deny them (or their command). */
function finishChecks(state: AnalysisState): void {
  const tainted = new Set([...state.tainted, ...ALWAYS_TAINTED]);
  for (const check of state.pending) {
    const name = check.names.find((n) => tainted.has(n));
    const problem = name !== undefined
      ? name === COMMAND_OUTPUT ? "it evaluates the output of a command" : `it reads \`${name}\`, whose value this command line chose`
      : check.texts.map((t) => arithmeticTextProblem(t, tainted)).find((p) => p !== null)
        ?? (check.nameWords.some((w) => w.kind !== "literal" && (w.kind !== "expansion" || w.vars.some((v) => tainted.has(v))))
          ? "it takes a variable name from a value this command line chose" : null);
    if (problem === null) continue;
    const reason = `bash evaluates ${check.where} as arithmetic or as a variable name, and ${problem}: that can run commands`;
    const command = check.owner === null ? undefined : state.result.commands[check.owner];
    if (command === undefined) state.result.blockers.push(reason);
    else command.unjudgeable ??= reason;
  }
  // `declare -i x` makes every assignment to x arithmetic: text the line gives x (`read x`, `x=…`, `for x in`) is code.
  for (const [name, owner] of state.integers) {
    if (!state.tainted.has(name)) continue;
    const text = state.result.commands[owner]?.text ?? name;
    state.result.blockers.push(`\`${text.slice(0, 60)}\` makes \`${name}\` an integer, so bash evaluates the text the line assigns it as arithmetic, which can run commands`);
  }
}

/** Code in a function body or trap runs wherever the line has gone; a loop that changes directory, anywhere. */
function widenDirectories(state: AnalysisState): void {
  const { commands, files } = state.result;
  const everywhere = [...commands.map((c) => c.cwd), ...files.map((f) => f.cwd)].reduce<CwdSet>(unionCwds, WORKSPACE_ROOT);
  for (const range of state.widen) {
    const to = range.to === "unknown" ? UNKNOWN_CWD : everywhere;
    for (let i = range.commands[0]; i < range.commands[1]; i++) commands[i]!.cwd = unionCwds(commands[i]!.cwd, to);
    for (let i = range.files[0]; i < range.files[1]; i++) files[i]!.cwd = unionCwds(files[i]!.cwd, to);
  }
}
