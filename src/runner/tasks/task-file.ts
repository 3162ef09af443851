/**
 * Task files: YAML in, a resolved `TaskDefinition` out, or a `TaskFileError` whose every
 * problem names `file:line:column: field: message`. Parsing and locating are yaml-source's
 * (the document is kept so any value can be located); the content is checked by the strict zod
 * schema of task-schema.ts; `loadTaskFile` also checks that the paths a task names (workspace,
 * images, policy) exist. Paths in a task are relative to the task file's folder; every path this
 * module returns is absolute. No ambient state: callers pass absolute file paths.
 */
import { open, stat } from "node:fs/promises";
import { basename, dirname, extname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { RhemaError, errorMessage, throwIfMachineLimit } from "../../core/errors.js";
import type { TranscriptConfig } from "../../core/transcript-types.js";
import type { ScriptAlternative, ScriptPick, ScriptStep } from "../../providers/script.js";
import { chooseScript } from "../../providers/script-choice.js";
import type { NamedProviderName, ReplayProviderName, ScriptedProviderName } from "../../providers/provider-registry.js";
import {
  formatLocatedMessage,
  parseYamlSource,
  valueAtPath,
  type SourcePosition,
  type YamlSource,
} from "../../yaml-source/yaml-source.js";
import { parseDurationMs, parseLimitMs } from "./duration.js";
import { taskMcpServers, type TaskMcpServer } from "./task-mcp.js";
import { readRegularFile } from "../../store/input-file.js";
import { scanFixture, type FixtureProblem } from "./fixture-check.js";
import { splitSchemaIssues, type UnknownKey } from "../../yaml-source/schema-keys.js";
import { contentHash, fileBytesHash } from "./content-hash.js";
import { changesSettings, type ChangesSettings } from "./changes-settings.js";
import { gitRepositoryProblem, gitSource, type GitSource } from "./git-source.js";
import { outputSchemaProblem, readOutputSchemaFile } from "./output-schema.js";
import { TASK_NAME_PATTERN, taskFileSchema, type MatrixAxis, type TaskFileContent } from "./task-schema.js";

export type { SourcePosition };

/** One thing wrong with a task file, located at the offending field. */
export interface TaskProblem extends SourcePosition {
  file: string;
  /** Dotted path of the field (`limits.timeout`, `model.script.2.call`); `yaml` for syntax; "" for bytes that are not UTF-8 text. */
  field: string;
  message: string;
}

/** `file:line:column: field: message`; a problem of the whole file (its encoding) has no field. */
export function formatTaskProblem(p: TaskProblem): string {
  return formatLocatedMessage(p.file, p, p.field === "" ? p.message : `${p.field}: ${p.message}`);
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
  | ScriptedTaskModel
  | { provider: NamedProviderName; name: string; baseUrl?: string }
  | CassetteTaskModel;

/** A recorded model (`provider: cassette`): the task replays its cassettes strictly, as the recorded provider and model. */
export interface CassetteTaskModel {
  provider: ReplayProviderName;
  /** Absolute: a folder of cassettes (`DIR/<suite>/<id>/<variant|default>/<n>.jsonl`) or one cassette file. */
  path: string;
}

/**
 * A scripted model. With `scripts`, each trial plays the alternative `chooseScript(model, task.seed
 * ?? "", trial)` picks (providers/script-choice.ts), and `script` holds the one of the task's first
 * trial (repeat 1, no variant): what a runner that plays each task once plays.
 */
export interface ScriptedTaskModel {
  provider: ScriptedProviderName;
  script: ScriptStep[];
  scripts?: ScriptAlternative[];
  pick?: ScriptPick;
  priceAs?: string;
}

/** A policy file, or an inline policy kept raw for the policy module, with where it stands. */
export type TaskPolicy =
  | { kind: "file"; path: string }
  | {
    kind: "inline"; data: unknown; file: string; line: number; column: number;
    /**
     * Where each value inside the inline policy is written in the task file, by its dotted key
     * path (`rules.0.allow.tools.1`), so policy problems point at the name, not the block.
     */
    positions: Readonly<Record<string, { line: number; column: number }>>;
  };

/**
 * `output`: the answer must be JSON valid against `schema`. `schemaFile` is where a schema given
 * as a path lives (absolute); its `schema` is null until `loadTaskFile` has read it.
 */
export interface TaskOutput {
  schema: Record<string, unknown> | null;
  schemaFile: string | null;
  /** How many times an invalid answer goes back to the model before the trial errors (default 2). */
  repairs: number;
}

/** `output.repairs` when the task says nothing. */
export const DEFAULT_OUTPUT_REPAIRS = 2;

export interface TaskCheck {
  name: string;
  run: string;
  timeoutMs?: number;
  /** The line of the task file its entry is written on (1-based); reports name it (junit.xml `--junit-cases check`). */
  line?: number;
}

/** A task with defaults applied and paths made absolute; absent optional keys stay absent. */
export interface TaskDefinition {
  id: string;
  suite: string;
  /** Absolute path of the task file. */
  file: string;
  /**
   * The task's content hash (content-hash.ts, scheme content-v2: `limits` and `model.priceAs`
   * left out): a changed task is told from a resumed one by this.
   */
  contentHash: string;
  /** sha256 of the file's bytes (scheme file-bytes), for run directories made before content-v2. */
  fileBytesHash?: string;
  /** Where the id is written (1:1 when it defaults to the file name). */
  idPosition: SourcePosition;
  prompt: string;
  images: string[];
  /** `changes`: what changes.patch covers, defaults applied; absent when the file says nothing (then `changesSettings(undefined)`). */
  /**
   * `shared`: the setup runs once for every task naming the same prepared base (shared-setup.ts); absent: per trial.
   * `git`: the repository and ref the workspace is cloned from instead (`from` is then null).
   */
  workspace: { from: string | null; git?: GitSource; setup: string[]; shared?: boolean; changes?: ChangesSettings };
  /** null: the CLI's --policy decides. */
  policy: TaskPolicy | null;
  /** null: the CLI's --provider/--model decide. */
  model: TaskModel | null;
  /** `maxCostUsd`, `maxTokens`: the task's budgets (every earlier run of the task and the compaction worker counted). */
  /** `timeoutMs` and `streamIdleMs` are `Infinity` for `none` (no limit, whatever the run's default). */
  limits: { maxSteps?: number; timeoutMs?: number; streamIdleMs?: number; maxCostUsd?: number; maxTokens?: number };
  /** With a matrix: the budget of the cell this task runs as (matrix-file.ts `CellBudget`), spent by all the cell's trials together. */
  cellBudget?: { maxCostUsd?: number; maxTokens?: number };
  transcript?: TranscriptConfig;
  checks: TaskCheck[];
  /** `output`: the structured answer the turn must end with; absent: a plain text answer. */
  output?: TaskOutput;
  tags: string[];
  /** The sandbox mode the task file asks for; absent when it says nothing. */
  sandbox?: "auto" | "bwrap" | "off";
  /** `repeats:`: how many trials the task file asks for; absent: the run's `--repeats`, else 1. */
  repeats?: number;
  /** `pass.rate`: the share of counted trials that must pass; absent: the run's `--min-pass-rate`, else every trial. */
  passRate?: number;
  /** `cassette.normalise`: the task's own patterns a cassette makes stable in its requests (run --cassette). */
  cassetteNormalise?: readonly string[];
  /** `seed:` as text (a number's decimal form): seeds the scripted alternatives' draw per trial. */
  seed?: string;
  /** `pin:`: the matrix axes this task keeps its own setting for. */
  pin?: MatrixAxis[];
  /**
   * Set on a task as a matrix cell runs it (task-variants.ts): the cell's variant id
   * (`model=sonnet,transcript=64k`); absent, the task as written. Its key is then `suite/id@variant`.
   */
  variant?: string;
  /** Variables a matrix cell sets for the task's setup and checks (`env` axis); absent: none. */
  env?: Readonly<Record<string, string>>;
  /** `mcp:`: the MCP servers of each trial, by name, with where each `${NAME}` reference is written; absent: none. */
  mcp?: Readonly<Record<string, TaskMcpServer>>;
}


/** The image formats a model takes, by the extension that names them. */
const IMAGE_FORMATS: Readonly<Record<string, "png" | "jpeg" | "gif" | "webp">> = {
  ".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif", ".webp": "webp",
};

/**
 * Size caps on what a task sends the model, checked when the task file loads (a located error,
 * before anything runs). Defaults: a prompt of 256 KiB, an image of 5 MiB (the providers' own
 * per-image limit). Overridable: `RHEMA_MAX_PROMPT_BYTES` / `RHEMA_MAX_IMAGE_BYTES` for the CLI.
 */
export interface InputCaps {
  maxPromptBytes: number;
  maxImageBytes: number;
}

export const DEFAULT_INPUT_CAPS: InputCaps = { maxPromptBytes: 256 * 1024, maxImageBytes: 5 * 1024 * 1024 };

/** The image format the bytes are, by their magic number, or null for none of the four. */
export function sniffImageFormat(head: Uint8Array): "png" | "jpeg" | "gif" | "webp" | null {
  const b = Buffer.from(head);
  if (b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg";
  if (b.subarray(0, 6).toString("latin1") === "GIF87a" || b.subarray(0, 6).toString("latin1") === "GIF89a") return "gif";
  if (b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP") return "webp";
  return null;
}

/**
 * Parses and resolves a task file's bytes, without touching the file system.
 * Throws `TaskFileError` listing every problem found.
 */
export function parseTaskSource(source: string | Uint8Array, file: string): TaskDefinition {
  const bytes = typeof source === "string" ? Buffer.from(source, "utf8") : Buffer.from(source);
  const parsed = parseTaskDocument({ file, bytes, yaml: parseYamlSource(bytes) });
  if (parsed.problems.length > 0) throw new TaskFileError(parsed.problems);
  return parsed.task!;
}

/**
 * Reads, parses and resolves the task file at `file` (absolute), then checks that
 * `workspace.from` is a folder, each image a supported image file, a policy path a file.
 */
export async function loadTaskFile(file: string, caps: InputCaps = DEFAULT_INPUT_CAPS): Promise<TaskDefinition> {
  return loadTaskSource(await readYamlFile(file), caps);
}

/** A YAML file read and parsed once: the suite loader tells its role from it, then loads it as a task. */
export interface YamlFile {
  file: string;
  bytes: Buffer;
  yaml: YamlSource;
}

/** Reads and parses the YAML file at `file` (absolute); an unreadable file is a `TaskFileError`. */
export async function readYamlFile(file: string): Promise<YamlFile> {
  requireAbsolute(file);
  const bytes = await readSuiteFile(file);
  return { file, bytes, yaml: parseYamlSource(bytes) };
}

/**
 * The bytes of a file of the suite (a task file, a `.rhemaignore`): only a regular file; one that
 * cannot be read is a `TaskFileError` naming it, but out of file handles or memory is the
 * machine's (exit 3, the same command continues), not a bad file.
 */
export async function readSuiteFile(file: string): Promise<Buffer> {
  try {
    return await readRegularFile(file);
  } catch (err) {
    throwIfMachineLimit(err);
    throw new TaskFileError([{ file, line: 1, column: 1, field: "file", message: `cannot read: ${errorMessage(err)}` }]);
  }
}

/** Each fixture's scan (fixture-copy.ts) by its path, shared by the tasks of one load: a fixture is walked once. */
export type FixtureScans = Map<string, Promise<FixtureProblem | null>>;

/** `loadTaskFile` for a file already read. */
export async function loadTaskSource(source: YamlFile, caps: InputCaps = DEFAULT_INPUT_CAPS, fixtures: FixtureScans = new Map()): Promise<TaskDefinition> {
  const parsed = parseTaskDocument(source);
  if (parsed.problems.length > 0) throw new TaskFileError(parsed.problems);
  const task = parsed.task!;
  const problems = await checkReferencedPaths(task, parsed.locate, caps, fixtures);
  if (problems.length > 0) throw new TaskFileError(problems);
  // A schema read from its file counts by its content: an edited schema is a changed task.
  if (task.output?.schemaFile != null && parsed.content) task.contentHash = contentHash(parsed.content, { outputSchema: task.output.schema });
  return task;
}

type Locate = YamlSource["locateValue"];

interface ParsedTaskDocument {
  task: TaskDefinition | null;
  /** The file's content as the schema checked it (absent when it did not). */
  content?: TaskFileContent;
  problems: TaskProblem[];
  locate: Locate;
}

function parseTaskDocument({ file, bytes, yaml }: YamlFile): ParsedTaskDocument {
  requireAbsolute(file);
  const locate = yaml.locateValue;
  const fail = (problems: TaskProblem[]): ParsedTaskDocument => ({ task: null, problems, locate });
  const at = (position: SourcePosition, field: string, message: string): TaskProblem => ({ file, ...position, field, message });

  if (yaml.encodingProblem !== null) return fail([at(yaml.encodingProblem, "", yaml.encodingProblem.message)]);
  if (yaml.syntaxProblems.length > 0) return fail(yaml.syntaxProblems.map((p) => at(p, "yaml", p.message)));
  if (yaml.rootKind === "empty") return fail([at(locate([]), "prompt", "the file is empty: a task needs at least a prompt")]);
  if (yaml.rootKind !== "mapping") {
    return fail([at(locate([]), "(task)", "a task file is a mapping of keys (id, prompt, …), not a list or a scalar")]);
  }
  const plain = yaml.toValue({ maxAliasCount: 100 });
  if (!plain.ok) return fail([at(plain.problem, "yaml", plain.problem.message)]);
  const data = plain.value;
  const result = taskFileSchema.safeParse(data);
  if (!result.success) return fail(schemaProblems(result.error.issues, data, yaml, file));
  const names = resolveNames(result.data, file, locate);
  if ("problems" in names) return fail(names.problems);
  const task = resolveTask(result.data, { ...names, file, contentHash: contentHash(result.data), fileBytesHash: fileBytesHash(bytes) }, locate);
  return { task, content: result.data, problems: [], locate };
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
  base: { id: string; suite: string; file: string; contentHash: string; fileBytesHash: string; idPosition: SourcePosition },
  locate: Locate,
): TaskDefinition {
  const folder = dirname(base.file);
  const task: TaskDefinition = {
    ...base,
    prompt: content.prompt,
    images: (content.images ?? []).map((image) => resolve(folder, image)),
    workspace: {
      from: content.workspace?.from === undefined ? null : resolve(folder, content.workspace.from),
      ...(content.workspace?.git !== undefined ? { git: gitSource(content.workspace.git, content.workspace.ref!, folder) } : {}),
      setup: content.workspace?.setup ?? [],
      ...(content.workspace?.shared === true ? { shared: true } : {}),
      ...(content.workspace?.changes !== undefined ? { changes: changesSettings(content.workspace.changes) } : {}),
    },
    policy: resolvePolicy(content.policy, base.file, locate),
    model: resolveModel(content.model, content.seed, base, folder),
    limits: {},
    checks: (content.checks ?? []).map((check, index) => {
      const resolved: TaskCheck = { name: check.name, run: check.run, line: locate(["checks", index]).line };
      if (check.timeout !== undefined) resolved.timeoutMs = parseDurationMs(check.timeout)!;
      return resolved;
    }),
    tags: content.tags ?? [],
  };
  if (content.limits?.maxSteps !== undefined) task.limits.maxSteps = content.limits.maxSteps;
  if (content.limits?.timeout !== undefined) task.limits.timeoutMs = parseLimitMs(content.limits.timeout)!;
  if (content.limits?.streamIdle !== undefined) task.limits.streamIdleMs = parseLimitMs(content.limits.streamIdle)!;
  if (content.limits?.maxCostUsd !== undefined) task.limits.maxCostUsd = content.limits.maxCostUsd;
  if (content.limits?.maxTokens !== undefined) task.limits.maxTokens = content.limits.maxTokens;
  if (content.transcript !== undefined) task.transcript = { ...content.transcript };
  if (content.sandbox !== undefined) task.sandbox = content.sandbox;
  if (content.repeats !== undefined) task.repeats = content.repeats;
  if (content.pass !== undefined) task.passRate = content.pass.rate;
  if (content.seed !== undefined) task.seed = String(content.seed);
  if (content.pin !== undefined) task.pin = [...new Set(content.pin)];
  if (content.cassette !== undefined) task.cassetteNormalise = [...content.cassette.normalise];
  if (content.mcp !== undefined) task.mcp = taskMcpServers(content.mcp, ["mcp"], (path) => ({ file: base.file, ...locate(path) }));
  if (content.output !== undefined) {
    const { schema, repairs } = content.output;
    task.output = typeof schema === "string"
      ? { schema: null, schemaFile: resolve(folder, schema), repairs: repairs ?? DEFAULT_OUTPUT_REPAIRS }
      : { schema, schemaFile: null, repairs: repairs ?? DEFAULT_OUTPUT_REPAIRS };
  }
  return task;
}

function resolveModel(model: TaskFileContent["model"], seed: TaskFileContent["seed"], trial: { suite: string; id: string }, folder: string): TaskModel | null {
  if (model === undefined) return null;
  if ("path" in model) return { provider: model.provider, path: resolve(folder, model.path) };
  if (model.provider !== "scripted") return model;
  const { script: _script, ...rest } = model;
  const first = chooseScript(model, seed === undefined ? "" : String(seed), { suite: trial.suite, id: trial.id, variant: null, repeat: 1 });
  return { ...rest, script: [...first] };
}

function resolvePolicy(policy: TaskFileContent["policy"], file: string, locate: Locate): TaskPolicy | null {
  if (policy === undefined) return null;
  if (typeof policy === "string") return { kind: "file", path: resolve(dirname(file), policy) };
  return { kind: "inline", data: policy, file, ...locate(["policy"]), positions: valuePositions(policy, (path) => locate(["policy", ...path])) };
}

/** The position of every value below `value` (not `value` itself), by dotted key path. */
function valuePositions(value: unknown, locate: Locate): Record<string, { line: number; column: number }> {
  const positions: Record<string, { line: number; column: number }> = {};
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (typeof node !== "object" || node === null) return;
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, child] of entries) {
      const childPath = [...path, key];
      const { line, column } = locate(childPath);
      positions[childPath.join(".")] = { line, column };
      walk(child, childPath);
    }
  };
  walk(value, []);
  return positions;
}

async function checkReferencedPaths(task: TaskDefinition, locate: Locate, caps: InputCaps, fixtures: FixtureScans): Promise<TaskProblem[]> {
  const problems: TaskProblem[] = [];
  const problem = (path: PropertyKey[], message: string): void => {
    problems.push({ file: task.file, ...locate(path), field: path.join("."), message });
  };
  const promptBytes = Buffer.byteLength(task.prompt, "utf8");
  if (promptBytes > caps.maxPromptBytes) {
    problem(["prompt"], `the prompt is ${promptBytes} bytes, over the ${caps.maxPromptBytes}-byte cap (raise it with RHEMA_MAX_PROMPT_BYTES)`);
  }
  if (task.workspace.from !== null) {
    const kind = await pathKind(task.workspace.from);
    if (kind !== "dir") problem(["workspace", "from"], kind === null ? `folder not found: ${task.workspace.from}` : `not a folder: ${task.workspace.from}`);
    else {
      // What the copy would refuse (a FIFO, a device, a link leading out) is found now, before anything is written.
      const from = task.workspace.from;
      if (!fixtures.has(from)) fixtures.set(from, scanFixture(from));
      const found = await fixtures.get(from)!;
      if (found !== null) problem(["workspace", "from"], `${found.path} ${found.message}`);
    }
  }
  const git = task.workspace.git;
  if (git?.kind === "path") {
    const message = await gitRepositoryProblem(git.path);
    if (message !== null) problem(["workspace", "git"], message);
  }
  for (const [index, image] of task.images.entries()) {
    const kind = await pathKind(image);
    if (kind !== "file") problem(["images", index], kind === null ? `image not found: ${image}` : `not a file: ${image}`);
    else {
      const message = await imageProblem(image, caps.maxImageBytes);
      if (message !== null) problem(["images", index], message);
    }
  }
  if (task.policy?.kind === "file") {
    const kind = await pathKind(task.policy.path);
    if (kind !== "file") problem(["policy"], kind === null ? `policy file not found: ${task.policy.path}` : `not a file: ${task.policy.path}`);
  }
  if (task.output) {
    const message = await loadOutputSchema(task.output);
    if (message !== null) problem(["output", "schema"], message);
  }
  return problems;
}

/** Reads a schema file into `output.schema` and judges the schema; the problem's text, or null. */
async function loadOutputSchema(output: TaskOutput): Promise<string | null> {
  if (output.schemaFile !== null) {
    const read = await readOutputSchemaFile(output.schemaFile);
    if ("problem" in read) return read.problem;
    output.schema = read.schema;
  }
  const problem = outputSchemaProblem(output.schema!);
  return problem === null ? null : output.schemaFile === null ? problem : `${problem}: ${output.schemaFile}`;
}

/** Why an image cannot be sent: too big, not one of the four formats, or bytes that are another format than its name says. */
async function imageProblem(image: string, maxBytes: number): Promise<string | null> {
  const size = (await stat(image)).size;
  if (size > maxBytes) return `the image is ${size} bytes, over the ${maxBytes}-byte cap (raise it with RHEMA_MAX_IMAGE_BYTES): ${image}`;
  const named = IMAGE_FORMATS[extname(image).toLowerCase()];
  const handle = await open(image, "r");
  let head: Buffer;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(16), 0, 16, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const actual = sniffImageFormat(head);
  if (actual === null) return `not a png, jpeg, gif or webp image (by its bytes): ${image}`;
  if (named === undefined) return `the image is a ${actual} but its name does not say so (use a .${actual === "jpeg" ? "jpg" : actual} extension): ${image}`;
  if (named !== actual) return `the image is a ${actual} but is named as a ${named}: rename it .${actual === "jpeg" ? "jpg" : actual}: ${image}`;
  return null;
}

async function pathKind(path: string): Promise<"file" | "dir" | "other" | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? "file" : info.isDirectory() ? "dir" : "other";
  } catch {
    return null;
  }
}

