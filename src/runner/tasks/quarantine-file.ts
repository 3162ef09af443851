/**
 * The quarantine file (`rhema run --quarantine FILE`, `rhema validate --quarantine FILE`, the
 * Action's `quarantine` input; `rhema report trend --propose-quarantine` writes one): the tasks
 * whose failures are reported but do not fail the gate. YAML, read by yaml-source and checked by
 * a strict zod schema; every problem is `file:line:column: field: message` in a
 * `QuarantineFileError` (exit 2, nothing run).
 *
 *   version: 1
 *   quarantine:
 *     - arithmetic/flaky-fix                      # a bare suite/id label
 *     - task: refactor/rename-calc
 *       reason: flaky in 3 of the last 10 runs    # optional, shown in every report
 *
 * A label names a task (every trial and variant of it), never a glob. A label twice is an error;
 * a label the suite does not define is not (a task renamed or removed since the file was written)
 * but a warning from `unknownQuarantineWarnings`, located at the entry.
 */
import { z } from "zod";
import { RhemaError, errorMessage, throwIfMachineLimit } from "../../core/errors.js";
import { readRegularFile } from "../../store/input-file.js";
import { splitSchemaIssues } from "../../yaml-source/schema-keys.js";
import { formatLocatedMessage, parseYamlSource, valueAtPath, type SourcePosition } from "../../yaml-source/yaml-source.js";
import { taskKey } from "./task-key.js";

const QUARANTINE_FILE_VERSION = 1;

