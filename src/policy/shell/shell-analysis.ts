/**
 * Static analysis of a shell command line with the bash grammar: every simple command it runs
 * (across `&& || ; | |& &`, newlines, subshells, brace groups, `if/for/while/case` bodies,
 * functions, substitutions, and literal `bash -c`/`eval` strings), seen through wrappers; every
 * file it redirects to; every command or process substitution; and the directories it may `cd`
 * into. It judges nothing — `decide` does — but it never drops a command: syntax it does not
 * model becomes a blocker, which denies.
 */
import type { Node } from "web-tree-sitter";
import type { BashParser } from "./bash-parser.js";
import { joinContinuedLines } from "./line-continuations.js";
import { type ShellWord, literalWord, readAssignmentWord, readWord } from "./shell-words.js";
import { type ShellAssignment, commandName, unwrapCommand } from "./shell-wrappers.js";

export type { ShellAssignment } from "./shell-wrappers.js";

export interface SimpleCommand {
  /** The command as written in the source. */
  text: string;
  /** Assignments in effect: the prefix (`A=1 cmd`) and those given to `env`. */
  env: ShellAssignment[];
  /** The command that runs, after wrappers; empty for a bare assignment or a handed-over script. */
  argv: ShellWord[];
  /** The argv as written and after each wrapper, outermost first (deny patterns see each). */
  layers: ShellWord[][];
  /** Outer layers that must also be allowed themselves (`sudo …`). */
  guarded: ShellWord[][];
  /** Why this command cannot be judged statically; non-empty denies it. */
  blockers: string[];
  /** Why the command hides what it runs (`eval "$X"`), or null; only a rule naming it allows it. */
  unjudgeable: string | null;
}

/** A file the command line writes or reads through a redirection or `tee`. */
export interface ShellFileAccess {
  access: "write" | "read";
  target: ShellWord;
  /** The redirection as written, e.g. `>> .github/x`. */
  text: string;
  /** Index in `commands` of the command it belongs to, or null (a redirected group). */
  owner: number | null;
}

export interface ShellConstruct {
  kind: "command_substitution" | "process_substitution";
  /** As written, e.g. `$(git rev-parse HEAD)`. */
  text: string;
}

export interface ShellAnalysis {
  source: string;
  /** Where the grammar could not parse the command, or null. */
  syntaxError: string | null;
  commands: SimpleCommand[];
  files: ShellFileAccess[];
  constructs: ShellConstruct[];
  /** Syntax the analysis cannot judge (not tied to one command); non-empty denies. */
  blockers: string[];
  /** Directories commands may run in, as `cd` wrote them; "." (the workspace) first. */
  cwds: string[];
  /** True when some `cd` goes somewhere that cannot be known statically. */
  cwdUnknown: boolean;
}

const MAX_SCRIPT_DEPTH = 4;
const MAX_NESTING = 200;
const MAX_CWDS = 8;

const STATEMENTS = new Set([
  "c_style_for_statement", "case_statement", "command", "compound_statement", "declaration_command",
  "for_statement", "function_definition", "if_statement", "list", "negated_command", "pipeline",
  "redirected_statement", "subshell", "test_command", "unset_command", "variable_assignment",
  "variable_assignments", "while_statement",
]);
const CONTAINERS = new Set([
  "program", "list", "pipeline", "subshell", "compound_statement", "do_group", "negated_command",
  "else_clause", "elif_clause", "if_statement", "while_statement", "case_statement", "case_item",
  "test_command",
]);
const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);
const RESERVED_WORDS = new Set([
  "{", "}", "!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
  "select", "then", "time", "until", "while",
]);

interface AnalysisState {
  parser: BashParser;
  result: ShellAnalysis;
  nesting: number;
  scriptDepth: number;
}

