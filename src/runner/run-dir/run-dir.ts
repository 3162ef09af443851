/**
 * A run directory (`--out`, default `.rhema/runs/latest`): the one owner of its own files'
 * paths — `manifest.json`, `rhema.lock`, the reports `junit.xml`, `stats.json`, `summary.md`,
 * `report.html` —
 * and of the way to each task's folder (`TaskFolder`, task-folder.ts). Reads validate and name
 * the file; failed writes are `OutputError`s naming the file and the operation.
 */
import { readdir, readFile, readlink, rm, stat } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { RhemaError, assertNever, errnoCode, errorMessage } from "../../core/errors.js";
import { isAtomicTempOf, removeAtomicTemps } from "../../store/private-files.js";
import { guardOutput, machineReadError } from "./output-guard.js";
import type { LockTiming } from "./lock-owner.js";
import { acquireRunLock, type RunLock } from "./run-lock.js";
import { MANIFEST_KIND, plannedTrials, type RunManifest } from "./run-manifest.js";
import { readStateFile, writeStateFile } from "./state-file.js";
import { PREPARED_DIR, PreparedFolder } from "./prepared-folder.js";
import { CHANGES_OBJECTS_DIR, FIXTURE_INDEXES_DIR, TASKS_DIR, TaskFolder, type TaskRef } from "./task-folder.js";
import { type TaskResult } from "./task-result.js";
import { taskKey } from "../tasks/task-key.js";
import { NO_VARIANT_FOLDER, VARIANT_NAME_PATTERN, compareTrials, type TrialKey } from "../trials/trial-key.js";

/** The run directory's own files. */
export const RUN_FILES = {
  manifest: "manifest.json",
  lock: "rhema.lock",
  junit: "junit.xml",
  stats: "stats.json",
  summary: "summary.md",
  /** The run viewer (reports/report-html.ts), written with the final reports. */
  html: "report.html",
} as const;

/**
 * What a folder named as a run directory holds, judged before rhema writes anything in it:
 * nothing yet (`missing`, `empty`), a run (`run`: its manifest), only the top-level files rhema
 * writes before a manifest (`own`: a lock or reports of a run killed before its manifest; a
 * merge's reports and task folders, `merged`, when `tasks/` is there too), or anything else
 * (`foreign`: the user's files, e.g. a project folder an empty `--out` resolved to).
 */
export type RunDirContents =
  | { kind: "missing" }
  | { kind: "not_folder" }
  | { kind: "dangling_link"; target: string }
  | { kind: "empty" }
  | { kind: "run" }
  | { kind: "own" }
  | { kind: "merged" }
  | { kind: "foreign"; entries: string[] };

/** Why a run may not use `path` as its run directory (`--out`), or null when it may. */
export function runDirRefusal(path: string, contents: RunDirContents): string | null {
  switch (contents.kind) {
    case "missing":
    case "empty":
    case "run":
    case "own":
      return null;
    case "not_folder":
      return `Expected --out to be a run directory (a new, empty or earlier rhema run's folder), got ${path}, which is not a folder`;
    case "dangling_link":
      return `Expected --out to be a run directory (a new, empty or earlier rhema run's folder), got ${path}, a link to ${contents.target}, which does not exist: nothing was written; make the folder it names, or pass the folder itself`;
    case "merged":
    case "foreign":
      return `Expected --out to be a run directory (a new, empty or earlier rhema run's folder), got ${path}, which holds files and no rhema run ` +
        `(no ${RUN_FILES.manifest}${contents.kind === "foreign" ? `; it holds ${listEntries(contents.entries)}` : ""}): nothing was written; pass a new or empty folder`;
    default:
      return assertNever(contents);
  }
}

function listEntries(entries: readonly string[]): string {
  const shown = entries.slice(0, 5).map((e) => JSON.stringify(e)).join(", ");
  return entries.length > 5 ? `${shown} and ${entries.length - 5} more` : shown;
}

/** Where a run's three reports are (in its run directory, or the user's copies). */
export interface ReportFiles {
  junit: string;
  stats: string;
  summary: string;
}

export class RunDir {
  /** `path` is absolute. */
  constructor(readonly path: string) {}

  /** A trial's folder (layout 2). */
  trial(key: TrialKey): TaskFolder {
    return new TaskFolder(this.path, key);
  }

  /** A task's one folder in a run directory made before trials (layout 1): read by reports, merge and replay. */
  task(ref: TaskRef): TaskFolder {
    return new TaskFolder(this.path, ref);
  }

  /** The folder a result belongs in: its trial's, or (a result without a trial) its layout-1 task folder. */
  folderOf(result: Pick<TaskResult, "suite" | "id" | "trial">): TaskFolder {
    return result.trial === undefined ? this.task(result) : this.trial({ suite: result.suite, id: result.id, ...result.trial });
  }

