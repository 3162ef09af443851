/**
 * YAML sources that can say where things are: the one reader of YAML files whose problems must
 * be reported as `file:line:column: message` (task files, policy files). It parses with a line
 * counter and keeps the document, so that a syntax error, an alias that names no anchor, a value
 * or key at a path, and a zod issue's path can each be turned into the line and column of the
 * offending node. What a problem *says* stays with the caller; where it is, and how a located
 * message is written, live here.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, visit, type Document, type Node } from "yaml";
import type { z } from "zod";
import { errorMessage } from "../core/errors.js";
import { decodeUtf8Text, type EncodingProblem } from "./text-bytes.js";

export interface SourcePosition {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** A problem of the YAML itself (syntax, aliases), located; `message` is yaml's, or ours for an unclosed quote. */
export interface YamlProblem extends SourcePosition {
  message: string;
}

/** What the document's root is; a file of only comments or `~` is "empty". */
export type YamlRootKind = "empty" | "mapping" | "list" | "scalar";

/** The plain value of a document, or the located reason it has none. */
export type YamlValue = { ok: true; value: unknown } | { ok: false; problem: YamlProblem };

export interface YamlSource {
  /**
   * Set when the bytes given are not UTF-8 text (text-bytes.ts): then nothing was parsed (the
   * document is empty) and this is the file's one problem. Always null for a string.
   */
  readonly encodingProblem: EncodingProblem | null;
  /** Every syntax error, in file order; empty when the text parsed. */
  readonly syntaxProblems: readonly YamlProblem[];
  readonly rootKind: YamlRootKind;
  /** Where the value at `path` is written, or its nearest ancestor that exists (a missing key's mapping); 1:1 at worst. */
  locateValue(path: readonly PropertyKey[]): SourcePosition;
  /** Where the key `key` of the mapping at `path` is written, else where that mapping is. */
  locateKey(path: readonly PropertyKey[], key: string): SourcePosition;
  /** The node a schema issue is about: the first unknown key for `unrecognized_keys`, else the value at its path. */
  locateIssue(issue: z.core.$ZodIssue): SourcePosition;
  /**
   * The document as plain data. An alias that names no anchor, or more alias expansions than
   * `maxAliasCount` (a "billion laughs" file), is a problem located at the alias.
   */
  toValue(options: { maxAliasCount: number }): YamlValue;
}

const START: SourcePosition = { line: 1, column: 1 };

/**
 * Parses YAML text (or its UTF-8 bytes; a byte-order mark is dropped). Never throws: bytes that
 * are not UTF-8 text are `encodingProblem` (and parse as an empty document), syntax errors are in
 * `syntaxProblems`, and locating still works on what parsed.
 */
export function parseYamlSource(source: string | Uint8Array): YamlSource {
  const decoded = typeof source === "string" ? { ok: true as const, text: source } : decodeUtf8Text(source);
  const encodingProblem = decoded.ok ? null : decoded.problem;
  const text = (decoded.ok ? decoded.text : "").replace(/^\uFEFF/, "");
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number): SourcePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const locateValue = (path: readonly PropertyKey[]): SourcePosition => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = doc.getIn(path.slice(0, depth), true) as Node | undefined;
      if (node?.range) return position(node.range[0]);
    }
    return START;
  };
  const locateKey = (path: readonly PropertyKey[], key: string): SourcePosition => {
    const map = doc.getIn(path, true);
    const pair = isMap(map) ? map.items.find((item) => isScalar(item.key) && item.key.value === key) : undefined;
    const keyNode = pair?.key as Node | undefined;
    return keyNode?.range ? position(keyNode.range[0]) : locateValue(path);
  };
  return {
    encodingProblem,
    syntaxProblems: syntaxProblems(doc, position),
    rootKind: rootKind(doc),
    locateValue,
    locateKey,
    locateIssue: (issue) => (issue.code === "unrecognized_keys" && issue.keys[0] !== undefined
      ? locateKey(issue.path, issue.keys[0])
      : locateValue(issue.path)),
    toValue: ({ maxAliasCount }) => {
      try {
        return { ok: true, value: doc.toJS({ maxAliasCount }) };
      } catch (err) {
        const offset = aliasOffset(doc);
        return { ok: false, problem: { ...(offset === null ? START : position(offset)), message: errorMessage(err) } };
      }
    },
  };
}

/** `file:line:column: message`, or `file: message` for a problem tied to no place in the file. */
export function formatLocatedMessage(file: string, at: SourcePosition | undefined, message: string): string {
  return at === undefined ? `${file}: ${message}` : `${file}:${at.line}:${at.column}: ${message}`;
}

/** One thing wrong with an input file, located at the offending field (`field` "": the file as a whole). */
export interface FieldProblem extends SourcePosition {
  file: string;
  field: string;
  message: string;
}

/** Every problem, one a line: `file:line:column: field: message`. */
export function formatFieldProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => formatLocatedMessage(p.file, p, p.field === "" ? p.message : `${p.field}: ${p.message}`)).join("\n");
}

/** The value at `path` in plain data, or undefined where the path leaves it (to tell a missing key from a wrong one). */
export function valueAtPath(data: unknown, path: readonly PropertyKey[]): unknown {
  let value = data;
  for (const segment of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function rootKind(doc: Document): YamlRootKind {
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return "empty";
  if (isMap(root)) return "mapping";
  return isSeq(root) ? "list" : "scalar";
}

function syntaxProblems(doc: Document, position: (offset: number) => SourcePosition): YamlProblem[] {
  return doc.errors.map((error) => {
    const quoteStart = error.code === "MISSING_CHAR" ? unclosedQuoteStart(doc, error.pos[0]) : null;
    if (quoteStart === null || quoteStart === error.pos[0]) return { ...position(error.pos[0]), message: error.message };
    return { ...position(quoteStart), message: "unclosed quote: the string opened here runs to the end of the file" };
  });
}

/** yaml reports an unclosed quote at the end of the file; the quote's opening is more useful. */
function unclosedQuoteStart(doc: Document, errorOffset: number): number | null {
  let start: number | null = null;
  visit(doc, {
    Scalar(_key, node) {
      const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE";
      if (quoted && node.range && node.range[1] >= errorOffset - 1) start = node.range[0];
    },
  });
  return start;
}

/** Where the alias behind a failed `toJS` stands: the first that names no anchor, else the first alias. */
function aliasOffset(doc: Document): number | null {
  let unresolved: number | null = null;
  let first: number | null = null;
  visit(doc, {
    Alias(_key, node) {
      const offset = node.range?.[0] ?? null;
      first ??= offset;
      if (unresolved === null && node.resolve(doc) === undefined) unresolved = offset;
    },
  });
  return unresolved ?? first;
}
