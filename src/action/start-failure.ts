/**
 * What the step shows when the run cannot start or stops on an error (a bad input, task, policy
 * or pricing file; a sandbox that cannot be made; output that cannot be written), decided in pure
 * functions: one `::error` annotation per located problem on its file (path relative to the
 * repository, line and column), the job summary's section saying what was wrong, and the step's
 * failure message. Every text names the action's inputs, not the CLI's flags (input-names.ts).
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { RhemaError } from "../core/errors.js";
import { PolicyFileError } from "../policy/file/policy-file.js";
import { PricingFileError } from "../runner/pricing/pricing-file.js";
import { TaskFileError } from "../runner/tasks/task-file.js";
import type { Annotation } from "./action-outcome.js";
import { nameInputs } from "./input-names.js";

export type ProblemFileKind = "task file" | "policy file" | "pricing file";

/** One thing wrong with a file the run reads, where it is written (line and column when known). */
export interface LocatedProblem {
  kind: ProblemFileKind;
  /** Absolute, as the error names it (a preset's name for an unknown preset). */
  file: string;
  line?: number;
  column?: number;
  /** What is wrong, without the `file:line:column: ` the location says. */
  message: string;
}

/** The located problems an error carries (task, policy and pricing files); [] for any other error. */
export function locatedProblems(err: unknown): LocatedProblem[] {
  if (err instanceof TaskFileError) {
    return err.problems.map((p) => ({ kind: "task file", file: p.file, line: p.line, column: p.column, message: withField(p.field, p.message) }));
  }
  if (err instanceof PolicyFileError) {
    return err.issues.map((i) => ({ kind: "policy file", file: i.file, ...(i.line !== undefined ? { line: i.line, column: i.column ?? 1 } : {}), message: i.message }));
  }
  if (err instanceof PricingFileError) {
    // A pricing file that cannot be read is placed at 1:1 under the field `file`: it has no place.
    return err.problems.map((p) => ({ kind: "pricing file", file: p.file, ...(p.field === "file" ? {} : { line: p.line, column: p.column }), message: withField(p.field === "file" ? "" : p.field, p.message) }));
  }
  return [];
}

function withField(field: string, message: string): string {
  return field === "" ? message : `${field}: ${message}`;
}

/** Where the action's file inputs point, absolute (to say which input named a bad file). */
export interface FileInputs {
  policy?: string;
  pricing?: string;
}

/** What the step shows for an error that stopped the run. */
export interface StartFailure {
  annotations: Annotation[];
  /** Markdown for the job summary. */
  summary: string;
  /** The step's failure message (after `rhema: `). */
  failure: string;
}

/**
 * The annotations, job summary and failure message for `err`, which stopped the run before or
 * while it ran. `workspace` is the repository's checkout; `exists` says whether a path is a file
 * there (a missing file gets no `file=`: GitHub cannot show it).
 */
export function describeStartFailure(err: unknown, workspace: string, inputs: FileInputs, exists: (path: string) => boolean): StartFailure {
  const problems = locatedProblems(err);
  const message = nameInputs(err instanceof Error ? err.message : String(err));
  const before = isInputError(err);
  const heading = before ? "## rhema: the run did not start\n\nNothing ran: fix what is listed here and run the job again.\n" : "## rhema: the run stopped on an error\n\nWhat finished is kept in the run directory: fix what is listed here and run the job again to continue.\n";
  if (problems.length === 0) {
    return { annotations: [], summary: `${heading}\n${quoteBlock(message)}\n`, failure: message };
  }
  const annotations: Annotation[] = [];
  const items: string[] = [];
  const lines: string[] = [];
  for (const p of problems) {
    const path = repositoryPath(p.file, workspace);
    const input = inputNaming(p.file, inputs);
    const shown = path ?? p.file;
    const where = p.line === undefined ? shown : `${shown}:${p.line}:${p.column ?? 1}`;
    const by = input ? `, the \`${input}\` input` : "";
    const text = nameInputs(p.message);
    annotations.push({
      level: "error",
      title: `invalid ${p.kind}${input ? ` (the ${input} input)` : ""}`,
      message: path !== undefined && exists(p.file) ? text : `${where}: ${text}`,
      ...(path !== undefined && exists(p.file) ? { file: path, ...(p.line !== undefined ? { line: p.line, column: p.column ?? 1 } : {}) } : {}),
    });
    items.push(`- \`${where}\` (${p.kind}${by}): ${inlineText(text)}`);
    lines.push(`${where}${input ? ` (the \`${input}\` input)` : ""}: ${text}`);
  }
  const files = new Set(problems.map((p) => p.file)).size;
  const count = `${problems.length} problem${problems.length === 1 ? "" : "s"} in ${files} file${files === 1 ? "" : "s"}`;
  return {
    annotations,
    summary: `${heading}\n${items.join("\n")}\n`,
    failure: `the run did not start: ${count} (each annotated on its file; the job summary lists them):\n${lines.join("\n")}`,
  };
}

/** Errors of the input (exit 2 in the CLI): nothing ran. */
function isInputError(err: unknown): boolean {
  if (!(err instanceof RhemaError)) return false;
  return ["usage", "invalid_input", "invalid_config", "task_invalid", "policy_invalid", "provider_unavailable", "workspace_missing", "prompt_render_failed", "sandbox_unavailable"].includes(err.code);
}

/** The input that named `file` (the `policy` or `pricing` input), or null. */
function inputNaming(file: string, inputs: FileInputs): "policy" | "pricing" | null {
  if (inputs.policy !== undefined && resolve(inputs.policy) === resolve(file)) return "policy";
  if (inputs.pricing !== undefined && resolve(inputs.pricing) === resolve(file)) return "pricing";
  return null;
}

/** `file` relative to the repository with `/`, or undefined when it is outside it (or not a path). */
export function repositoryPath(file: string, workspace: string): string | undefined {
  if (!isAbsolute(file)) return undefined;
  const rel = relative(workspace, file);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

function quoteBlock(text: string): string {
  return "```\n" + text.replace(/```/g, "ʼʼʼ") + "\n```";
}

function inlineText(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}