  /** Removes every trial folder of a task (`tasks/<suite>/<id>/`): it starts afresh. */
  async removeTask(ref: TaskRef & { variant?: string | null | undefined }): Promise<void> {
    // A matrix cell's task owns only its variant's folder: the task's other cells stay.
    const dir = ref.variant == null ? this.task(ref).dir : join(this.task(ref).dir, ref.variant);
    await guardOutput(dir, "remove", () => rm(dir, { recursive: true, force: true }));
  }

  get manifestPath(): string {
    return join(this.path, RUN_FILES.manifest);
  }

  get lockPath(): string {
    return join(this.path, RUN_FILES.lock);
  }

  get reports(): ReportFiles {
    return { junit: join(this.path, RUN_FILES.junit), stats: join(this.path, RUN_FILES.stats), summary: join(this.path, RUN_FILES.summary) };
  }

  /**
   * Takes the directory's lock (creating the directory 0700): a run's first write. Holding it,
   * removes the temp files that atomic writes of a killed run left beside its own files.
   * `timing`: the lock's stale limit and heartbeat (default 30 s and 5 s).
   */
  async lock(pid: number, now: Date, timing?: LockTiming): Promise<RunLock> {
    const lock = await acquireRunLock(this.lockPath, pid, now, timing ?? {});
    try {
      // Not the lock's own temp files: another runner may be trying for the lock this moment.
      const names = Object.values(RUN_FILES).filter((name) => name !== RUN_FILES.lock);
      await guardOutput(this.path, "remove", () => removeAtomicTemps(this.path, names));
    } catch (err) {
      await lock.release();
      throw err;
    }
    return lock;
  }

  /** What the folder holds (see `RunDirContents`); a folder rhema cannot read is an OutputError. */
  async inspect(): Promise<RunDirContents> {
    const info = await stat(this.path).catch((err: unknown) => {
      // Under a file (ENOTDIR): nothing here either; creating it fails, naming the path (exit 3).
      if (errnoCode(err) === "ENOENT" || errnoCode(err) === "ENOTDIR") return null;
      throw machineReadError(err, this.path) ?? err;
    });
    if (info === null) {
      // A link to nothing: creating "it" would fail (or make a folder somewhere the link says): refused, not created.
      const target = await readlink(this.path).catch(() => null);
      return target === null ? { kind: "missing" } : { kind: "dangling_link", target };
    }
    if (!info.isDirectory()) return { kind: "not_folder" };
    const entries = await readdir(this.path).catch((err: unknown) => {
      throw machineReadError(err, this.path) ?? err;
    });
    if (entries.length === 0) return { kind: "empty" };
    if (entries.includes(RUN_FILES.manifest)) return { kind: "run" };
    const own = Object.values(RUN_FILES) as string[];
    const foreign = entries.filter((e) => e !== TASKS_DIR && !own.includes(e) && !own.some((name) => isAtomicTempOf(e, name) || e.startsWith(`${name}.`)));
    if (foreign.length > 0) return { kind: "foreign", entries: foreign.sort() };
    return entries.includes(TASKS_DIR) ? { kind: "merged" } : { kind: "own" };
  }

  readManifest(): Promise<RunManifest | null> {
    return readStateFile(this.manifestPath, MANIFEST_KIND);
  }

  writeManifest(manifest: RunManifest): Promise<void> {
    return writeStateFile(this.manifestPath, manifest);
  }

  /**
   * Starts the run over (`--restart`): removes every task folder, the snapshots' shared objects and
   * fixture indexes, the shared setups' prepared bases (`prepared/`) and the manifest; the lock and
   * reports stay. Only a folder whose manifest is rhema's (read and validated here) is wiped: a
   * folder without one has nothing of a run to wipe, and its `tasks/` (a project's own) is kept.
   */
  async wipeRun(): Promise<void> {
    if ((await this.readManifest()) === null) return;
    const tasks = join(this.path, TASKS_DIR);
    await guardOutput(tasks, "remove", () => rm(tasks, { recursive: true, force: true }));
    await guardOutput(this.manifestPath, "remove", () => rm(this.manifestPath, { force: true }));
    for (const shared of [CHANGES_OBJECTS_DIR, FIXTURE_INDEXES_DIR, PREPARED_DIR]) {
      const dir = join(this.path, shared);
      await guardOutput(dir, "remove", () => rm(dir, { recursive: true, force: true }));
    }
  }

  /** The folder of the shared setup whose key hashes to `hash` (prepared-folder.ts). */
  prepared(hash: string): PreparedFolder {
    return new PreparedFolder(this.path, hash);
  }