/** Parses and analyses one command line. Synchronous: the parser must already be loaded. */
export function analyzeShell(source: string, parser: BashParser): ShellAnalysis {
  const result: ShellAnalysis = {
    source, syntaxError: null, commands: [], files: [], constructs: [], blockers: [], cwds: ["."], cwdUnknown: false,
  };
  analyzeScript(source, { parser, result, nesting: 0, scriptDepth: 0 });
  return result;
}

function analyzeScript(original: string, state: AnalysisState): void {
  const source = joinContinuedLines(original, state.parser);
  if (source === null) {
    state.result.blockers.push("the command's line continuations cannot be resolved");
    return;
  }
  const tree = state.parser.parse(source);
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      const where = findSyntaxError(root);
      const message = `the shell grammar cannot parse ${where}`;
      state.result.syntaxError ??= state.scriptDepth === 0 ? message : `${message} in the script \`${source.slice(0, 80)}\``;
      return;
    }
    walkStatement(root, state);
  } finally {
    tree.delete();
  }
}

function findSyntaxError(node: Node): string {
  if (node.isError || node.isMissing) {
    const { row, column } = node.startPosition;
    const what = node.isMissing ? `a missing \`${node.type}\`` : `\`${node.text.slice(0, 40)}\``;
    return `${what} at line ${row + 1}, column ${column + 1}`;
  }
  for (const child of node.children) {
    if (child !== null && child.hasError) return findSyntaxError(child);
  }
  return "the command";
}

function walkStatement(node: Node, state: AnalysisState): void {
  if (++state.nesting > MAX_NESTING) {
    if (state.nesting === MAX_NESTING + 1) state.result.blockers.push("the command nests too deeply to analyse");
    state.nesting--;
    return;
  }
  try {
    walkStatementOfType(node, state);
  } finally {
    state.nesting--;
  }
}

function walkStatementOfType(node: Node, state: AnalysisState): void {
  switch (node.type) {
    case "command":
      readCommand(node, state);
      return;
    case "declaration_command":
    case "unset_command":
      readKeywordCommand(node, state);
      return;
    case "variable_assignment":
    case "variable_assignments":
      readBareAssignments(node, state);
      return;
    case "redirected_statement":
      readRedirectedStatement(node, state);
      return;
    case "function_definition":
    case "for_statement":
    case "c_style_for_statement":
      readLoopOrFunction(node, state);
      return;
    case "comment":
      return;
    default:
      if (CONTAINERS.has(node.type)) {
        walkChildren(node, state, null);
        return;
      }
      state.result.blockers.push(`unsupported shell syntax \`${node.type}\`: \`${node.text.slice(0, 60)}\``);
      scanSubstitutions(node, state);
  }
}

/** Statements are walked, redirections read, anything else scanned for substitutions. */
function walkChildren(node: Node, state: AnalysisState, owner: number | null): void {
  for (const child of node.namedChildren) {
    if (child === null) continue;
    if (STATEMENTS.has(child.type) || CONTAINERS.has(child.type)) walkStatement(child, state);
    else if (REDIRECTS.has(child.type)) readRedirect(child, owner, state);
    else scanSubstitutions(child, state);
  }
}

/** Loops and functions: only `body` is a statement; words, variables and arithmetic are scanned. */
function readLoopOrFunction(node: Node, state: AnalysisState): void {
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null || !child.isNamed) continue;
    const field = node.fieldNameForChild(i);
    if (field === "body") walkStatement(child, state);
    else if (REDIRECTS.has(child.type)) readRedirect(child, null, state);
    else if (field !== "name" && field !== "variable") scanSubstitutions(child, state);
  }
}

/** Every command or process substitution under `node`: recorded, and its commands walked. */
function scanSubstitutions(node: Node, state: AnalysisState): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    // Inside backquotes bash removes backslashes before parsing (`\$(x)` runs x); the grammar does not.
    if (node.text.startsWith("`") && node.text.includes("\\")) {
      state.result.blockers.push(`a backslash inside backquotes (\`${node.text.slice(0, 60)}\`) is read differently by bash; use $(…)`);
    }
    state.result.constructs.push({ kind: node.type, text: node.text });
    walkChildren(node, state, null);
    return;
  }
  for (const child of node.namedChildren) {
    if (child !== null) scanSubstitutions(child, state);
  }
}