/** `suite/id`: a suite (a folder path, `/` inside it allowed) and an id, neither empty, no `#`/`@` (trial and variant marks), no blanks at the ends. */
const LABEL = /^[^/#@\s](?:[^#@]*[^/#@\s])?\/[^/#@\s](?:[^/#@]*[^/#@\s])?$/;

const labelSchema = z.string({ error: "expected a task label suite/id" })
  .regex(LABEL, "expected a task label suite/id (the task file's folder and its id; no glob, no #repeat or @variant)");

const entrySchema = z.preprocess(
  // A bare label is the same entry as `{ task: label }`.
  (value) => (typeof value === "string" ? { task: value } : value),
  z.strictObject({
    task: labelSchema.describe("The task, as suite/id."),
    reason: z.string().trim().min(1, "a reason cannot be empty (leave it out instead)").optional().describe("Why it is quarantined, shown in the reports."),
  }, { error: "expected a task label suite/id, or { task: suite/id, reason: text }" }),
);

export const quarantineFileSchema = z.strictObject({
  version: z.literal(QUARANTINE_FILE_VERSION, { error: "expected version: 1" }).describe("The quarantine file format version; 1."),
  quarantine: z.array(entrySchema, { error: "expected a list of task labels" }).describe("The quarantined tasks; an empty list quarantines none."),
}).superRefine((file, ctx) => {
  const seen = new Map<string, number>();
  file.quarantine.forEach((entry, i) => {
    const first = seen.get(entry.task);
    if (first !== undefined) ctx.addIssue({ code: "custom", path: ["quarantine", i], message: `${entry.task} is already listed as quarantine.${first}` });
    else seen.set(entry.task, i);
  });
});

/** One quarantined task: its `suite/id` and why (null when the file gives no reason). */
export interface QuarantineEntry {
  suite: string;
  id: string;
  reason: string | null;
}

/** A quarantine file as read: its path (as given, absolute) and entries, each with where it is written. */
export interface QuarantineList {
  file: string;
  entries: (QuarantineEntry & { at: SourcePosition })[];
}

/** One thing wrong with a quarantine file, located. */
export interface QuarantineProblem extends SourcePosition {
  file: string;
  /** Dotted path (`quarantine.2.task`); `yaml` for syntax, `file` for a file that cannot be read, "" for bytes that are not UTF-8. */
  field: string;
  message: string;
}

/** A quarantine file that cannot be used; its message lists every problem, one a line. */
export class QuarantineFileError extends RhemaError {
  readonly problems: readonly QuarantineProblem[];
  constructor(problems: readonly QuarantineProblem[], options?: { cause?: unknown }) {
    super("invalid_input", problems.map((p) => formatLocatedMessage(p.file, p, p.field === "" ? p.message : `${p.field}: ${p.message}`)).join("\n"), options);
    this.problems = problems;
  }
}

/** Splits a label at its last `/`: the suite may itself hold folders (`web/api/login`). */
export function parseTaskLabel(label: string): { suite: string; id: string } {
  const cut = label.lastIndexOf("/");
  return { suite: label.slice(0, cut), id: label.slice(cut + 1) };
}

/** Parses and validates a quarantine file's text; throws `QuarantineFileError` naming every problem's place. */
export function parseQuarantineText(text: string | Uint8Array, file: string): QuarantineList {
  const yaml = parseYamlSource(text);
  if (yaml.encodingProblem !== null) throw new QuarantineFileError([{ file, ...yaml.encodingProblem, field: "" }]);
  if (yaml.syntaxProblems.length > 0) {
    throw new QuarantineFileError(yaml.syntaxProblems.map((p) => ({ file, line: p.line, column: p.column, field: "yaml", message: p.message })));
  }
  if (yaml.rootKind === "empty") throw new QuarantineFileError([{ file, line: 1, column: 1, field: "(root)", message: "the quarantine file is empty: it needs version: 1 and quarantine: [suite/id, …]" }]);
  const plain = yaml.toValue({ maxAliasCount: 50 });
  if (!plain.ok) throw new QuarantineFileError([{ file, ...plain.problem, field: "yaml" }]);
  const parsed = quarantineFileSchema.safeParse(plain.value);
  if (parsed.success) {
    return {
      file,
      entries: parsed.data.quarantine.map((entry, i) => ({ ...parseTaskLabel(entry.task), reason: entry.reason ?? null, at: yaml.locateValue(["quarantine", i]) })),
    };
  }
  const { unknownKeys, others } = splitSchemaIssues(parsed.error.issues, quarantineFileSchema, plain.value);
  const problems: QuarantineProblem[] = [
    ...unknownKeys.map((u) => ({
      file, ...yaml.locateKey(u.path, u.key),
      field: u.path.length > 0 ? u.path.join(".") : "(root)",
      message: `unknown key \`${u.key}\`${u.suggestion === null ? "" : `; did you mean \`${u.suggestion}\`?`}`,
    })),
    ...others.map((issue) => ({ file, ...yaml.locateIssue(issue), ...describeIssue(issue, plain.value) })),
  ];
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  throw new QuarantineFileError(problems);
}

/** Reads and validates the quarantine file at `file` (absolute): a regular file only (a FIFO or device is refused unread). */
export async function loadQuarantineFile(file: string): Promise<QuarantineList> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file);
  } catch (err) {
    throwIfMachineLimit(err);
    throw new QuarantineFileError([{ file, line: 1, column: 1, field: "file", message: `cannot read the quarantine file: ${errorMessage(err)}` }], { cause: err });
  }
  return parseQuarantineText(bytes, file);
}

/**
 * A warning per entry naming a task none of `known` is (`file:line:column: quarantine lists
 * suite/id, which the suite does not define: …`): not an error, as a renamed or removed task
 * leaves its entry behind until someone edits the file.
 */
export function unknownQuarantineWarnings(list: QuarantineList, known: readonly { suite: string; id: string }[]): string[] {
  const defined = new Set(known.map(taskKey));
  return list.entries
    .filter((entry) => !defined.has(taskKey(entry)))
    .map((entry) => formatLocatedMessage(list.file, entry.at, `quarantine lists ${taskKey(entry)}, which the suite does not define: the entry is ignored (remove it, or fix the label)`));
}

/** The entries without their places: what reports record. */
export function quarantineEntries(list: QuarantineList): QuarantineEntry[] {
  return list.entries.map(({ suite, id, reason }) => ({ suite, id, reason }));
}

/**
 * A quarantine file's text for `entries` (what `report trend --propose-quarantine` writes): each
 * entry `task:` and, when it has one, `reason:`, JSON-quoted (valid YAML for any text).
 */
export function renderQuarantineFile(entries: readonly QuarantineEntry[], header: readonly string[] = []): string {
  const lines = [...header.map((line) => `# ${line}`), `version: ${QUARANTINE_FILE_VERSION}`];
  if (entries.length === 0) return `${lines.join("\n")}\nquarantine: []\n`;
  lines.push("quarantine:");
  for (const entry of entries) {
    lines.push(`  - task: ${JSON.stringify(taskKey(entry))}`);
    if (entry.reason !== null) lines.push(`    reason: ${JSON.stringify(entry.reason)}`);
  }
  return `${lines.join("\n")}\n`;
}

function describeIssue(issue: z.core.$ZodIssue, value: unknown): { field: string; message: string } {
  const field = issue.path.length > 0 ? issue.path.join(".") : "(root)";
  const parent = valueAtPath(value, issue.path.slice(0, -1));
  // A bare label stands for `{ task: label }`: its problem is the label's, not a missing `task`.
  if (typeof parent === "string") return { field: issue.path.slice(0, -1).join("."), message: issue.message };
  if (issue.path.length > 0 && valueAtPath(value, issue.path) === undefined) {
    return { field: issue.path.slice(0, -1).join(".") || "(root)", message: `missing key \`${String(issue.path.at(-1))}\`` };
  }
  return { field, message: issue.message };
}