  /**
   * Every trial folder's result, sorted by suite, id, variant and repeat — of the manifest's tasks
   * and planned trials, when there is a manifest (the folder of a task removed from the suite
   * stays until `--restart`, outside the run). Both layouts are read: a manifest says which; a
   * merge's folder without one is told per task (a layout-1 folder holds its files itself). A
   * folder without a result (a trial not finished) is passed over; a result whose suite, id or
   * trial disagree with its folder is an error. A run directory without `tasks/` has no results.
   */
  async readResults(): Promise<TaskResult[]> {
    const manifest = await this.readManifest();
    const results: TaskResult[] = [];
    if (manifest && (manifest.layout ?? 1) === 2) {
      // Each planned trial's folder: a matrix's task holds a folder per variant, each a manifest entry of its own.
      for (const key of manifest.tasks.flatMap(plannedTrials)) {
        const result = await this.trial(key).readResult();
        if (result !== null) results.push(result);
      }
      return results.sort(compareResults);
    }
    const planned = manifest ? new Map(manifest.tasks.map((t) => [taskKey(t), t.trials ?? 1])) : null;
    for (const suite of await listFolders(join(this.path, TASKS_DIR))) {
      for (const id of await listFolders(join(this.path, TASKS_DIR, suite))) {
        const trials = planned === null ? Infinity : planned.get(taskKey({ suite, id }));
        if (trials === undefined) continue;
        const layout = manifest ? manifest.layout ?? 1 : await this.layoutOfTaskFolder({ suite, id });
        if (layout === 1) {
          const result = await this.task({ suite, id }).readResult();
          if (result !== null) results.push(result);
          continue;
        }
        for (const key of await this.trialFolders({ suite, id }, trials)) {
          const result = await this.trial(key).readResult();
          if (result !== null) results.push(result);
        }
      }
    }
    return results.sort(compareResults);
  }

  /** A task folder of a run directory without a manifest (a merge's): layout 1 when it holds a task's files itself. */
  private async layoutOfTaskFolder(ref: TaskRef): Promise<1 | 2> {
    const folder = this.task(ref);
    const own = await Promise.all([folder.path("result"), folder.path("state")].map((path) => stat(path).then(() => true, () => false)));
    return own.some(Boolean) ? 1 : 2;
  }

  /** The trial folders under a task's folder (layout 2), repeats up to `maxRepeat`. */
  private async trialFolders(ref: TaskRef, maxRepeat: number): Promise<TrialKey[]> {
    const keys: TrialKey[] = [];
    const taskDir = this.task(ref).dir;
    for (const variantFolder of await listFolders(taskDir)) {
      if (!VARIANT_NAME_PATTERN.test(variantFolder)) continue;
      const variant = variantFolder === NO_VARIANT_FOLDER ? null : variantFolder;
      for (const n of await listFolders(join(taskDir, variantFolder))) {
        const repeat = /^[1-9][0-9]{0,8}$/.test(n) ? Number(n) : null;
        if (repeat !== null && repeat <= maxRepeat) keys.push({ ...ref, variant, repeat });
      }
    }
    return keys;
  }

  /** A report's text as written here, or null when there is none. */
  async readReport(kind: keyof ReportFiles): Promise<string | null> {
    const path = this.reports[kind];
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      if (errnoCode(err) === "ENOENT") return null;
      throw machineReadError(err, path) ?? new RhemaError("result_invalid", `${path}: cannot read (${errorMessage(err)})`, { cause: err });
    }
  }

  /** A path relative to the run directory (a result's transcript) made absolute; null when it leaves the directory. */
  resolveInside(relativePath: string): string | null {
    if (relativePath === "" || isAbsolute(relativePath)) return null;
    const absolute = resolve(this.path, relativePath);
    const inside = relative(this.path, absolute);
    return inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside) ? null : absolute;
  }
}

/** The results of the run directory at `runDir` (see `RunDir.readResults`). */
export function readRunResults(runDir: string): Promise<TaskResult[]> {
  return new RunDir(runDir).readResults();
}

/** What names a trial in the run's records: a result or an unfinished trial (no `trial`: a layout-1 task's one trial). */
export interface TrialEntry {
  suite: string;
  id: string;
  trial?: { repeat: number; variant: string | null } | undefined;
}

/** Results (or unfinished trials) in the one order of trials (trial-key.ts). */
export function compareResults(a: TrialEntry, b: TrialEntry): number {
  return compareTrials(trialKeyOf(a), trialKeyOf(b));
}

/** An entry's trial key (one without a trial: its task's one trial). */
export function trialKeyOf(entry: TrialEntry): TrialKey {
  return { suite: entry.suite, id: entry.id, variant: entry.trial?.variant ?? null, repeat: entry.trial?.repeat ?? 1 };
}

async function listFolders(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw machineReadError(err, dir) ?? new RhemaError("result_invalid", `${dir}: cannot list the task folders (${errorMessage(err)})`, { cause: err });
  }
}
