/**
 * Task files: YAML in, a resolved `TaskDefinition` out, or a `TaskFileError` whose every
 * problem names `file:line:column: field: message`. Parsing is yaml's `parseDocument` (kept as a
 * document so any value can be located) checked by the strict zod schema of task-schema.ts;
 * `loadTaskFile` also checks that the paths a task names (workspace, images, policy) exist.
 * Paths in a task are relative to the task file's folder; every path this module returns is
 * absolute. No ambient state: callers pass absolute file paths.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, isAbsolute, resolve } from "node:path";
import { LineCounter, isMap, isPair, isScalar, parseDocument, visit, type Document, type Node } from "yaml";
import { z } from "zod";
import { RhemaError, errorMessage } from "../../core/errors.js";
import type { TranscriptConfig } from "../../core/transcript-types.js";
import type { ScriptStep } from "../../providers/script.js";
import { parseDurationMs } from "./duration.js";
import { TASK_NAME_PATTERN, taskFileSchema, type TaskFileContent } from "./task-schema.js";

export interface SourcePosition {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** One thing wrong with a task file, located at the offending field. */
export interface TaskProblem extends SourcePosition {
  file: string;
  /** Dotted path of the field (`limits.timeout`, `model.script.2.call`); `yaml` for syntax. */
  field: string;
  message: string;
}

