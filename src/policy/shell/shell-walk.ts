/**
 * Walking the bash syntax tree of one script: every statement (`&& || ; | &`, newlines,
 * subshells, groups, `if/for/while/case` bodies, functions), every redirection, substitution,
 * here-document body and arithmetic context, following the directory the shell is in as `cd`
 * changes it (shell-cwd.ts). Each simple command goes to shell-record.ts. Syntax it does not
 * model becomes a blocker, which denies: it never drops a command.
 */
import type { Node } from "web-tree-sitter";
import { type AnalysisState, mark, taint, widenSince } from "./analysis-state.js";
import { findSyntaxError, repairs } from "./grammar/grammar-repairs.js";
import { bodyAsDoubleQuoted } from "./grammar/heredoc-body.js";
import { joinContinuedLines } from "./grammar/line-continuations.js";
import { arithmeticIn, expansionEffects } from "./commands/shell-arithmetic.js";
import { type CwdFlow, type CwdSet, UNKNOWN_CWD, anyExit, sameCwds, stays, unionCwds } from "./shell-cwd.js";
import { recordCommand } from "./shell-record.js";
import { type ShellAssignment, type ShellWord, literalWord, readAssignmentWord, readWord } from "./grammar/shell-words.js";

const MAX_NESTING = 200;

const SEQUENCES = new Set(["program", "compound_statement", "do_group", "else_clause", "elif_clause", "if_statement", "case_statement", "case_item", "while_statement", "test_command"]);
const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);
const STATEMENTS = new Set([
  "c_style_for_statement", "case_statement", "command", "compound_statement", "declaration_command", "for_statement",
  "function_definition", "if_statement", "list", "negated_command", "pipeline", "redirected_statement", "subshell",
  "test_command", "unset_command", "variable_assignment", "variable_assignments", "while_statement",
]);
const WRITE_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>"]);

/** Parses and walks `original` from `cwd`; returns where it leaves the shell. */
export function walkScript(original: string, state: AnalysisState, cwd: CwdSet): CwdFlow {
  const source = joinContinuedLines(original, state.parser);
  if (source === null) {
    state.result.blockers.push("the command's line continuations cannot be resolved");
    return stays(cwd);
  }
  let tree = state.parser.parse(source);
  try {
    for (const repair of tree.rootNode.hasError ? repairs(source, tree.rootNode) : []) {
      const repaired = state.parser.parse(repair);
      if (repaired.rootNode.hasError) {
        repaired.delete();
        continue;
      }
      tree.delete();
      tree = repaired;
      break;
    }
    const root = tree.rootNode;
    if (root.hasError) {
      const message = `the shell grammar cannot parse ${findSyntaxError(root)}`;
      state.result.syntaxError ??= state.scriptDepth === 0 ? message : `${message} in the script \`${source.slice(0, 80)}\``;
      return stays(cwd);
    }
    return walkStatement(root, state, cwd);
  } finally {
    tree.delete();
  }
}

/** Scripts inside scripts, and words bash parses again, nest at most this deep. */
const MAX_SCAN_DEPTH = 4;

/**
 * Parses `source` and walks its words for what expanding them runs (command substitutions are
 * walked and recorded, arithmetic and subscripts checked), recording no command of its own;
 * false when the text does not parse or nests too deeply to follow.
 */
export function scanWords(source: string, state: AnalysisState, cwd: CwdSet): boolean {
  if (state.scriptDepth >= MAX_SCAN_DEPTH) return false;
  const tree = state.parser.parse(source);
  state.scriptDepth++;
  try {
    if (tree.rootNode.hasError) return false;
    scanWord(tree.rootNode, state, cwd);
    return true;
  } finally {
    state.scriptDepth--;
    tree.delete();
  }
}

function walkStatement(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  if (++state.nesting > MAX_NESTING) {
    if (state.nesting === MAX_NESTING + 1) state.result.blockers.push("the command nests too deeply to analyse");
    state.nesting--;
    return stays(cwd);
  }
  try {
    return walkStatementOfType(node, state, cwd);
  } finally {
    state.nesting--;
  }
}

