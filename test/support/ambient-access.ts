/**
 * Which uses of the ambient `process` and `console` one file makes that belong to the edges
 * (docs/design.md §3): reading the environment, arguments or working folder, printing, exiting,
 * installing handlers. Found with the type checker, so a use is one however the object was
 * reached — `process.env`, `process["env"]`, `const { env } = process`, `const p = process;
 * p.env`, `globalThis.process.env`, `import process from "node:process"`, `import { env } from
 * "node:process"` — while a local variable that merely has the name `process`, a child
 * process's `stdout`, a comment or a string never counts.
 */
import ts from "typescript";
import { lineOf } from "./import-graph.js";

/** `process` members only the edges may use. `kill`, `pid`, `platform`, `hrtime`, … stay allowed. */
export const EDGE_PROCESS_MEMBERS: ReadonlySet<string> = new Set([
  "env", "argv", "cwd", "chdir", "stdin", "stdout", "stderr", "exit", "exitCode", "emitWarning",
  "on", "once", "addListener", "prependListener", "prependOnceListener",
]);
/** `console` methods that print. */
const CONSOLE_MEMBERS: ReadonlySet<string> = new Set([
  "log", "error", "warn", "info", "debug", "trace", "dir", "dirxml", "table", "assert", "count",
  "group", "groupCollapsed", "time", "timeEnd", "timeLog",
]);
const PROCESS_MODULES = new Set(["process", "node:process"]);

export interface AmbientUse {
  object: "process" | "console";
  /** The member used; `[computed]` for `process[name]`, `...rest` for a rest pattern. */
  member: string;
  line: number;
}

/** The edge-only uses in `file`, in source order. */
export function ambientUses(file: ts.SourceFile, checker: ts.TypeChecker): AmbientUse[] {
  const uses: AmbientUse[] = [];
  const add = (object: AmbientUse["object"], member: string, node: ts.Node): void => {
    uses.push({ object, member, line: lineOf(file, node) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node)) {
      const name = node.name.text;
      if (EDGE_PROCESS_MEMBERS.has(name) && isMemberOf(checker.getSymbolAtLocation(node.name), "Process")) add("process", name, node);
      else if (CONSOLE_MEMBERS.has(name) && isMemberOf(checker.getSymbolAtLocation(node.name), "Console")) add("console", name, node);
    } else if (ts.isElementAccessExpression(node)) {
      const member = elementUse(node, checker);
      if (member !== null) add("process", member, node);
    } else if (ts.isObjectBindingPattern(node)) {
      for (const member of destructuredUses(node, checker)) add("process", member, node);
    } else if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && isProcessModule(node.moduleSpecifier)) {
      for (const member of importedMembers(node)) add("process", member, node);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return uses;
}

/** `process["env"]` names its member; `process[key]` cannot be judged and counts as a use. */
function elementUse(node: ts.ElementAccessExpression, checker: ts.TypeChecker): string | null {
  const arg = node.argumentExpression;
  const type = checker.getTypeAtLocation(node.expression);
  if (ts.isStringLiteralLike(arg)) {
    return EDGE_PROCESS_MEMBERS.has(arg.text) && isMemberOf(type.getProperty(arg.text), "Process") ? arg.text : null;
  }
  return isProcessType(type) ? "[computed]" : null;
}

/** `const { env, argv: a } = process` and `const { ...all } = process`. */
function destructuredUses(pattern: ts.ObjectBindingPattern, checker: ts.TypeChecker): string[] {
  const members: string[] = [];
  let type: ts.Type | null = null;
  const sourceType = (): ts.Type => (type ??= checker.getTypeAtLocation(pattern));
  for (const element of pattern.elements) {
    if (element.dotDotDotToken) {
      if (isProcessType(sourceType())) members.push("...rest");
      continue;
    }
    const key = element.propertyName ?? element.name;
    const name = ts.isIdentifier(key) || ts.isStringLiteralLike(key) ? key.text : null;
    if (name !== null && EDGE_PROCESS_MEMBERS.has(name) && isMemberOf(sourceType().getProperty(name), "Process")) members.push(name);
  }
  return members;
}

/** `import { env } from "node:process"`, `export { argv } from "process"`. */
function importedMembers(node: ts.ImportDeclaration | ts.ExportDeclaration): string[] {
  const named = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
  if (!named || !(ts.isNamedImports(named) || ts.isNamedExports(named))) return [];
  const members: string[] = [];
  for (const spec of named.elements) {
    const name = (spec.propertyName ?? spec.name).text;
    if (EDGE_PROCESS_MEMBERS.has(name)) members.push(name);
  }
  return members;
}

function isProcessModule(specifier: ts.Expression | undefined): boolean {
  return specifier !== undefined && ts.isStringLiteral(specifier) && PROCESS_MODULES.has(specifier.text);
}

/** The type of Node's `process` object (or something built on it): it has Node's own `pid`. */
function isProcessType(type: ts.Type): boolean {
  return isMemberOf(type.getProperty("pid"), "Process");
}

/** Whether `symbol` is declared as a member of @types/node's interface `interfaceName`. */
function isMemberOf(symbol: ts.Symbol | undefined, interfaceName: string): boolean {
  return (symbol?.declarations ?? []).some((d) =>
    ts.isInterfaceDeclaration(d.parent) && d.parent.name.text === interfaceName
      && /[\\/]@types[\\/]node[\\/]/.test(d.getSourceFile().fileName));
}
