/**
 * Keeping the run directory between attempts of one workflow run: the cache keys (pure), the
 * port the action saves and restores through, and its two adapters — the Actions cache
 * (`@actions/cache`) and a folder (`RHEMA_ACTION_CACHE_DIR`: tests, and self-hosted runners
 * with a shared disk). Keys are immutable, so each attempt saves under its own key and a re-run
 * restores the newest earlier attempt by prefix. The lock file is never cached: a restored
 * directory lands in a new container, where the old owner's pid means nothing.
 */
import { cp, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import * as cache from "@actions/cache";
import { PREPARED_DIR } from "../runner/run-dir/prepared-folder.js";
import { RunDir } from "../runner/run-dir/run-dir.js";
import { TASKS_DIR } from "../runner/run-dir/task-folder.js";

/** Where the run sits in the workflow: the parts of the key. */
export interface CacheScope {
  workflow: string;
  job: string;
  /** `i/n`, or null for an unsharded run. */
  shard: string | null;
  /** The run directory relative to the workspace (two steps of one job may use two). */
  out: string;
  runId: string;
  attempt: number;
}

export interface CacheKeys {
  /** This attempt's key: the one it saves under. */
  key: string;
  /** Prefixes that find the earlier attempts of the same run, newest first. */
  restoreKeys: string[];
}

/** `rhema-<workflow>-<job>-<shard>-<out>-<run id>-<attempt>`, each part made key-safe. */
export function runCacheKeys(scope: CacheScope): CacheKeys {
  const prefix = ["rhema", scope.workflow, scope.job, scope.shard ?? "all", scope.out].map(cacheKeyPart).join("-") + `-${cacheKeyPart(scope.runId)}-`;
  return { key: `${prefix}${scope.attempt}`, restoreKeys: [prefix] };
}

/** Keys may not hold commas and stay short; anything but [A-Za-z0-9._] becomes `_` (so `-` only ever separates parts). */
export function cacheKeyPart(text: string): string {
  return text.replace(/[^A-Za-z0-9._]+/g, "_").slice(0, 80) || "_";
}

/** The cache a run directory is saved to and restored from. */
export interface RunDirCache {
  readonly name: string;
  /** Restores `runDir`; the key it came from, or undefined when nothing matched. */
  restore(runDir: string, keys: CacheKeys): Promise<string | undefined>;
  /** Saves `runDir` (without its lock) under `key`. */
  save(runDir: string, key: string): Promise<void>;
}

/** The Actions cache. Without the runner's cache service it warns and restores nothing. */
export function actionsCache(): RunDirCache {
  return {
    name: "actions cache",
    restore: (runDir, keys) => cache.restoreCache(cachePaths(runDir), keys.key, keys.restoreKeys),
    save: async (runDir, key) => {
      await cache.saveCache(cachePaths(runDir), key);
    },
  };
}

/**
 * The paths an entry is saved and restored with: the same list on both sides, as the Actions
 * cache versions an entry by its paths and a restore with other paths never finds it. Relative
 * to the step's working folder (the workspace, where GitHub starts the action) when inside it,
 * so that another job of the repository — a pull request's restoring a base run's baseline —
 * names the same entry on a runner whose workspace lies elsewhere.
 */
export function cachePaths(runDir: string, cwd: string = process.cwd()): string[] {
  const rel = relative(cwd, runDir);
  const path = rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : runDir;
  const lock = relative(runDir, new RunDir(runDir).lockPath);
  // Never the prepared bases (a copy of the fixture and its setup's output, rebuilt on restore when
  // a trial still needs one), nor a layer's overlay scratch folder: a layer is saved at rest, its
  // deletions listed in layer/deletions.json (layer-mounts.ts).
  return [path, `!${join(path, lock)}`, `!${join(path, PREPARED_DIR)}`, `!${join(path, TASKS_DIR, "**", "layer", "work")}`];
}

/** A folder of entries, one subfolder per key; restore by prefix takes the newest. */
export function folderCache(root: string): RunDirCache {
  return {
    name: `folder cache ${root}`,
    async restore(runDir, keys) {
      const found = await findEntry(root, keys);
      if (found === undefined) return undefined;
      await rm(runDir, { recursive: true, force: true });
      await cp(join(root, found), runDir, { recursive: true, verbatimSymlinks: true });
      return found;
    },
    async save(runDir, key) {
      const entry = join(root, key);
      if (await exists(entry)) return; // keys are immutable, as in the Actions cache
      await mkdir(root, { recursive: true });
      const lock = new RunDir(runDir).lockPath;
      await rm(`${entry}.partial`, { recursive: true, force: true });
      const prepared = join(runDir, PREPARED_DIR);
      await cp(runDir, `${entry}.partial`, { recursive: true, verbatimSymlinks: true, filter: (src) => src !== lock && src !== prepared && !isLayerScratch(relative(runDir, src)) });
      await rename(`${entry}.partial`, entry);
    },
  };
}

async function findEntry(root: string, keys: CacheKeys): Promise<string | undefined> {
  const names = (await readdir(root).catch(() => [] as string[])).filter((n) => !n.endsWith(".partial"));
  if (names.includes(keys.key)) return keys.key;
  for (const prefix of keys.restoreKeys) {
    const matches = names.filter((n) => n.startsWith(prefix));
    if (matches.length === 0) continue;
    const dated = await Promise.all(matches.map(async (n) => ({ n, t: (await stat(join(root, n))).mtimeMs })));
    return dated.sort((a, b) => b.t - a.t || (b.n < a.n ? -1 : 1))[0]!.n;
  }
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/** A layer's overlay scratch folder (`tasks/…/layer/work`), which no cache keeps. */
function isLayerScratch(rel: string): boolean {
  const parts = rel.split(sep);
  return parts[0] === TASKS_DIR && parts.length >= 3 && parts.at(-1) === "work" && parts.at(-2) === "layer";
}
