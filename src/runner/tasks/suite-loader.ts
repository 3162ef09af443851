/**
 * Suite loading: from the PATHS a user names to the tasks this run executes.
 *
 * What counts as a task file — by role, never by folder name:
 * - under a folder, every `*.yaml` / `*.yml`, recursively, except inside `node_modules` and
 *   hidden folders (`.git`, `.rhema` with its run directories); symlinked folders are not
 *   followed. A glob (`tasks/**\/*.yaml`) is expanded relative to `cwd` likewise;
 * - never inside a run directory below the searched folder: the one `--out` names (`exclude`),
 *   wherever it points, and any folder holding a rhema run manifest (`manifest.json` with a
 *   `runId` and `tasks`) — workspace copies there are not tasks;
 * - not a file a `.rhemaignore` excludes (gitignore syntax: fixture YAML that is not a task). They
 *   are looked for like `.gitignore`: in the folder a PATH names (for a glob, its fixed leading
 *   folder), every folder below it, and — when it is inside `cwd` — every folder from `cwd` down
 *   to it; each file's rules apply to its folder and below, and the deepest file with an opinion
 *   on a path decides (`!` re-includes);
 * - a file whose top level is a policy (`version` with `default` or `rules`, and no `prompt`) is
 *   a policy, not a task: it is listed in `policies` (`rhema validate` checks it as a policy);
 * - a file whose top level is a matrix (`matrix`, and no `prompt`: matrix-file.ts) is a matrix
 *   file, not a task: it is listed in `matrices` and applies only when `--matrix` names it;
 * - a file whose top level is a quarantine list (`quarantine`, and no `prompt`:
 *   quarantine-file.ts) is not a task either: it is listed in `quarantines` and applies only when
 *   `--quarantine` names it;
 * - a folder some loaded task uses as `workspace.from` (or a repository as `workspace.git`) is a fixture: files inside it are not
 *   tasks, whatever they contain;
 * - every other `.yaml`/`.yml` is a task and must validate (a misspelled key is an error, never
 *   a silent skip). A file named explicitly is a task (or a policy) whatever its extension, and
 *   whatever a `.rhemaignore` says.
 * A path that does not exist, or a folder or glob that yields no task file, is an error.
 *
 * Selection: `--filter GLOB` (picomatch on `suite/id`, any of several), `--tag T` (any of
 * several), `--shard i/n`. Every task file is parsed and checked first, all problems are
 * reported together, and a task id used twice in a suite is an error naming both files.
 * Results are sorted by suite then id, whatever order the files were found in.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";
import { glob, isDynamicPattern } from "tinyglobby";
import { RhemaError, errnoCode, throwIfMachineLimit } from "../../core/errors.js";
import { decodeUtf8Text } from "../../yaml-source/text-bytes.js";
import { DEFAULT_INPUT_CAPS, TaskFileError, loadTaskFile, loadTaskSource, readSuiteFile, readYamlFile, type FixtureScans, type InputCaps, type TaskDefinition, type TaskProblem } from "./task-file.js";
import type { YamlSource } from "../../yaml-source/yaml-source.js";
import { baseTaskKey, compareTasks, taskKey, type SkippedTask } from "./task-key.js";
import { isMatrixDocument, type MatrixFile } from "./matrix-file.js";
import { isQuarantineDocument } from "./quarantine-file.js";
import { topLevelKeys } from "../../yaml-source/checked-yaml.js";
import { variantTasks, type VariantTasks } from "./task-variants.js";

/** Shard `index` of `count`, 1-based, as `--shard 2/3` writes it. */
export interface Shard {
  index: number;
  count: number;
}

export interface TaskSelection {
  /** picomatch globs matched against `suite/id`; a task is kept if any matches. */
  filters?: readonly string[];
  /** A task is kept if it has any of these tags. */
  tags?: readonly string[];
  shard?: Shard | null;
}