function readRedirectedStatement(node: Node, state: AnalysisState): void {
  const body = node.childForFieldName("body");
  let owner: number | null = null;
  if (body !== null) {
    const before = state.result.commands.length;
    walkStatement(body, state);
    const single = body.type === "command" || body.type === "declaration_command" || body.type === "unset_command";
    if (single && state.result.commands.length > before) owner = before;
  }
  for (const child of node.namedChildren) {
    if (child !== null && child.id !== body?.id) {
      if (REDIRECTS.has(child.type)) readRedirect(child, owner, state);
      else if (STATEMENTS.has(child.type)) walkStatement(child, state);
      else scanSubstitutions(child, state);
    }
  }
}

const WRITE_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>"]);

function readRedirect(node: Node, owner: number | null, state: AnalysisState): void {
  if (node.type !== "file_redirect") {
    // Heredocs carry the rest of their line (`cat <<EOF | sh`) and their body; herestrings a word.
    walkChildren(node, state, owner);
    return;
  }
  let operator = "";
  for (const child of node.children) {
    if (child !== null && !child.isNamed) operator ||= child.text;
  }
  for (const destination of node.childrenForFieldName("destination")) {
    if (destination === null) continue;
    scanSubstitutions(destination, state);
    const target = readWord(destination);
    const isFd = target.kind === "literal" && /^(\d+|-)$/.test(target.value);
    let access: "write" | "read" | null = null;
    if (WRITE_OPERATORS.has(operator)) access = "write";
    else if (operator === "<") access = "read";
    else if ((operator === ">&" || operator === "<&") && !isFd) access = operator === ">&" ? "write" : "read";
    if (access !== null) state.result.files.push({ access, target, text: node.text, owner });
  }
}

function readCommand(node: Node, state: AnalysisState): void {
  const env: ShellAssignment[] = [];
  const argv: ShellWord[] = [];
  const redirects: Node[] = [];
  const scanned: Node[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null) continue;
    const field = node.fieldNameForChild(i);
    if (child.type === "variable_assignment" && field === null) {
      env.push(readAssignment(child));
      scanned.push(child);
    } else if (field === "name") {
      const word = child.namedChildren[0];
      argv.unshift(word ? readWord(word) : literalWord(child.text));
      scanned.push(child);
    } else if (field === "argument") {
      argv.push(readWord(child));
      scanned.push(child);
    } else if (REDIRECTS.has(child.type)) {
      redirects.push(child);
    } else if (child.isNamed) {
      scanned.push(child);
    }
  }
  const owner = addCommand(state, { text: node.text, env, argv });
  for (const child of scanned) {
    const isStatement = child.type !== "variable_assignment" && (STATEMENTS.has(child.type) || CONTAINERS.has(child.type));
    if (isStatement) walkStatement(child, state);
    else scanSubstitutions(child, state);
  }
  for (const redirect of redirects) readRedirect(redirect, owner, state);
}

function readAssignment(node: Node): ShellAssignment {
  const valueNode = node.childForFieldName("value");
  return {
    name: node.childForFieldName("name")?.text ?? "",
    value: valueNode ? readWord(valueNode) : literalWord(""),
    raw: node.text,
  };
}

/** `export A=1 B`, `local x`, `unset y`: a command named by its keyword. */
function readKeywordCommand(node: Node, state: AnalysisState): void {
  const argv: ShellWord[] = [];
  for (const child of node.children) {
    if (child === null) continue;
    if (!child.isNamed) {
      if (argv.length === 0) argv.push(literalWord(child.text));
      continue;
    }
    argv.push(child.type === "variable_assignment" ? readAssignmentWord(child) : readWord(child));
  }
  addCommand(state, { text: node.text, env: [], argv });
  scanSubstitutions(node, state);
}

