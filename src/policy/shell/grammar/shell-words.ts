/**
 * Shell words as the policy sees them: the text a word stands for after quote removal
 * (`"r""m"`, `r\m` and `'rm'` are all `rm`), and whether that text is known before the command
 * runs. A word holding a variable, a glob or a substitution is *dynamic*: its source text is
 * kept, and the matcher treats it as "could be anything" when it judges a deny and as "not
 * proven" when it judges an allow.
 */
import type { Node } from "web-tree-sitter";

/**
 * How much is known about a word, from most to least:
 * - `literal`: fully known text;
 * - `glob`: unquoted `*`, `?`, `[` or a brace expansion — becomes file names or several words;
 * - `expansion`: holds `$VAR`, `${…}` or `$((…))`;
 * - `substitution`: holds `$(…)`, a backquote or a process substitution;
 * - `unknown`: syntax the analysis does not model.
 */
export type WordKind = "literal" | "glob" | "expansion" | "substitution" | "unknown";

export interface ShellWord {
  /** The word as written in the command. */
  raw: string;
  /** The word after quote removal; dynamic parts keep their source text. */
  value: string;
  kind: WordKind;
  /** True when the shell may turn it into zero or several words (unquoted expansion, glob). */
  multi: boolean;
  /** Variables the word expands (`$X`, `${X:-…}`, `$1`), in order; `RUNTIME_VALUE` for a run-time word. */
  vars: readonly string[];
}

/** A `NAME=value` word in effect for a command: a prefix (`A=1 cmd`) or given to `env`. */
export interface ShellAssignment {
  name: string;
  value: ShellWord;
  /** As written, e.g. `NODE_ENV=test`. */
  raw: string;
}

/** The variable name a run-time word (xargs input) carries: data the analysis cannot see. */
export const RUNTIME_VALUE = "<run time>";

/** What arithmetic reads when it holds a command substitution: the command's output, text the line chose. */
export const COMMAND_OUTPUT = "<command output>";

/** The variable name of `find -exec`'s `{}`: a path find found, under the folders it searched. */
export const FIND_MATCH = "<find match>";

const KIND_ORDER: readonly WordKind[] = ["literal", "glob", "expansion", "substitution", "unknown"];

function worseKind(a: WordKind, b: WordKind): WordKind {
  return KIND_ORDER.indexOf(a) >= KIND_ORDER.indexOf(b) ? a : b;
}

/** A literal word made from plain text, e.g. the placeholder xargs appends. */
export function literalWord(text: string): ShellWord {
  return { raw: text, value: text, kind: "literal", multi: false, vars: [] };
}

/** A word whose content is decided at run time (xargs input, `find -exec {}` matches). */
export function runtimeWord(label: string, source = RUNTIME_VALUE): ShellWord {
  return { raw: label, value: label, kind: "expansion", multi: true, vars: [source] };
}

/** Names of the variables expanded under `node` (outside command substitutions). */
export function expandedNames(node: Node): string[] {
  const names: string[] = [];
  const visit = (n: Node, inExpansion: boolean): void => {
    if (n.type === "command_substitution" || n.type === "process_substitution") return;
    const expansion = inExpansion || n.type === "simple_expansion" || n.type === "expansion" || n.type === "arithmetic_expansion";
    if (expansion && (n.type === "variable_name" || n.type === "special_variable_name")) names.push(n.text);
    for (const child of n.namedChildren) if (child !== null) visit(child, expansion);
  };
  visit(node, false);
  return names;
}

/** True when the node or anything under it is a command or process substitution. */
export function containsSubstitution(node: Node): boolean {
  if (node.type === "command_substitution" || node.type === "process_substitution") return true;
  for (const child of node.namedChildren) {
    if (child !== null && containsSubstitution(child)) return true;
  }
  return false;
}

/**
 * Reads one word node (word, string, concatenation, expansion, …). `unquotedShape` marks which
 * characters the shell would still interpret (glob and brace characters) — quoted or escaped
 * characters are blanked in it.
 */
interface WordParts {
  value: string;
  unquotedShape: string;
  kind: WordKind;
  multi: boolean;
}

function readParts(node: Node): WordParts {
  const text = node.text;
  switch (node.type) {
    case "word":
      return unescapeUnquoted(text);
    case "raw_string":
      return quoted(text.slice(1, -1));
    case "ansi_c_string":
      return quoted(decodeAnsiC(text.slice(2, -1)));
    case "string":
      return readDoubleQuoted(node);
    case "translated_string": {
      const inner = node.namedChildren[0];
      return inner ? readDoubleQuoted(inner) : quoted("");
    }
    case "number":
    case "variable_name":
      return node.namedChildCount === 0 ? { value: text, unquotedShape: text, kind: "literal", multi: false } : dynamic(node, true);
    case "concatenation":
      return readConcatenation(node);
    case "simple_expansion":
    case "expansion":
    case "arithmetic_expansion":
    case "command_substitution":
      return dynamic(node, true);
    case "process_substitution":
      return dynamic(node, false);
    case "brace_expression":
    case "extglob_pattern":
      return { value: text, unquotedShape: text, kind: "glob", multi: true };
    default:
      return { value: text, unquotedShape: "", kind: "unknown", multi: true };
  }
}

