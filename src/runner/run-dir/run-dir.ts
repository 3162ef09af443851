/**
 * A run directory (`--out`, default `.rhema/runs/latest`): the one owner of its own files'
 * paths — `manifest.json`, `rhema.lock`, the reports `junit.xml`, `stats.json`, `summary.md` —
 * and of the way to each task's folder (`TaskFolder`, task-folder.ts). Reads validate and name
 * the file; failed writes are `OutputError`s naming the file and the operation.
 */
import { readdir, readFile, rm } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { RhemaError, errnoCode, errorMessage } from "../../core/errors.js";
import { removeAtomicTemps } from "../../store/private-files.js";
import { guardOutput, machineReadError } from "./output-guard.js";
import type { LockTiming } from "./lock-owner.js";
import { acquireRunLock, type RunLock } from "./run-lock.js";
import { MANIFEST_KIND, type RunManifest } from "./run-manifest.js";
import { readStateFile, writeStateFile } from "./state-file.js";
import { TASKS_DIR, TaskFolder, type TaskRef } from "./task-folder.js";
import { compareTasks, type TaskResult } from "./task-result.js";

/** The run directory's own files. */
export const RUN_FILES = {
  manifest: "manifest.json",
  lock: "rhema.lock",
  junit: "junit.xml",
  stats: "stats.json",
  summary: "summary.md",
} as const;

/** Where a run's three reports are (in its run directory, or the user's copies). */
export interface ReportFiles {
  junit: string;
  stats: string;
  summary: string;
}

export class RunDir {
  /** `path` is absolute. */
  constructor(readonly path: string) {}

  task(ref: TaskRef): TaskFolder {
    return new TaskFolder(this.path, ref);
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

  readManifest(): Promise<RunManifest | null> {
    return readStateFile(this.manifestPath, MANIFEST_KIND);
  }

  writeManifest(manifest: RunManifest): Promise<void> {
    return writeStateFile(this.manifestPath, manifest);
  }

  /** Starts the run over (`--restart`): removes every task folder and the manifest; the lock and reports stay. */
  async wipeRun(): Promise<void> {
    const tasks = join(this.path, TASKS_DIR);
    await guardOutput(tasks, "remove", () => rm(tasks, { recursive: true, force: true }));
    await guardOutput(this.manifestPath, "remove", () => rm(this.manifestPath, { force: true }));
  }

  /**
   * Every task folder's result, sorted by suite then id. A folder without a result (a task not
   * finished) is passed over; a result whose suite/id disagree with its folder is an error.
   * A run directory without `tasks/` has no results.
   */
  async readResults(): Promise<TaskResult[]> {
    const results: TaskResult[] = [];
    for (const suite of await listFolders(join(this.path, TASKS_DIR))) {
      for (const id of await listFolders(join(this.path, TASKS_DIR, suite))) {
        const result = await this.task({ suite, id }).readResult();
        if (result !== null) results.push(result);
      }
    }
    return results.sort(compareTasks);
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

async function listFolders(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw machineReadError(err, dir) ?? new RhemaError("result_invalid", `${dir}: cannot list the task folders (${errorMessage(err)})`, { cause: err });
  }
}