function readBareAssignments(node: Node, state: AnalysisState): void {
  const nodes = node.type === "variable_assignment" ? [node] : node.namedChildren.filter((c): c is Node => c !== null);
  addCommand(state, { text: node.text, env: nodes.map(readAssignment), argv: [] });
  scanSubstitutions(node, state);
}

interface CommandSource {
  text: string;
  env: ShellAssignment[];
  argv: ShellWord[];
}

/** Unwraps and records one command (and what it runs); returns its index. */
function addCommand(state: AnalysisState, source: CommandSource): number {
  const unwrapped = unwrapCommand(source.argv);
  const command: SimpleCommand = {
    text: source.text,
    env: [...source.env, ...unwrapped.env],
    argv: unwrapped.argv,
    layers: unwrapped.layers,
    guarded: unwrapped.guarded,
    blockers: unwrapped.blocker === null ? [] : [unwrapped.blocker],
    unjudgeable: unwrapped.unjudgeable,
  };
  const name = command.argv[0];
  if (name?.kind === "literal" && RESERVED_WORDS.has(name.value)) {
    // `time { …; }` and `coproc N { …; }` are keywords to bash but words to the grammar.
    command.blockers.push(`\`${name.value}\` in command position (in \`${source.text.slice(0, 60)}\`) is a bash keyword the analysis cannot place`);
  }
  const index = state.result.commands.push(command) - 1;
  if (unwrapped.changesDirectory) state.result.cwdUnknown = true;
  trackDirectoryChange(command.argv, state.result);
  recordTeeTargets(command.argv, index, state.result);
  for (const script of unwrapped.scripts) analyzeNestedScript(script, state);
  for (const nested of unwrapped.nested) addCommand(state, { text: source.text, env: [], argv: nested });
  return index;
}

function analyzeNestedScript(script: string, state: AnalysisState): void {
  if (state.scriptDepth >= MAX_SCRIPT_DEPTH) {
    state.result.blockers.push("scripts nest too deeply (`bash -c` / `eval` inside each other) to analyse");
    return;
  }
  state.scriptDepth++;
  try {
    analyzeScript(script, state);
  } finally {
    state.scriptDepth--;
  }
}

/** `cd DIR` adds DIR (under every directory known so far); anything unknowable marks the cwd unknown. */
function trackDirectoryChange(argv: ShellWord[], result: ShellAnalysis): void {
  const name = commandName(argv[0]);
  if (name === "pushd" || name === "popd") {
    result.cwdUnknown = true;
    return;
  }
  if (name !== "cd") return;
  const operands = argv.slice(1).filter((w) => !(w.kind === "literal" && /^-[LPe@]+$/.test(w.value)));
  const target = operands[0];
  if (target === undefined || target.kind !== "literal" || target.value === "-" || target.value.startsWith("~")) {
    result.cwdUnknown = true;
    return;
  }
  const dir = target.value;
  const next = dir.startsWith("/") ? [dir] : result.cwds.map((cwd) => (cwd === "." ? dir : `${cwd}/${dir}`));
  for (const cwd of next) if (!result.cwds.includes(cwd)) result.cwds.push(cwd);
  if (result.cwds.length > MAX_CWDS) result.cwdUnknown = true;
}

/** `tee [opts] FILE…` writes each FILE. */
function recordTeeTargets(argv: ShellWord[], owner: number, result: ShellAnalysis): void {
  if (commandName(argv[0]) !== "tee") return;
  let options = true;
  for (const word of argv.slice(1)) {
    if (options && word.kind === "literal" && word.value === "--") { options = false; continue; }
    if (options && word.kind === "literal" && word.value.startsWith("-") && word.value !== "-") continue;
    result.files.push({ access: "write", target: word, text: `tee ${word.raw}`, owner });
  }
}