function walkStatementOfType(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  switch (node.type) {
    case "command":
      return readCommand(node, state, cwd);
    case "declaration_command":
    case "unset_command":
      return readKeywordCommand(node, state, cwd);
    case "variable_assignment":
    case "variable_assignments":
      return readBareAssignments(node, state, cwd);
    case "redirected_statement":
      return readRedirectedStatement(node, state, cwd);
    case "list":
      return readList(node, state, cwd);
    case "pipeline":
      return readPipeline(node, state, cwd);
    case "subshell":
      walkSequence(node, state, cwd);
      return stays(cwd);
    case "negated_command": {
      const flow = walkSequence(node, state, cwd);
      return { ok: flow.fail, fail: flow.ok };
    }
    case "function_definition":
      return readFunction(node, state, cwd);
    case "for_statement":
    case "c_style_for_statement":
    case "while_statement":
      return readLoop(node, state, cwd);
    case "comment":
      return stays(cwd);
    default:
      if (SEQUENCES.has(node.type)) return walkSequence(node, state, cwd);
      state.result.blockers.push(`unsupported shell syntax \`${node.type}\`: \`${node.text.slice(0, 60)}\``);
      scanWord(node, state, cwd);
      return stays(cwd);
  }
}

/** A statement, a redirection or a word inside a larger node. */
function walkPart(child: Node, state: AnalysisState, cwd: CwdSet, owner: number | null = null): CwdFlow {
  if (STATEMENTS.has(child.type) || SEQUENCES.has(child.type)) return walkStatement(child, state, cwd);
  if (REDIRECTS.has(child.type)) readRedirect(child, owner, state, cwd);
  else scanWord(child, state, cwd);
  return stays(cwd);
}

/** Children one after another, each from wherever the previous may have left the shell; `… &` leaves nothing. */
function walkSequence(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  for (const reads of arithmeticIn(node)) pendArithmetic(state, reads.names, reads.texts, reads.text);
  let current = cwd;
  let last = stays(cwd);
  const children = node.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (child === null || child === undefined || !child.isNamed) continue;
    let flow = walkPart(child, state, current);
    if (children[i + 1]?.type === "&") flow = stays(current);
    last = flow;
    current = anyExit(flow);
  }
  return { ok: last.ok, fail: unionCwds(last.fail, current) };
}

/** Where the last part of a list or pipeline starts, and its command: a trailing redirection is its own. */
interface Tail {
  cwd: CwdSet;
  owner: number | null;
}

/** The last part of a list or pipeline, walked from `cwd`, noting where it starts in `tail`. */
function walkTail(node: Node, state: AnalysisState, cwd: CwdSet, tail?: Tail): CwdFlow {
  if (tail === undefined) return walkPart(node, state, cwd);
  if (node.type === "list") return readList(node, state, cwd, tail);
  if (node.type === "pipeline") return readPipeline(node, state, cwd, tail);
  const before = state.result.commands.length;
  const flow = walkPart(node, state, cwd);
  tail.cwd = cwd;
  tail.owner = node.type === "command" && state.result.commands.length > before ? before : null;
  return flow;
}

/** `a && b`, `a || b`: b runs only after a succeeded (or failed). */
function readList(node: Node, state: AnalysisState, cwd: CwdSet, tail?: Tail): CwdFlow {
  const [left, right] = node.namedChildren.filter((c): c is Node => c !== null && c.type !== "comment");
  const operator = node.children.find((c) => c !== null && !c.isNamed)?.type;
  if (left === undefined || right === undefined) return walkSequence(node, state, cwd);
  const a = walkPart(left, state, cwd);
  if (operator === "&&") {
    const b = walkTail(right, state, a.ok, tail);
    return { ok: b.ok, fail: unionCwds(a.fail, b.fail) };
  }
  if (operator === "||") {
    const b = walkTail(right, state, a.fail, tail);
    return { ok: unionCwds(a.ok, b.ok), fail: b.fail };
  }
  return walkTail(right, state, anyExit(a), tail);
}

