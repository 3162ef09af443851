/**
 * The state one analysis carries while it walks a command line (shell-walk.ts and
 * shell-record.ts fill it, shell-analysis.ts finishes it): the result so far, the variables the
 * line fills with text, and the checks that can only be made once the whole line is known.
 */
import type { BashParser } from "./grammar/bash-parser.js";
import type { CwdFlow, CwdSet } from "./shell-cwd.js";
import type { ShellAnalysis } from "./shell-model.js";
import type { ShellWord } from "./grammar/shell-words.js";

/** A use of variables that is code if they hold text the line chose: arithmetic, `${!x}`, a name operand. */
export interface PendingCheck {
  /** Variables read. */
  names: string[];
  /** Literal texts bash evaluates as arithmetic. */
  texts: string[];
  /** Dynamic words used as variable names. */
  nameWords: ShellWord[];
  /** The command it belongs to (its `unjudgeable` is set), or null (a blocker of the line). */
  owner: number | null;
  /** How to say where, e.g. "the arithmetic `$((x))`". */
  where: string;
}

/** Commands and files recorded between two points, whose directories are widened at the end. */
export interface WidenRange {
  commands: [number, number];
  files: [number, number];
  /** `anywhere`: runs later, wherever the line has gone (function bodies, traps); `unknown`: a loop that changes directory. */
  to: "anywhere" | "unknown";
}

export interface AnalysisState {
  parser: BashParser;
  result: ShellAnalysis;
  nesting: number;
  scriptDepth: number;
  tainted: Set<string>;
  /** Words `for` loops give each variable, and the variables the line also sets some other way. */
  loopWords: Map<string, ShellWord[]>;
  otherwiseSet: Set<string>;
  pending: PendingCheck[];
  widen: WidenRange[];
  /** Variables a declaration gave the integer attribute (`declare -i x`): every later assignment to them is arithmetic. */
  integers: Map<string, number>;
  /** Walks a nested script (`bash -c`, `eval`, a trap action) into `state` from `cwd`; returns where it leaves the shell. */
  walkScript(source: string, state: AnalysisState, cwd: CwdSet): CwdFlow;
  /**
   * Walks text bash parses again as words (`declare -a 'x=(…)'`, the word of `>&WORD`) for what
   * expanding it runs — substitutions, arithmetic — without recording it as a command; false
   * when the text does not parse.
   */
  scanWords(source: string, state: AnalysisState, cwd: CwdSet): boolean;
}

/** The line sets `name` from text it chose, other than by a `for` loop's words. */
export function taint(state: AnalysisState, name: string): void {
  state.tainted.add(name);
  state.otherwiseSet.add(name);
}

/** Marks the start of a stretch of commands and files, for `widen`. */
export function mark(state: AnalysisState): { commands: number; files: number } {
  return { commands: state.result.commands.length, files: state.result.files.length };
}

export function widenSince(state: AnalysisState, start: { commands: number; files: number }, to: WidenRange["to"]): void {
  state.widen.push({ commands: [start.commands, state.result.commands.length], files: [start.files, state.result.files.length], to });
}
