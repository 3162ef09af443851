/**
 * A small YAML input file (the pricing, matrix and quarantine files) read and checked against its
 * strict zod schema in one pass, every problem located at its field: bytes that are not UTF-8,
 * YAML syntax, an empty file or one whose top level is not a mapping, then each unknown key (with
 * a did-you-mean) and each schema issue ("missing key `x`" at the mapping that lacks it). The file's
 * own error class wraps the problems; what the values mean is the caller's to check.
 */
import type { z } from "zod";
import { RhemaError } from "../core/errors.js";
import { splitSchemaIssues } from "./schema-keys.js";
import { formatFieldProblems, parseYamlSource, valueAtPath, type FieldProblem, type YamlSource } from "./yaml-source.js";

/** A YAML input file that cannot be used (exit 2); its message lists every problem, one a line. Each file kind names its own subclass. */
export class YamlFileError<P extends FieldProblem = FieldProblem> extends RhemaError {
  readonly problems: readonly P[];
  constructor(problems: readonly P[], options?: { cause?: unknown }) {
    super("invalid_input", formatFieldProblems(problems), options);
    this.problems = problems;
  }
}

export type CheckedYaml<T> = { ok: true; value: T; yaml: YamlSource } | { ok: false; problems: FieldProblem[] };

/** A schema issue as a field and a message; return null to have the default description. */
export type IssueDescriber = (issue: z.core.$ZodIssue, value: unknown) => { field: string; message: string } | null;

export interface YamlFileRules<S extends z.ZodType> {
  schema: S;
  /** What the file is, for messages: `the pricing file`. */
  what: string;
  /** Said at 1:1 of an empty file, or of one whose top level is not a mapping: what the file needs. */
  needs: string;
  /** A file's own reading of some issues (a shorthand whose problem is its parent's). */
  describeIssue?: IssueDescriber;
}

/** Parses `text` (of `file`, for the problems) and checks it against `rules.schema`. */
export function checkYamlFile<S extends z.ZodType>(text: string | Uint8Array, file: string, rules: YamlFileRules<S>): CheckedYaml<z.infer<S>> {
  const yaml = parseYamlSource(text);
  const fail = (problems: FieldProblem[]): CheckedYaml<z.infer<S>> => ({ ok: false, problems });
  if (yaml.encodingProblem !== null) return fail([{ file, ...yaml.encodingProblem, field: "" }]);
  if (yaml.syntaxProblems.length > 0) return fail(yaml.syntaxProblems.map((p) => ({ file, line: p.line, column: p.column, field: "yaml", message: p.message })));
  if (yaml.rootKind !== "mapping") {
    const state = yaml.rootKind === "empty" ? "is empty" : "is not a mapping at its top level";
    return fail([{ file, line: 1, column: 1, field: "(root)", message: `${rules.what} ${state}: it needs ${rules.needs}` }]);
  }
  const plain = yaml.toValue({ maxAliasCount: 50 });
  if (!plain.ok) return fail([{ file, ...plain.problem, field: "yaml" }]);
  const parsed = rules.schema.safeParse(plain.value);
  if (parsed.success) return { ok: true, value: parsed.data, yaml };
  const { unknownKeys, others } = splitSchemaIssues(parsed.error.issues, rules.schema, plain.value);
  const problems: FieldProblem[] = [
    ...unknownKeys.map((u) => ({
      file, ...yaml.locateKey(u.path, u.key),
      field: u.path.length > 0 ? u.path.join(".") : "(root)",
      message: `unknown key \`${u.key}\`${u.suggestion === null ? "" : `; did you mean \`${u.suggestion}\`?`}`,
    })),
    ...others.map((issue) => ({ file, ...yaml.locateIssue(issue), ...(rules.describeIssue?.(issue, plain.value) ?? describeIssue(issue, plain.value)) })),
  ];
  return fail(problems.sort((a, b) => a.line - b.line || a.column - b.column));
}

/** A missing key is said at the mapping that lacks it; any other issue at its own path. */
function describeIssue(issue: z.core.$ZodIssue, value: unknown): { field: string; message: string } {
  if (issue.path.length > 0 && valueAtPath(value, issue.path) === undefined) {
    return { field: issue.path.slice(0, -1).join(".") || "(root)", message: `missing key \`${String(issue.path.at(-1))}\`` };
  }
  return { field: issue.path.length > 0 ? issue.path.join(".") : "(root)", message: issue.message };
}

/** The keys of a document's top-level mapping (what tells a file's role); null when it does not parse or is no mapping. */
export function topLevelKeys(yaml: YamlSource): Set<string> | null {
  if (yaml.syntaxProblems.length > 0 || yaml.rootKind !== "mapping") return null;
  const plain = yaml.toValue({ maxAliasCount: 100 });
  if (!plain.ok || typeof plain.value !== "object" || plain.value === null || Array.isArray(plain.value)) return null;
  return new Set(Object.keys(plain.value));
}