export function formatTaskProblem(p: TaskProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.field}: ${p.message}`;
}

/**
 * Invalid task input. `file`, `line`, `column`, `field` are the first problem's; `problems`
 * holds them all (possibly across files, when a suite is loaded), one per message line.
 */
export class TaskFileError extends RhemaError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly field: string;
  readonly problems: readonly TaskProblem[];
  constructor(problems: readonly TaskProblem[]) {
    const first = problems[0];
    if (!first) throw new Error("TaskFileError needs at least one problem");
    super("task_invalid", problems.map(formatTaskProblem).join("\n"));
    this.file = first.file;
    this.line = first.line;
    this.column = first.column;
    this.field = first.field;
    this.problems = problems;
  }
}

export type TaskModel =
  | { provider: "scripted"; script: ScriptStep[] }
  | { provider: "anthropic" | "openai"; name: string; baseUrl?: string };

/** A policy file, or an inline policy kept raw for the policy module, with where it stands. */
export type TaskPolicy =
  | { kind: "file"; path: string }
  | { kind: "inline"; data: unknown; file: string; line: number; column: number };

export interface TaskCheck {
  name: string;
  run: string;
  timeoutMs?: number;
}

/** A task with defaults applied and paths made absolute; absent optional keys stay absent. */
export interface TaskDefinition {
  id: string;
  suite: string;
  /** Absolute path of the task file. */
  file: string;
  /** sha256 (hex) of the file's bytes: a changed task is told from a resumed one by this. */
  contentHash: string;
  /** Where the id is written (1:1 when it defaults to the file name). */
  idPosition: SourcePosition;
  prompt: string;
  images: string[];
  workspace: { from: string | null; setup: string[] };
  /** null: the CLI's --policy decides. */
  policy: TaskPolicy | null;
  /** null: the CLI's --provider/--model decide. */
  model: TaskModel | null;
  limits: { maxSteps?: number; timeoutMs?: number };
  transcript?: TranscriptConfig;
  checks: TaskCheck[];
  tags: string[];
}

const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp"]);

/**
 * Parses and resolves a task file's bytes, without touching the file system.
 * Throws `TaskFileError` listing every problem found.
 */
export function parseTaskSource(source: string | Uint8Array, file: string): TaskDefinition {
  const parsed = parseTaskDocument(source, file);
  if (parsed.problems.length > 0) throw new TaskFileError(parsed.problems);
  return parsed.task!;
}

/**
 * Reads, parses and resolves the task file at `file` (absolute), then checks that
 * `workspace.from` is a folder, each image a supported image file, a policy path a file.
 */
export async function loadTaskFile(file: string): Promise<TaskDefinition> {
  requireAbsolute(file);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new TaskFileError([{ file, line: 1, column: 1, field: "file", message: `cannot read: ${errorMessage(err)}` }]);
  }
  const parsed = parseTaskDocument(bytes, file);
  if (parsed.problems.length > 0) throw new TaskFileError(parsed.problems);
  const task = parsed.task!;
  const problems = await checkReferencedPaths(task, parsed.locate);
  if (problems.length > 0) throw new TaskFileError(problems);
  return task;
}

/** Finds where the value at a path is written (or, for an unknown key, the key itself). */
interface Locator {
  value(path: readonly PropertyKey[]): SourcePosition;
  key(path: readonly PropertyKey[], key: string): SourcePosition;
}
type Locate = Locator["value"];

interface ParsedTaskDocument {
  task: TaskDefinition | null;
  problems: TaskProblem[];
  locate: Locate;
}

function parseTaskDocument(source: string | Uint8Array, file: string): ParsedTaskDocument {
  requireAbsolute(file);
  const bytes = typeof source === "string" ? Buffer.from(source, "utf8") : source;
  const text = Buffer.from(bytes).toString("utf8").replace(/^\uFEFF/, "");
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const locator = documentLocator(doc, lineCounter);
  const locate = locator.value;
  const at = (path: readonly PropertyKey[], field: string, message: string): TaskProblem =>
    ({ file, ...locate(path), field, message });

  const syntax = syntaxProblems(doc, lineCounter, file);
  if (syntax.length > 0) return { task: null, problems: syntax, locate };
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
    return { task: null, problems: [at([], "prompt", "the file is empty: a task needs at least a prompt")], locate };
  }
  if (!isMap(doc.contents)) {
    return { task: null, problems: [at([], "(task)", "a task file is a mapping of keys (id, prompt, …), not a list or a scalar")], locate };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { task: null, problems: [at(aliasPath(doc) ?? [], "yaml", errorMessage(err))], locate };
  }
  const result = taskFileSchema.safeParse(data);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => issueProblem(issue, data, file, locator));
    return { task: null, problems: problems.sort(byPosition), locate };
  }
  const names = resolveNames(result.data, file, locate);
  if ("problems" in names) return { task: null, problems: names.problems, locate };
  const task = resolveTask(result.data, { ...names, file, contentHash: sha256(bytes) }, locate);
  return { task, problems: [], locate };
}

interface ResolvedNames {
  id: string;
  suite: string;
  idPosition: SourcePosition;
}

function resolveNames(content: TaskFileContent, file: string, locate: Locate): ResolvedNames | { problems: TaskProblem[] } {
  const problems: TaskProblem[] = [];
  const id = content.id ?? basename(file, extname(file));
  const suite = content.suite ?? basename(dirname(file));
  const start = { line: 1, column: 1 };
  if (content.id === undefined && !TASK_NAME_PATTERN.test(id)) {
    problems.push({ file, ...start, field: "id", message: `the file name "${id}" is not a valid task id: set id: explicitly` });
  }
  if (content.suite === undefined && !TASK_NAME_PATTERN.test(suite)) {
    problems.push({ file, ...start, field: "suite", message: `the folder name "${suite}" is not a valid suite name: set suite: explicitly` });
  }
  if (problems.length > 0) return { problems };
  return { id, suite, idPosition: content.id === undefined ? start : locate(["id"]) };
}

function resolveTask(
  content: TaskFileContent,
  base: { id: string; suite: string; file: string; contentHash: string; idPosition: SourcePosition },
  locate: Locate,
): TaskDefinition {
  const folder = dirname(base.file);
  const task: TaskDefinition = {
    ...base,
    prompt: content.prompt,
    images: (content.images ?? []).map((image) => resolve(folder, image)),
    workspace: {
      from: content.workspace?.from === undefined ? null : resolve(folder, content.workspace.from),
      setup: content.workspace?.setup ?? [],
    },
    policy: resolvePolicy(content.policy, base.file, locate),
    model: (content.model as TaskModel | undefined) ?? null,
    limits: {},
    checks: (content.checks ?? []).map((check) => {
      const resolved: TaskCheck = { name: check.name, run: check.run };
      if (check.timeout !== undefined) resolved.timeoutMs = parseDurationMs(check.timeout)!;
      return resolved;
    }),
    tags: content.tags ?? [],
  };
  if (content.limits?.maxSteps !== undefined) task.limits.maxSteps = content.limits.maxSteps;
  if (content.limits?.timeout !== undefined) task.limits.timeoutMs = parseDurationMs(content.limits.timeout)!;
  if (content.transcript !== undefined) task.transcript = { ...content.transcript };
  return task;
}

function resolvePolicy(policy: TaskFileContent["policy"], file: string, locate: Locate): TaskPolicy | null {
  if (policy === undefined) return null;
  if (typeof policy === "string") return { kind: "file", path: resolve(dirname(file), policy) };
  return { kind: "inline", data: policy, file, ...locate(["policy"]) };
}

async function checkReferencedPaths(task: TaskDefinition, locate: Locate): Promise<TaskProblem[]> {
  const problems: TaskProblem[] = [];
  const problem = (path: PropertyKey[], message: string): void => {
    problems.push({ file: task.file, ...locate(path), field: path.join("."), message });
  };
  if (task.workspace.from !== null) {
    const kind = await pathKind(task.workspace.from);
    if (kind !== "dir") problem(["workspace", "from"], kind === null ? `folder not found: ${task.workspace.from}` : `not a folder: ${task.workspace.from}`);
  }
  for (const [index, image] of task.images.entries()) {
    const kind = await pathKind(image);
    if (kind !== "file") problem(["images", index], kind === null ? `image not found: ${image}` : `not a file: ${image}`);
    else if (!IMAGE_EXTENSIONS.has(extname(image).toLowerCase())) problem(["images", index], `not a png, jpeg, gif or webp image: ${image}`);
  }
  if (task.policy?.kind === "file") {
    const kind = await pathKind(task.policy.path);
    if (kind !== "file") problem(["policy"], kind === null ? `policy file not found: ${task.policy.path}` : `not a file: ${task.policy.path}`);
  }
  return problems;
}

async function pathKind(path: string): Promise<"file" | "dir" | "other" | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? "file" : info.isDirectory() ? "dir" : "other";
  } catch {
    return null;
  }
}

// ── locating problems ─────────────────────────────────────────────────────────────────────

function syntaxProblems(doc: Document, lineCounter: LineCounter, file: string): TaskProblem[] {
  return doc.errors.map((error) => {
    const offset = error.code === "MISSING_CHAR" ? unclosedQuoteStart(doc, error.pos[0]) ?? error.pos[0] : error.pos[0];
    const { line, col } = lineCounter.linePos(offset);
    const message = offset !== error.pos[0]
      ? "unclosed quote: the string opened here runs to the end of the file"
      : error.message;
    return { file, line, column: col, field: "yaml", message };
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

/** The path of the first alias that names no anchor, for the error toJS throws on it. */
function aliasPath(doc: Document): PropertyKey[] | null {
  let found: PropertyKey[] | null = null;
  visit(doc, {
    Alias(_key, node, path) {
      if (found === null && node.resolve(doc) === undefined) {
        found = path.filter(isPair).map((pair) => (isScalar(pair.key) ? String(pair.key.value) : "?"));
      }
    },
  });
  return found;
}

function documentLocator(doc: Document, lineCounter: LineCounter): Locator {
  const position = (offset: number): SourcePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  /** The node at `path`, or its nearest ancestor that exists (a missing key's mapping). */
  const value = (path: readonly PropertyKey[]): SourcePosition => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = doc.getIn(path.slice(0, depth), true) as Node | undefined;
      if (node?.range) return position(node.range[0]);
    }
    return { line: 1, column: 1 };
  };
  const key = (path: readonly PropertyKey[], name: string): SourcePosition => {
    const map = path.length === 0 ? doc.contents : doc.getIn(path, true);
    const pair = isMap(map) ? map.items.find((item) => isScalar(item.key) && item.key.value === name) : undefined;
    const keyNode = pair?.key as Node | undefined;
    return keyNode?.range ? position(keyNode.range[0]) : value(path);
  };
  return { value, key };
}

function issueProblem(issue: z.core.$ZodIssue, data: unknown, file: string, locator: Locator): TaskProblem {
  const path = issue.path;
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    const allowed = allowedKeysAt(taskFileSchema, data, path);
    const others = issue.keys.length > 1 ? ` (also: ${issue.keys.slice(1).join(", ")})` : "";
    return {
      file,
      ...locator.key(path, key),
      field: fieldName([...path, key]),
      message: `unknown key${others}; expected one of: ${allowed.join(", ")}`,
    };
  }
  const missing = valueAt(data, path) === undefined;
  const message = issue.code === "invalid_type" && missing ? `required: ${issue.message}` : issue.message;
  return { file, ...locator.value(path), field: fieldName(path), message };
}

function byPosition(a: SourcePosition, b: SourcePosition): number {
  return a.line - b.line || a.column - b.column;
}

function fieldName(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(task)" : path.map(String).join(".");
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let value = data;
  for (const segment of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/** The keys the schema allows for the object at `path`, for an unknown-key message. */
function allowedKeysAt(schema: z.ZodType, data: unknown, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = schema;
  const segments = [...path, null];
  for (const [index, segment] of segments.entries()) {
    current = unwrapOptional(current);
    if (current instanceof z.ZodUnion) current = pickUnionOption(current, valueAt(data, path.slice(0, index)));
    if (segment === null) break;
    if (current instanceof z.ZodObject) current = current.shape[String(segment)] as z.ZodType | undefined;
    else if (current instanceof z.ZodArray) current = current.element as z.ZodType;
    else return [];
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function unwrapOptional(schema: z.ZodType | undefined): z.ZodType | undefined {
  return schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
}

/** The union member the data was meant for: the object option whose literal fields match. */
function pickUnionOption(union: z.ZodUnion, value: unknown): z.ZodType | undefined {
  const objects = (union.options as z.ZodType[]).filter((o): o is z.ZodObject => o instanceof z.ZodObject);
  return objects.find((option) => literalFieldsMatch(option, value)) ?? objects[0];
}

function literalFieldsMatch(option: z.ZodObject, value: unknown): boolean {
  const literals = Object.entries(option.shape as Record<string, z.ZodType>)
    .filter(([, field]) => field instanceof z.ZodLiteral || field instanceof z.ZodEnum);
  return literals.length > 0 && literals.every(([name, field]) => field.safeParse(valueAt(value, [name])).success);
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function requireAbsolute(file: string): void {
  if (!isAbsolute(file)) throw new RhemaError("usage", `task file path must be absolute, got "${file}"`);
}