function quoted(value: string): WordParts {
  return { value, unquotedShape: " ".repeat(value.length), kind: "literal", multi: false };
}

function dynamic(node: Node, unquoted: boolean): WordParts {
  const substitution = containsSubstitution(node);
  return {
    value: node.text,
    unquotedShape: " ".repeat(node.text.length),
    kind: substitution ? "substitution" : "expansion",
    multi: unquoted,
  };
}

function readConcatenation(node: Node): WordParts {
  let value = "";
  let unquotedShape = "";
  let kind: WordKind = "literal";
  let multi = false;
  for (const child of node.children) {
    if (child === null) continue;
    const part = child.isNamed ? readParts(child) : { value: child.text, unquotedShape: child.text, kind: "literal" as const, multi: false };
    value += part.value;
    unquotedShape += part.unquotedShape;
    kind = worseKind(kind, part.kind);
    multi ||= part.multi;
  }
  return { value, unquotedShape, kind, multi };
}

function readDoubleQuoted(node: Node): WordParts {
  let value = "";
  let kind: WordKind = "literal";
  for (const child of node.namedChildren) {
    if (child === null) continue;
    if (child.type === "string_content") {
      value += unescapeDoubleQuoted(child.text);
      continue;
    }
    const part = readParts(child);
    value += part.value;
    kind = worseKind(kind, part.kind === "glob" ? "literal" : part.kind);
  }
  // Quoting stops word splitting and globbing: a quoted word is always exactly one word.
  return { value, unquotedShape: " ".repeat(value.length), kind, multi: false };
}

/** Backslash removal outside quotes: `r\m` is `rm`; a backslash-newline joins lines. */
function unescapeUnquoted(text: string): WordParts {
  let value = "";
  let unquotedShape = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\" && i + 1 < text.length) {
      const next = text[++i]!;
      if (next === "\n") continue;
      value += next;
      unquotedShape += " ";
      continue;
    }
    value += ch;
    unquotedShape += ch;
  }
  return { value, unquotedShape, kind: "literal", multi: false };
}

/** Inside double quotes a backslash escapes only `$`, a backquote, `"`, `\` and newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, ch: string) => (ch === "\n" ? "" : ch));
}

const ANSI_C_SIMPLE: Readonly<Record<string, string>> = {
  a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v",
  "\\": "\\", "'": "'", '"': '"', "?": "?",
};

/** Decodes the body of `$'…'`: `$'\x72m'` is `rm`. */
export function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (whole, esc: string) => {
      const head = esc[0]!;
      if (head === "x" || head === "u" || head === "U") {
        if (esc.length === 1) return whole;
        return String.fromCodePoint(Math.min(parseInt(esc.slice(1), 16), 0x10ffff));
      }
      if (/[0-7]/.test(head)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
      if (head === "c" && esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return ANSI_C_SIMPLE[head] ?? whole;
    },
  );
}

/** Unquoted `*`, `?`, `[`, or `{…,…}` / `{a..b}`: the shell expands the word into file names or several words. */
function hasGlobOrBrace(unquotedShape: string): boolean {
  if (/[*?[]/.test(unquotedShape)) return true;
  const open = unquotedShape.indexOf("{");
  if (open < 0) return false;
  const close = unquotedShape.indexOf("}", open);
  return close > open && /,|\.\./.test(unquotedShape.slice(open, close));
}

/** Reads a word node into a `ShellWord`. */
export function readWord(node: Node): ShellWord {
  if (!node.isNamed) return { raw: node.text, value: node.text, kind: "unknown", multi: true, vars: [] };
  const parts = readParts(node);
  let kind = parts.kind;
  let multi = parts.multi;
  if (kind === "literal" && hasGlobOrBrace(parts.unquotedShape)) {
    kind = "glob";
    multi = true;
  }
  if (kind !== "substitution" && kind !== "unknown" && containsSubstitution(node)) kind = "substitution";
  return { raw: node.text, value: parts.value, kind, multi, vars: kind === "literal" || kind === "glob" ? [] : expandedNames(node) };
}

/** A `NAME=value` assignment as a word, for declaration commands (`export A=1`). */
export function readAssignmentWord(node: Node): ShellWord {
  const name = node.childForFieldName("name");
  const valueNode = node.childForFieldName("value");
  const value = valueNode ? readWord(valueNode) : literalWord("");
  return {
    raw: node.text,
    value: `${name?.text ?? ""}=${value.value}`,
    kind: value.kind,
    multi: false,
    vars: value.vars,
  };
}
