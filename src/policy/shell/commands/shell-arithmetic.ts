/**
 * Where bash evaluates text as arithmetic — `$((…))`, `$[…]`, `((…))`, `for ((…))`, array
 * subscripts (`a[i]=`, `${a[i]}`, and the `[i]=` keys of an array literal `(…)`),
 * `${x:offset:length}`, the operands of `[[ a -eq b ]]` — and what it reads there.
 * Arithmetic on a variable evaluates the variable's *value* as an expression, and an array
 * subscript inside that value runs command substitutions (`x='a[$(rm y)]'; echo $((x))`), so
 * such a read is code when the line chose the value. Also the expansions with side effects:
 * `${x:=text}` assigns, `${!x}` uses a value as a name, `${x@P}` expands a value as a prompt.
 */
import type { Node } from "web-tree-sitter";
import { COMMAND_OUTPUT } from "../grammar/shell-words.js";

export interface ArithmeticRead {
  /** Variables read (their values are evaluated). */
  names: string[];
  /** Literal strings evaluated as expressions. */
  texts: string[];
  /** The arithmetic as written, for reasons. */
  text: string;
}

const ARITHMETIC_TEST = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The reads of one arithmetic context node. */
function readsOf(node: Node, text: string): ArithmeticRead {
  const read: ArithmeticRead = { names: [], texts: [], text };
  const visit = (n: Node): void => {
    if (n.type === "command_substitution" || n.type === "process_substitution") {
      // The command runs on its own (judged as such); its output is then evaluated as an expression.
      read.names.push(COMMAND_OUTPUT);
      return;
    }
    if (n.type === "variable_name" || n.type === "special_variable_name") read.names.push(n.text);
    else if (n.type === "word" && IDENTIFIER.test(n.text)) read.names.push(n.text);
    else if (n.type === "raw_string") read.texts.push(n.text.slice(1, -1));
    else if (n.type === "string_content" || (n.type === "word" && !/^[0-9#xXa-fA-F]+$/.test(n.text))) read.texts.push(n.text);
    for (const child of n.namedChildren) if (child !== null) visit(child);
  };
  visit(node);
  return read;
}

/** The arithmetic parts directly in `node` (not nested statements' own). */
export function arithmeticIn(node: Node): ArithmeticRead[] {
  switch (node.type) {
    case "arithmetic_expansion":
      return [readsOf(node, node.text)];
    case "compound_statement":
      return node.child(0)?.type === "((" ? [readsOf(node, node.text)] : [];
    case "c_style_for_statement": {
      const parts = node.namedChildren.filter((c): c is Node => c !== null && c.type !== "do_group" && c.type !== "compound_statement");
      return parts.map((p) => readsOf(p, p.text));
    }
    case "subscript": {
      const index = node.childForFieldName("index") ?? node.namedChildren[1];
      return index && index.text !== "@" && index.text !== "*" ? [readsOf(index, node.text)] : [];
    }
    case "binary_expression": {
      const operator = node.childForFieldName("operator") ?? node.children.find((c) => c?.type === "test_operator");
      if (operator === null || operator === undefined || !ARITHMETIC_TEST.has(operator.text)) return [];
      const sides = node.namedChildren.filter((c): c is Node => c !== null && c.id !== operator.id);
      return sides.map((s) => readsOf(s, node.text));
    }
    case "expansion":
      return offsetReads(node);
    case "array":
      return node.namedChildren.flatMap((element) => (element === null ? [] : keyReads(element)));
    default:
      return [];
  }
}

/**
 * `[KEY]=value` in an array literal: KEY is a subscript (arithmetic for an indexed array, a
 * word expanded for an associative one). The grammar reads the element as plain words, so the
 * parts between the first `[` and the next `]` are taken (a nested subscript is text that holds
 * a `[`, which is refused); quoted parts are text bash evaluates.
 */
function keyReads(element: Node): ArithmeticRead[] {
  if (!element.text.startsWith("[") || !/\]\+?=/.test(element.text)) return [];
  if (element.type !== "concatenation") {
    const key = /^\[(.*?)\]\+?=/s.exec(element.text)?.[1] ?? element.text;
    return [{ names: [], texts: /^[0-9]+$/.test(key) ? [] : [key], text: element.text }];
  }
  const parts: Node[] = [];
  for (const child of element.children.slice(1)) {
    if (child === null) continue;
    if (child.text.startsWith("]")) break;
    parts.push(child);
  }
  const read: ArithmeticRead = { names: [], texts: [], text: element.text };
  for (const part of parts) {
    const inner = part.isNamed ? readsOf(part, element.text) : { names: [], texts: [part.text] };
    read.names.push(...inner.names);
    read.texts.push(...inner.texts);
  }
  return [read];
}

/** `${x:offset:length}`: the parts after the colons are arithmetic. */
function offsetReads(node: Node): ArithmeticRead[] {
  const reads: ArithmeticRead[] = [];
  let afterColon = false;
  for (const child of node.children) {
    if (child === null) continue;
    if (!child.isNamed) {
      afterColon = child.text === ":";
      continue;
    }
    if (afterColon) reads.push(readsOf(child, node.text));
  }
  return reads;
}

export interface ExpansionEffects {
  /** Variables assigned text (`${x:=text}`). */
  assigns: string[];
  /** Variables whose value is used as a variable name (`${!x}`). */
  indirect: string[];
  /** Why the expansion runs code whatever the value, or null (`${x@P}`). */
  problem: string | null;
}

/** The side effects of a `${…}` expansion node. */
export function expansionEffects(node: Node): ExpansionEffects {
  const effects: ExpansionEffects = { assigns: [], indirect: [], problem: null };
  if (node.type !== "expansion") return effects;
  const tokens = node.children.filter((c): c is Node => c !== null);
  const name = tokens.find((c) => c.type === "variable_name" || c.type === "subscript");
  const variable = name?.type === "subscript" ? (name.namedChildren[0]?.text ?? "") : (name?.text ?? "");
  if (tokens.some((c) => !c.isNamed && (c.text === "=" || c.text === ":="))) effects.assigns.push(variable);
  if (tokens[1] !== undefined && !tokens[1].isNamed && tokens[1].text === "!" && !/[*@]\}$/.test(node.text)) effects.indirect.push(variable);
  const at = tokens.findIndex((c) => !c.isNamed && c.text === "@");
  if (at >= 0 && /P/.test(tokens[at + 1]?.text ?? "")) {
    effects.problem = `\`${node.text.slice(0, 60)}\` expands a value as a prompt, which runs the command substitutions in it`;
  }
  return effects;
}

/** Why literal arithmetic text can run code, or null: a subscript, a substitution, or a read of a tainted variable. */
export function arithmeticTextProblem(text: string, tainted: ReadonlySet<string>): string | null {
  if (/[[`]|\$[({]/.test(text)) return "it holds an array subscript or a substitution, which bash evaluates and can run commands";
  for (const match of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!_-]/g)) {
    const name = match[0].replace(/^\$/, "");
    if (tainted.has(name)) return `it reads \`${name}\`, whose value this command line chose`;
  }
  return null;
}