/** Every part of a pipeline runs in a subshell of its own, from `cwd`. */
function readPipeline(node: Node, state: AnalysisState, cwd: CwdSet, tail?: Tail): CwdFlow {
  const parts = node.namedChildren.filter((c): c is Node => c !== null);
  parts.forEach((part, i) => (i === parts.length - 1 ? walkTail(part, state, cwd, tail) : walkPart(part, state, cwd)));
  return stays(cwd);
}

/** Loops run their body again from wherever it left the shell: a body that changes directory makes it unknown. */
function readLoop(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  if (node.type === "for_statement") taintLoopVariable(node, state);
  const start = mark(state);
  let flow = stays(cwd);
  if (node.type === "while_statement") flow = walkSequence(node, state, cwd);
  else {
    for (const reads of arithmeticIn(node)) pendArithmetic(state, reads.names, reads.texts, reads.text);
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (child === null || !child.isNamed) continue;
      const field = node.fieldNameForChild(i);
      if (field === "body" || child.type === "do_group") flow = walkStatement(child, state, cwd);
      else if (REDIRECTS.has(child.type)) readRedirect(child, null, state, cwd);
      else if (field !== "variable") scanWord(child, state, cwd);
    }
  }
  if (sameCwds(anyExit(flow), cwd)) return flow;
  widenSince(state, start, "unknown");
  return stays(unionCwds(anyExit(flow), UNKNOWN_CWD));
}

/** `for x in WORDS` (and `select`) fills x with text the line chose, unless every word is a whole number. */
function taintLoopVariable(node: Node, state: AnalysisState): void {
  const variable = node.childForFieldName("variable")?.text;
  if (variable === undefined) return;
  const values = node.childrenForFieldName("value").filter((v): v is Node => v !== null);
  const numeric = values.length > 0 && values.every((v) => /^-?\d+$|^\{-?\d+\.\.-?\d+(\.\.-?\d+)?\}$/.test(v.text));
  // `select` reads its choice from the input; `for x; do` walks the positional parameters.
  if (node.child(0)?.type === "select" || values.length === 0) taint(state, variable);
  else if (!numeric) {
    state.tainted.add(variable);
    state.loopWords.set(variable, [...(state.loopWords.get(variable) ?? []), ...values.map(readWord)]);
  }
}

/** A function's body runs wherever it is called: its directories are widened to the whole line's. */
function readFunction(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  const start = mark(state);
  let changes = false;
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null || !child.isNamed || node.fieldNameForChild(i) === "name") continue;
    const flow = walkPart(child, state, cwd);
    changes ||= !sameCwds(anyExit(flow), cwd);
  }
  widenSince(state, start, "anywhere");
  return changes ? stays(unionCwds(cwd, UNKNOWN_CWD)) : stays(cwd);
}