export interface LoadTasksOptions extends TaskSelection {
  /** Folder relative PATHS and globs are resolved from (the CLI passes process.cwd()). */
  cwd: string;
  /** Prompt and image size caps; default `DEFAULT_INPUT_CAPS`. */
  caps?: InputCaps;
  /** Absolute folders never searched for task files: the run directory (`--out`). */
  exclude?: readonly string[];
  /** `--matrix`: every selected task runs as each of its cells (task-variants.ts), before the shard split. */
  matrix?: MatrixFile | null;
}

export interface LoadedTasks {
  /** The tasks to run, sorted by suite then id. */
  tasks: TaskDefinition[];
  /** Tasks of this shard that `--filter`/`--tag` left out, sorted likewise (for reports). */
  skipped: SkippedTask[];
  /** Tasks that belong to other shards: their shard runs them, so they are never "skipped". */
  otherShards: TaskDefinition[];
  /**
   * How many tasks the paths, `--filter` and `--tag` select across every shard: 0 is a selection
   * of nothing (a usage error), while `tasks` may be empty for a shard whose share is nothing.
   */
  selectedInAllShards: number;
  /** Policy files found among the paths (recognized by their top level), absolute, sorted. */
  policies: string[];
  /** Matrix files found among the paths (recognized by their top level), absolute, sorted. */
  matrices: string[];
  /** Quarantine files found among the paths (recognized by their top level), absolute, sorted. */
  quarantines: string[];
  /** With a matrix: its cells as the manifest records them, and the axes each task (`suite/id`) pins. */
  variants: Omit<VariantTasks, "tasks"> | null;
}

const IGNORED_FOLDERS = ["**/node_modules/**"];

/**
 * Parses `i/n` with 1 ≤ i ≤ n (whole numbers; blanks around them are allowed, as a matrix
 * expression may leave them); anything else is a usage error saying what it got.
 */
export function parseShard(text: string): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || !Number.isSafeInteger(index) || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    throw new RhemaError("usage", `Expected --shard as i/n with 1 ≤ i ≤ n (e.g. 2/3), got "${text}"`);
  }
  return { index, count };
}

/** `i/n`, as the manifest and the reports record a shard (no blanks, no leading zeros). */
export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** Loads, checks and selects the tasks named by `paths`. Throws `TaskFileError` or a usage error. */
export async function loadTasks(paths: readonly string[], options: LoadTasksOptions): Promise<LoadedTasks> {
  const files = await findTaskFiles(paths, options.cwd, options.exclude ?? []);
  // Each file is read and parsed once, for its role and then as a task. Files load concurrently;
  // their problems are collected per file so they come out in file order, not in the order the
  // reads happened to finish.
  const read = await Promise.all(files.map((file) => readYamlFile(file).catch((err: unknown) => asProblems(file, err))));
  const policies = read.flatMap((r) => ("yaml" in r && isPolicyDocument(r.yaml) ? [r.file] : []));
  const matrices = read.flatMap((r) => ("yaml" in r && isMatrixDocument(r.yaml) ? [r.file] : []));
  const quarantines = read.flatMap((r) => ("yaml" in r && isQuarantineDocument(r.yaml) ? [r.file] : []));
  const notTasks = new Set([...policies, ...matrices, ...quarantines]);
  const fixtureScans: FixtureScans = new Map();
  const perFile = await Promise.all(read.filter((r) => !notTasks.has(r.file)).map(async (r) => {
    if (!("yaml" in r)) return r;
    try {
      return { file: r.file, task: await loadTaskSource(r, options.caps ?? DEFAULT_INPUT_CAPS, fixtureScans) as TaskDefinition | null, problems: [] as readonly TaskProblem[] };
    } catch (err) {
      return asProblems(r.file, err);
    }
  }));
  // A folder a task copies (or clones, `workspace.git` a path) as its workspace is a fixture: what is inside is not a task.
  const fixtures = perFile.flatMap((p) => (p.task?.workspace.from ? [p.task.workspace.from] : p.task?.workspace.git?.kind === "path" ? [p.task.workspace.git.path] : []));
  const roleTasks = perFile.filter((p) => !fixtures.some((dir) => isInside(dir, p.file)));
  if (roleTasks.length === 0 && notTasks.size === 0) throw new RhemaError("usage", `No task files (*.yaml, *.yml) under ${paths.join(" ")}: only workspace fixtures`);
  const problems: TaskProblem[] = roleTasks.flatMap((p) => p.problems);
  const tasks = roleTasks.flatMap((p) => (p.task === null ? [] : [p.task]));
  problems.push(...duplicateIdProblems(tasks));
  if (problems.length > 0) throw new TaskFileError(problems);
  return { ...selectTasks(tasks, options), policies, matrices, quarantines };
}