// ── describing schema problems ────────────────────────────────────────────────────────────

/** Every schema problem, each unknown key on its own with a "did you mean", in file order. */
function schemaProblems(issues: readonly z.core.$ZodIssue[], data: unknown, yaml: YamlSource, file: string): TaskProblem[] {
  const { unknownKeys, others } = splitSchemaIssues(issues, taskFileSchema, data);
  const problems: TaskProblem[] = unknownKeys.map((u) => ({
    file,
    ...yaml.locateKey(u.path, u.key),
    field: fieldName([...u.path, u.key]),
    message: unknownKeyMessage(u),
  }));
  for (const issue of others) problems.push({ file, ...yaml.locateIssue(issue), field: fieldName(issue.path), message: issueMessage(issue, data) });
  return problems.sort(byPosition);
}

function unknownKeyMessage(u: UnknownKey): string {
  const expected = u.allowed.length > 0 ? `expected one of: ${u.allowed.join(", ")}` : "";
  if (u.suggestion === null) return `unknown key${expected === "" ? "" : `; ${expected}`}`;
  return `unknown key; did you mean \`${u.suggestion}\`?${expected === "" ? "" : ` (${expected})`}`;
}

function issueMessage(issue: z.core.$ZodIssue, data: unknown): string {
  const missing = valueAtPath(data, issue.path) === undefined;
  return issue.code === "invalid_type" && missing ? `required: ${issue.message}` : issue.message;
}

function byPosition(a: SourcePosition, b: SourcePosition): number {
  return a.line - b.line || a.column - b.column;
}

function fieldName(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "(task)" : path.map(String).join(".");
}

function requireAbsolute(file: string): void {
  if (!isAbsolute(file)) throw new RhemaError("usage", `task file path must be absolute, got "${file}"`);
}