/** Every substitution, arithmetic context and side-effecting expansion under a word-like node. */
export function scanWord(node: Node, state: AnalysisState, cwd: CwdSet): void {
  if (node.type === "command_substitution" || node.type === "process_substitution") {
    state.result.constructs.push({ kind: node.type, text: node.text });
    // Inside backquotes bash drops the backslash before `$`, a backquote and `\\`, then parses
    // (`\$(x)` runs x); the grammar does not, so the text bash parses is walked instead.
    if (node.text.startsWith("`") && node.text.includes("\\")) {
      const inner = node.text.slice(1, -1).replace(/\\([$`\\])/g, "$1");
      if (inner.includes('\\"') || state.scriptDepth >= 4) {
        state.result.blockers.push(`a backslash inside backquotes (\`${node.text.slice(0, 60)}\`) is read differently by bash; use $(…)`);
      } else {
        state.scriptDepth++;
        try {
          walkScript(inner, state, cwd);
        } finally {
          state.scriptDepth--;
        }
      }
      return;
    }
    walkSequence(node, state, cwd);
    return;
  }
  for (const reads of arithmeticIn(node)) pendArithmetic(state, reads.names, reads.texts, reads.text);
  const effects = expansionEffects(node);
  for (const name of effects.assigns) taint(state, name);
  if (effects.indirect.length > 0) pendArithmetic(state, effects.indirect, [], node.text);
  if (effects.problem !== null) state.result.blockers.push(effects.problem);
  if (node.type === "unary_expression" && /^-[vR]$/.test(node.child(0)?.text ?? "")) nameTest(node, state);
  if (node.type === "heredoc_body") {
    scanHeredocBody(node, state, cwd);
    return;
  }
  // Inside `${x#…}` and `${x:-…}` the grammar leaves `$(…)` or a backquoted command as plain text; bash runs it.
  if ((node.type === "word" || node.type === "regex") && node.parent?.type === "expansion" && /`|\$[({]/.test(node.text)) {
    scanAsDoubleQuoted(node.text, state, cwd);
  }
  for (const child of node.namedChildren) if (child !== null) scanWord(child, state, cwd);
}

function pendArithmetic(state: AnalysisState, names: string[], texts: string[], text: string): void {
  state.pending.push({ names, texts, nameWords: [], owner: null, where: `\`${text.slice(0, 60)}\`` });
}

/** `[[ -v NAME ]]`: a subscript in NAME is evaluated. */
function nameTest(node: Node, state: AnalysisState): void {
  const operand = node.namedChildren.at(-1);
  if (operand === null || operand === undefined) return;
  const word = readWord(operand);
  if (word.kind !== "literal" && word.kind !== "glob") {
    state.pending.push({ names: [], texts: [], nameWords: [word], owner: null, where: `\`${node.text.slice(0, 60)}\`` });
    return;
  }
  // `a[1]` reads as a glob to the grammar; only a subscript other than a plain index is evaluated.
  const subscript = /^[A-Za-z_][A-Za-z0-9_]*\[(.*)\]$/s.exec(word.value)?.[1];
  if (subscript !== undefined && !/^\d*$/.test(subscript)) pendArithmetic(state, [], [subscript], node.text);
  else if (subscript === undefined && word.value.includes("[")) pendArithmetic(state, [], [word.value], node.text);
}

/** An unquoted here-document body, parsed again as the double-quoted string bash expands it as. */
function scanHeredocBody(node: Node, state: AnalysisState, cwd: CwdSet): void {
  const start = node.parent?.namedChildren.find((c) => c?.type === "heredoc_start");
  if (start === null || start === undefined || /['"\\]/.test(start.text)) return;
  scanAsDoubleQuoted(node.text, state, cwd);
}

/** Text bash expands like a double-quoted string, parsed on its own for what it runs. */
function scanAsDoubleQuoted(text: string, state: AnalysisState, cwd: CwdSet): void {
  const tree = state.parser.parse(`: "${bodyAsDoubleQuoted(text)}"`);
  try {
    if (tree.rootNode.hasError) {
      state.result.blockers.push(`\`${text.slice(0, 60)}\` cannot be read the way bash expands it`);
      return;
    }
    for (const child of tree.rootNode.namedChildren) if (child !== null) walkSequence(child, state, cwd);
  } finally {
    tree.delete();
  }
}

function readRedirectedStatement(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  const body = node.childForFieldName("body");
  // The grammar hangs `a && b > f` and `a | b > f` on the whole list; bash gives `> f` to `b`.
  const tail: Tail = { cwd, owner: null };
  let flow = stays(cwd);
  if (body !== null) {
    const before = state.result.commands.length;
    if (body.type === "list" || body.type === "pipeline") flow = walkTail(body, state, cwd, tail);
    else {
      flow = walkStatement(body, state, cwd);
      const single = body.type === "command" || body.type === "declaration_command" || body.type === "unset_command";
      if (single && state.result.commands.length > before) tail.owner = before;
    }
  }
  for (const child of node.namedChildren) {
    if (child === null || child.id === body?.id) continue;
    if (REDIRECTS.has(child.type)) readRedirect(child, tail.owner, state, tail.cwd, anyExit(flow));
    else flow = walkPart(child, state, anyExit(flow));
  }
  return flow;
}

/** A redirection's file (opened where the command starts); a here-document also carries the rest of its line. */
function readRedirect(node: Node, owner: number | null, state: AnalysisState, cwd: CwdSet, after: CwdSet = cwd): void {
  if (node.type !== "file_redirect") {
    let current = after;
    for (const child of node.namedChildren) {
      if (child === null) continue;
      if (REDIRECTS.has(child.type)) readRedirect(child, owner, state, cwd);
      else current = anyExit(walkPart(child, state, current, owner));
    }
    return;
  }
  let operator = "";
  for (const child of node.children) if (child !== null && !child.isNamed) operator ||= child.text;
  const descriptor = node.childForFieldName("descriptor");
  for (const destination of node.childrenForFieldName("destination")) {
    if (destination === null) continue;
    scanWord(destination, state, cwd);
    const target = readWord(destination);
    const isFd = target.kind === "literal" && /^(\d+|-)$/.test(target.value);
    if (operator === ">&" && descriptor === null && !isFd) expandedTwice(target, node.text, owner, state, cwd);
    let access: "write" | "read" | null = null;
    if (WRITE_OPERATORS.has(operator)) access = "write";
    else if (operator === "<") access = "read";
    else if ((operator === ">&" || operator === "<&") && !isFd) access = operator === ">&" ? "write" : "read";
    if (access !== null) state.result.files.push({ access, target, text: node.text, owner, via: "redirect", tree: null, cwd });
  }
}

/**
 * `>&WORD` with no descriptor before it, when WORD is not a number, becomes `&>WORD` — and bash
 * expands the word's text a second time (`>&'$(cmd)'` runs cmd): the text is walked as words,
 * and a value the line chose is code.
 */
function expandedTwice(target: ShellWord, text: string, owner: number | null, state: AnalysisState, cwd: CwdSet): void {
  const where = `\`${text.slice(0, 60)}\``;
  if (target.kind !== "literal") {
    state.pending.push({ names: [], texts: [], nameWords: [target], owner, where });
  } else if (/[$`\\'"]/.test(target.value) && !state.scanWords(`: ${target.value}`, state, cwd)) {
    state.result.blockers.push(`${where}: bash expands the target of \`>&\` twice, and \`${target.value.slice(0, 60)}\` cannot be read the way it does`);
  }
}

function readCommand(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
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
  const recorded = recordCommand(state, { text: node.text, env, argv }, cwd);
  for (const child of scanned) {
    if (child.type !== "variable_assignment" && (STATEMENTS.has(child.type) || SEQUENCES.has(child.type))) walkStatement(child, state, cwd);
    else scanWord(child, state, cwd);
  }
  for (const redirect of redirects) readRedirect(redirect, recorded.index, state, cwd);
  return recorded.flow;
}

function readAssignment(node: Node): ShellAssignment {
  const valueNode = node.childForFieldName("value");
  return { name: node.childForFieldName("name")?.text ?? "", value: valueNode ? readWord(valueNode) : literalWord(""), raw: node.text };
}

/** `export A=1 B`, `local x`, `unset y`: a command named by its keyword. */
function readKeywordCommand(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  const argv: ShellWord[] = [];
  for (const child of node.children) {
    if (child === null) continue;
    if (!child.isNamed) {
      if (argv.length === 0) argv.push(literalWord(child.text));
      continue;
    }
    argv.push(child.type === "variable_assignment" ? readAssignmentWord(child) : readWord(child));
  }
  const recorded = recordCommand(state, { text: node.text, env: [], argv }, cwd);
  for (const child of node.namedChildren) if (child !== null) scanWord(child, state, cwd);
  return recorded.flow;
}

function readBareAssignments(node: Node, state: AnalysisState, cwd: CwdSet): CwdFlow {
  const nodes = node.type === "variable_assignment" ? [node] : node.namedChildren.filter((c): c is Node => c !== null);
  const env = nodes.map(readAssignment);
  for (const assignment of env) taint(state, assignment.name.replace(/\[.*$/, ""));
  const recorded = recordCommand(state, { text: node.text, env, argv: [] }, cwd);
  scanWord(node, state, cwd);
  return recorded.flow;
}