/**
 * Whether the task `suite/id` a run directory's manifest holds, from `file`, is still in the
 * suite. `found` is every task this run's paths yielded (selected, skipped, other shards): one
 * of them is that task (yes), or came from its file, which now defines another (no: its id was
 * renamed). A file outside them is looked at: gone (no), or loaded and defining it (yes) or
 * another (no). A file that exists but cannot be loaded now (being edited) keeps its task:
 * only a task the suite surely lost is dropped.
 */
export async function taskStillDefined(task: { suite: string; id: string; file: string }, found: readonly { suite: string; id: string; file: string }[]): Promise<boolean> {
  const key = baseTaskKey(task);
  if (found.some((t) => baseTaskKey(t) === key)) return true;
  if (found.some((t) => t.file === task.file)) return false;
  try {
    await stat(task.file);
  } catch (err) {
    throwIfMachineLimit(err);
    const code = errnoCode(err);
    return !(code === "ENOENT" || code === "ENOTDIR");
  }
  try {
    return baseTaskKey(await loadTaskFile(task.file)) === key;
  } catch (err) {
    throwIfMachineLimit(err);
    return true;
  }
}

function isInside(folder: string, file: string): boolean {
  const rel = relative(folder, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** A file that could not be loaded as a task: its problems. */
function asProblems(file: string, err: unknown): { file: string; task: null; problems: readonly TaskProblem[] } {
  if (!(err instanceof TaskFileError)) throw err;
  return { file, task: null, problems: err.problems };
}

/**
 * Whether a YAML document's top level is a policy: `version` with `default` or `rules`, and no
 * `prompt`. A file that does not parse is not a policy: the task loader reports its problems.
 */
export function isPolicyDocument(yaml: YamlSource): boolean {
  const keys = topLevelKeys(yaml);
  return keys !== null && keys.has("version") && (keys.has("default") || keys.has("rules")) && !keys.has("prompt");
}

/** The task files named by `paths` (files, folders, globs), absolute, deduplicated, sorted. */
export async function findTaskFiles(paths: readonly string[], cwd: string, exclude: readonly string[] = []): Promise<string[]> {
  if (paths.length === 0) throw new RhemaError("usage", "Expected at least one task file, folder or glob, got none");
  const found = new Set<string>();
  const discovery = new Discovery(cwd, exclude);
  for (const path of paths) {
    for (const file of await expandPath(path, cwd, discovery)) found.add(file);
  }
  return [...found].sort();
}

async function expandPath(path: string, cwd: string, discovery: Discovery): Promise<string[]> {
  if (isDynamicPattern(path)) {
    const matches = await glob(path, { cwd, absolute: true, ignore: IGNORED_FOLDERS, followSymbolicLinks: false });
    const files = await discovery.keep(resolve(cwd, picomatch.scan(path).base), matches.filter(isYamlFile));
    if (files.length === 0) throw new RhemaError("usage", `The glob "${path}" matched no task files (*.yaml, *.yml)`);
    return files;
  }
  const absolute = resolve(cwd, path);
  const info = await stat(absolute).catch(() => null);
  if (info === null) throw new RhemaError("usage", `Task path not found: ${path} (looked for ${absolute})`);
  if (info.isFile()) return [absolute];
  if (!info.isDirectory()) throw new RhemaError("usage", `Not a file or folder: ${path}`);
  const matches = await glob("**/*.{yaml,yml}", { cwd: absolute, absolute: true, ignore: IGNORED_FOLDERS, followSymbolicLinks: false });
  const files = await discovery.keep(absolute, matches);
  if (files.length === 0) throw new RhemaError("usage", `No task files (*.yaml, *.yml) under ${path}`);
  return files;
}

export const IGNORE_FILE = ".rhemaignore";

/** The rules of one `.rhemaignore`, applying to `dir` (absolute) and below. */
interface IgnoreRules {
  dir: string;
  ig: Ignore;
}

/**
 * What a folder search keeps (see the header): not in a run directory, not excluded by a
 * `.rhemaignore`. Each folder's `.rhemaignore` and run-manifest check is read once per search.
 */
class Discovery {
  private readonly rules = new Map<string, Promise<IgnoreRules | null>>();
  private readonly runDirs = new Map<string, Promise<boolean>>();
  constructor(private readonly cwd: string, private readonly exclude: readonly string[]) {}

  /** The files found under `root` (absolute) that discovery keeps, in the order given. */
  async keep(root: string, files: readonly string[]): Promise<string[]> {
    const kept = await Promise.all(files.map(async (file) => ((await this.skips(root, file)) ? null : file)));
    return kept.filter((file): file is string => file !== null);
  }

  private async skips(root: string, file: string): Promise<boolean> {
    // A run directory at or above the searched folder is not skipped: the user asked for its contents.
    if (this.exclude.some((dir) => isInside(dir, file) && !(dir === root || isInside(dir, root)))) return true;
    const runDir = await Promise.all(foldersFrom(root, dirname(file)).slice(1).map((dir) => this.isRunDir(dir)));
    if (runDir.some(Boolean)) return true;
    // .rhemaignore files count from cwd down when the searched folder is inside it (as a
    // repository's .gitignore files count from its root), else from the searched folder down.
    const top = root === this.cwd || isInside(this.cwd, root) ? this.cwd : root;
    const rules = (await Promise.all(foldersFrom(top, dirname(file)).map((dir) => this.rulesOf(dir)))).filter((r): r is IgnoreRules => r !== null);
    for (let i = rules.length - 1; i >= 0; i--) {
      const verdict = rules[i]!.ig.test(relative(rules[i]!.dir, file).split(sep).join("/"));
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }

  private rulesOf(dir: string): Promise<IgnoreRules | null> {
    let rules = this.rules.get(dir);
    if (rules === undefined) {
      rules = readIgnoreFile(join(dir, IGNORE_FILE)).then((lines) => (lines === null ? null : { dir, ig: ignore({ ignorecase: false }).add(lines) }));
      this.rules.set(dir, rules);
    }
    return rules;
  }

  private isRunDir(dir: string): Promise<boolean> {
    let answer = this.runDirs.get(dir);
    if (answer === undefined) {
      answer = holdsRunManifest(dir);
      this.runDirs.set(dir, answer);
    }
    return answer;
  }
}

/** `root` and each folder below it down to `dir` (inclusive); just `root` when `dir` is not below it. */
function foldersFrom(root: string, dir: string): string[] {
  const rel = relative(root, dir);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return [root];
  const parts = rel.split(sep);
  return [root, ...parts.map((_, i) => join(root, ...parts.slice(0, i + 1)))];
}

/** A `.rhemaignore`'s lines, or null when there is none; one that is not UTF-8 text is a located problem. */
async function readIgnoreFile(file: string): Promise<string[] | null> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return null;
  const text = decodeUtf8Text(await readSuiteFile(file));
  if (!text.ok) throw new TaskFileError([{ file, ...text.problem, field: "" }]);
  return text.text.replace(/^\uFEFF/, "").split(/\r?\n/);
}

/** Whether `dir` is a rhema run directory: it holds a `manifest.json` with a `runId` and a `tasks` list. */
async function holdsRunManifest(dir: string): Promise<boolean> {
  const text = await readFile(join(dir, "manifest.json"), "utf8").catch(() => null);
  if (text === null) return false;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && typeof (value as { runId?: unknown }).runId === "string"
      && Array.isArray((value as { tasks?: unknown }).tasks);
  } catch {
    return false;
  }
}

function isYamlFile(file: string): boolean {
  const ext = extname(file).toLowerCase();
  return ext === ".yaml" || ext === ".yml";
}

/** A problem at each repeated id, naming the file that used it first (in path order). */
function duplicateIdProblems(tasks: readonly TaskDefinition[]): TaskProblem[] {
  const firstByKey = new Map<string, TaskDefinition>();
  const problems: TaskProblem[] = [];
  for (const task of [...tasks].sort((a, b) => compareText(a.file, b.file))) {
    const first = firstByKey.get(taskKey(task));
    if (first === undefined) {
      firstByKey.set(taskKey(task), task);
      continue;
    }
    problems.push({
      file: task.file,
      ...task.idPosition,
      field: "id",
      message: `duplicate task id "${task.id}" in suite "${task.suite}": also used by ${first.file}:${first.idPosition.line}:${first.idPosition.column}`,
    });
  }
  return problems;
}

/**
 * Applies filter, tags and shard to loaded tasks (pure). A task that fails the filter or tags
 * is skipped; the shard then splits kept and skipped tasks alike, so each shard reports only
 * its own skipped tasks and merged shards report each task once.
 */
export function selectTasks(all: readonly TaskDefinition[], selection: TaskSelection & { matrix?: MatrixFile | null }): Omit<LoadedTasks, "policies" | "matrices" | "quarantines"> {
  const matchesFilter = selection.filters?.length ? picomatch([...selection.filters]) : () => true;
  const wantedTags = new Set(selection.tags ?? []);
  const kept: TaskDefinition[] = [];
  const skipped: { task: TaskDefinition; reason: SkippedTask["reason"] }[] = [];
  for (const task of all) {
    if (!matchesFilter(taskKey(task))) skipped.push({ task, reason: "filter" });
    else if (wantedTags.size > 0 && !task.tags.some((tag) => wantedTags.has(tag))) skipped.push({ task, reason: "tag" });
    else kept.push(task);
  }
  // A matrix cell's task is a unit of its own: shards hold whole (task, variant) pairs.
  const variants = selection.matrix ? variantTasks(kept, selection.matrix) : null;
  const units = variants === null ? kept : variants.tasks;
  const shard = selection.shard ?? null;
  const keptSplit = splitByShard(units, shard, (task) => task);
  const skippedSplit = splitByShard(skipped, shard, (entry) => entry.task);
  return {
    tasks: keptSplit.mine.sort(compareTasks),
    skipped: skippedSplit.mine
      .map(({ task, reason }) => ({ suite: task.suite, id: task.id, file: task.file, reason }))
      .sort(compareTasks),
    otherShards: [...keptSplit.others, ...skippedSplit.others.map((entry) => entry.task)].sort(compareTasks),
    selectedInAllShards: units.length,
    variants: variants === null ? null : { cells: variants.cells, pinned: variants.pinned },
  };
}

/**
 * The shard of each item: items are ordered by a hash of `suite/id` and dealt round-robin, so
 * shards differ in size by at most one and every item lands in exactly one shard. The order
 * depends only on the keys, so every job of a CI matrix (same tasks, same flags) agrees.
 */
function splitByShard<T>(items: readonly T[], shard: Shard | null, taskOf: (item: T) => TaskDefinition): { mine: T[]; others: T[] } {
  if (shard === null || shard.count === 1) return { mine: [...items], others: [] };
  const ordered = items
    .map((item) => ({ item, key: taskKey(taskOf(item)) }))
    .map((entry) => ({ ...entry, hash: createHash("sha256").update(entry.key).digest("hex") }))
    .sort((a, b) => compareText(a.hash, b.hash) || compareText(a.key, b.key));
  const mine: T[] = [];
  const others: T[] = [];
  ordered.forEach(({ item }, position) => (position % shard.count === shard.index - 1 ? mine : others).push(item));
  return { mine, others };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
