/**
 * The imports one TypeScript file makes, read from its syntax tree (the TypeScript compiler
 * API, not text matching, so comments and strings never count): static `import` and
 * `export … from`, `import type` / `export type` and `import("…")` types, dynamic `import(…)`,
 * and `require(…)` calls — the global one, `createRequire(…)("…")`, and a name bound to
 * `createRequire(…)`. Also how a relative specifier resolves, the way Node and tsc agree on.
 */
import ts from "typescript";

/** How a file reaches another: `type` edges vanish at runtime but still tie the layers. */
export type ImportKind = "static" | "type" | "dynamic" | "require";

export interface ImportSite {
  /** The specifier as written; `null` when it is computed (`import(name)`), so it cannot be followed. */
  specifier: string | null;
  kind: ImportKind;
  /** 1-based line of the specifier. */
  line: number;
}

const MODULE_MODULES = new Set(["module", "node:module"]);

/** Every import site of `file`, in source order. */
export function importSites(file: ts.SourceFile): ImportSite[] {
  const requireNames = requireAliases(file);
  const sites: ImportSite[] = [];
  const add = (node: ts.Node | undefined, kind: ImportKind): void => {
    const literal = node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node));
    const at = node ?? file;
    sites.push({ specifier: literal ? node.text : null, kind, line: lineOf(file, at) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, node.importClause?.isTypeOnly ? "type" : "static");
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(node.moduleSpecifier, node.isTypeOnly ? "type" : "static");
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly ? "type" : "require");
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, "type");
    else if (ts.isCallExpression(node)) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], "dynamic");
      else if (isRequireCallee(node.expression, requireNames)) add(node.arguments[0], "require");
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return sites;
}

/** Whether `specifier` names a file of ours (`./x.js`, `../y/z.js`) rather than a package. */
export function isRelative(specifier: string): boolean {
  return specifier === "." || specifier === ".." || specifier.startsWith("./") || specifier.startsWith("../");
}

/**
 * The file a relative specifier of `fromFile` loads, or `null` when none exists. `require`
 * resolves CommonJS-style, the rest as ES modules (`./x.js` finds `x.ts`; no extension is
 * guessed, as Node guesses none).
 */
export function resolveRelative(specifier: string, kind: ImportKind, fromFile: string, options: ts.CompilerOptions): string | null {
  const mode = kind === "require" ? ts.ModuleKind.CommonJS : ts.ModuleKind.ESNext;
  const resolved = ts.resolveModuleName(specifier, fromFile, options, ts.sys, undefined, undefined, mode).resolvedModule;
  return resolved?.resolvedFileName ?? null;
}

export function lineOf(file: ts.SourceFile, node: ts.Node): number {
  return file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
}

/** Local names of `createRequire`, and of variables bound to a `createRequire(…)` call. */
interface RequireNames { create: Set<string>; bound: Set<string> }

/** `require`, `createRequire(…)` itself, or a name a declaration bound to `createRequire(…)`. */
function isRequireCallee(callee: ts.Expression, names: RequireNames): boolean {
  if (ts.isIdentifier(callee)) return callee.text === "require" || names.bound.has(callee.text);
  return ts.isCallExpression(callee) && isCreateRequire(callee.expression, names);
}

/** `createRequire` (perhaps renamed at its import) or `anything.createRequire`. */
function isCreateRequire(callee: ts.Expression, names: RequireNames): boolean {
  if (ts.isIdentifier(callee)) return names.create.has(callee.text);
  return ts.isPropertyAccessExpression(callee) && callee.name.text === "createRequire";
}

function requireAliases(file: ts.SourceFile): RequireNames {
  const names: RequireNames = { create: new Set(["createRequire"]), bound: new Set() };
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!MODULE_MODULES.has(statement.moduleSpecifier.text)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const spec of bindings.elements) {
        if ((spec.propertyName ?? spec.name).text === "createRequire") names.create.add(spec.name.text);
      }
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer
      && ts.isCallExpression(node.initializer) && isCreateRequire(node.initializer.expression, names)) {
      names.bound.add(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return names;
}
