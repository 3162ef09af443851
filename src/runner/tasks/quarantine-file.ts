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
import { errorMessage, throwIfMachineLimit } from "../../core/errors.js";
import { readRegularFile } from "../../store/input-file.js";
import { YamlFileError, checkYamlFile, topLevelKeys } from "../../yaml-source/checked-yaml.js";
import { formatLocatedMessage, valueAtPath, type SourcePosition, type YamlSource } from "../../yaml-source/yaml-source.js";
import { taskKey } from "./task-key.js";
import { TASK_NAME_PATTERN } from "./task-schema.js";

const QUARANTINE_FILE_VERSION = 1;

/** `suite/id`: two task names (letters, digits, `.`, `_`, `-`, as suites and ids are), so no glob, `#repeat` or `@variant`. */
const NAME = TASK_NAME_PATTERN.source.slice(1, -1);
const LABEL = new RegExp(`^${NAME}/${NAME}$`);

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
export class QuarantineFileError extends YamlFileError<QuarantineProblem> {}

/**
 * Whether a parsed YAML document's top level is a quarantine list: a mapping with `quarantine`
 * and no `prompt`. Suite discovery lists such a file apart, never as a task.
 */
export function isQuarantineDocument(yaml: YamlSource): boolean {
  const keys = topLevelKeys(yaml);
  return keys !== null && keys.has("quarantine") && !keys.has("prompt");
}

/** Splits a checked label `suite/id` at its `/`. */
export function parseTaskLabel(label: string): { suite: string; id: string } {
  const cut = label.lastIndexOf("/");
  return { suite: label.slice(0, cut), id: label.slice(cut + 1) };
}

/** Parses and validates a quarantine file's text; throws `QuarantineFileError` naming every problem's place. */
export function parseQuarantineText(text: string | Uint8Array, file: string): QuarantineList {
  const checked = checkYamlFile(text, file, {
    schema: quarantineFileSchema, what: "the quarantine file", needs: "version: 1 and quarantine: [suite/id, …]", describeIssue: describeLabelIssue,
  });
  if (!checked.ok) throw new QuarantineFileError(checked.problems);
  return {
    file,
    entries: checked.value.quarantine.map((entry, i) => ({ ...parseTaskLabel(entry.task), reason: entry.reason ?? null, at: checked.yaml.locateValue(["quarantine", i]) })),
  };
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

/** A bare label stands for `{ task: label }`: its problem is the label's, not a missing `task`. */
function describeLabelIssue(issue: z.core.$ZodIssue, value: unknown): { field: string; message: string } | null {
  const parent = valueAtPath(value, issue.path.slice(0, -1));
  return typeof parent === "string" ? { field: issue.path.slice(0, -1).join("."), message: issue.message } : null;
}
