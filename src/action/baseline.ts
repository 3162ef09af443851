/**
 * The action as a pull-request gate (issue 22): where a baseline run directory comes from and
 * where one is saved, and what of a run directory a saved baseline keeps. The `baseline` input is a run directory path, or a cache name
 * `rhema-baseline-<workflow>-<ref>` — the name a base-branch run with `save-baseline: true` saves
 * its run directory under. Cache keys are immutable, so each save adds the shard, run id and
 * attempt (`rhema-baseline-<workflow>-<ref>-<shard>-<run id>-<attempt>`) and a restore takes the
 * newest entry of the name and this job's shard by prefix (no run id: a pull-request run may
 * restore caches its base branch saved). Pure: names and keys; the I/O is run-action.ts's.
 */
import { RUN_FILES } from "../runner/run-dir/run-dir.js";
import { cacheKeyPart, type CacheKeys } from "./run-cache.js";

/** The key prefix of every baseline entry: a `baseline` input starting with it names a cache entry. */
export const BASELINE_KEY_PREFIX = "rhema-baseline-";

/**
 * Where a baseline is restored to and saved from, relative to the workspace. The Actions cache
 * extracts an entry at the path it was saved from and versions it by that path, so both sides
 * use this one.
 */
export const BASELINE_DIR = ".rhema/baseline";

/** The `baseline` input: a run directory (relative to the workspace) or a cache name. */
export type BaselineSource =
  | { kind: "path"; path: string }
  | { kind: "cache"; name: string };

/** `rhema-baseline-…` is a cache name; anything else a path. */
export function baselineSource(value: string): BaselineSource {
  return value.startsWith(BASELINE_KEY_PREFIX) ? { kind: "cache", name: value } : { kind: "path", path: value };
}

/** Where the base run sits: the parts of its baseline's name and key. */
export interface BaselineScope {
  workflow: string;
  /** The branch or tag (`GITHUB_REF_NAME`). */
  ref: string;
  /** `i/n`, or null for an unsharded run. */
  shard: string | null;
  runId: string;
  attempt: number;
}

/** The name a pull-request job passes as `baseline`: `rhema-baseline-<workflow>-<ref>`. */
export function baselineName(scope: Pick<BaselineScope, "workflow" | "ref">): string {
  return `${BASELINE_KEY_PREFIX}${cacheKeyPart(scope.workflow)}-${cacheKeyPart(scope.ref)}`;
}

/** The key a base run saves its baseline under: its name, shard, run id and attempt. */
export function baselineSaveKey(scope: BaselineScope): string {
  return `${baselineName(scope)}-${shardPart(scope.shard)}-${cacheKeyPart(scope.runId)}-${scope.attempt}`;
}

/** The name (`rhema-baseline-<workflow>-<ref>`) of a key baselineSaveKey made: its parts never hold `-`. */
export function baselineNameOfKey(key: string): string {
  return key.split("-").slice(0, 4).join("-");
}

/** What restores the newest baseline saved under `name` for this job's shard. */
export function baselineRestoreKeys(name: string, shard: string | null): CacheKeys {
  const prefix = `${name}-${shardPart(shard)}-`;
  return { key: prefix, restoreKeys: [prefix] };
}

function shardPart(shard: string | null): string {
  return shard === null ? "all" : cacheKeyPart(shard);
}

/**
 * Whether a path of the run directory (relative to it, `/`-separated) goes into a saved baseline:
 * everything but the lock and the trials' workspaces (`tasks/<suite>/<id>/<variant>/<n>/workspace`,
 * `tasks/<suite>/<id>/workspace` in layout 1), which a comparison never reads and which may be large.
 */
export function keptInBaseline(path: string): boolean {
  const parts = path.split("/");
  if (parts.length === 1) return parts[0] !== RUN_FILES.lock;
  return !(parts[0] === "tasks" && (parts.length === 4 || parts.length === 6) && parts.at(-1) === WORKSPACE_FOLDER);
}

const WORKSPACE_FOLDER = "workspace";
