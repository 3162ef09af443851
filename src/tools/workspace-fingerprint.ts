/**
 * The workspace fingerprint: each file's size and mtime, taken before a write or exec call so
 * that, when a kill cuts the call, its synthetic result can say what changed since it began.
 * Cheap on purpose (no content is read): `.git`, `node_modules` and what `.gitignore` ignores
 * are skipped (the same rules as glob and grep), symlinks are not followed, and the walk stops
 * at a file cap or a time budget, saying so (`capped`): it sits on the path from the model's
 * reply to the call's start, so a huge workspace costs a bounded wait and a shorter list, not a
 * slow call. Folders are walked breadth first in name order, so a capped walk covers the files
 * nearest the root, the same ones each time it has the same budget.
 *
 * A write tool's call names what it changes (`ToolPlan.paths`): its fingerprint is of those paths
 * alone (`paths`), a few `lstat`s instead of a walk — in a 20,000-file workspace the walk cost
 * each `write_file` its whole budget, through a FUSE overlay with a daemon's round trip per file.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CancelledError } from "../core/errors.js";
import type { WorkspaceFingerprint } from "../core/session.js";
import { type IgnoreMatcher, isIgnored, loadMatcher } from "./search/gitignore-rules.js";

/** Files a fingerprint covers at most (a bigger workspace is `capped`). */
export const FINGERPRINT_MAX_FILES = 50_000;
/** How long a walk before a call may take (ms) before it stops, `capped`. */
export const FINGERPRINT_BUDGET_MS = 50;
const SKIPPED_FOLDERS = new Set([".git", "node_modules"]);

export interface FingerprintOptions {
  /** Workspace-relative, `/`-separated paths to cover instead of walking the workspace. */
  paths?: readonly string[];
  maxFiles?: number;
  /** Default FINGERPRINT_BUDGET_MS; `Infinity` walks until the file cap. */
  budgetMs?: number;
  signal?: AbortSignal;
}

/** Walks `workspace` (canonical) and returns its fingerprint; unreadable entries are left out. */
export async function takeFingerprint(workspace: string, options: FingerprintOptions = {}): Promise<WorkspaceFingerprint> {
  if (options.paths !== undefined) return pathsFingerprint(workspace, options.paths);
  const maxFiles = options.maxFiles ?? FINGERPRINT_MAX_FILES;
  const deadline = performance.now() + (options.budgetMs ?? FINGERPRINT_BUDGET_MS);
  const files: WorkspaceFingerprint["files"] = {};
  let count = 0;
  const pending: Array<{ dir: string; matchers: readonly IgnoreMatcher[] }> = [{ dir: "", matchers: [] }];
  while (pending.length > 0) {
    if (options.signal?.aborted) throw new CancelledError("workspace fingerprint cancelled");
    const { dir, matchers: above } = pending.shift()!;
    const entries = await readdir(join(workspace, dir), { withFileTypes: true }).catch(() => [] as Dirent[]);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const own = entries.some((e) => e.name === ".gitignore" && e.isFile()) ? await loadMatcher(workspace, dir) : null;
    const matchers = own ? [...above, own] : above;
    const wanted: string[] = [];
    for (const entry of entries) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name) && !isIgnored(matchers, path, true)) pending.push({ dir: path, matchers });
      } else if (entry.isFile() && !isIgnored(matchers, path, false)) {
        wanted.push(path);
      }
    }
    const room = maxFiles - count;
    const stats = await Promise.all(wanted.slice(0, room).map((path) => lstat(join(workspace, path)).catch(() => null)));
    for (const [k, info] of stats.entries()) {
      if (info) files[wanted[k]!] = [info.size, info.mtimeMs];
    }
    count += Math.min(room, wanted.length);
    if (wanted.length > room || (pending.length > 0 && performance.now() > deadline)) return { files, capped: true };
  }
  return { files, capped: false };
}

/** The fingerprint of `paths` alone: each one that is a file (not followed through a link), by size and mtime. */
async function pathsFingerprint(workspace: string, paths: readonly string[]): Promise<WorkspaceFingerprint> {
  const files: WorkspaceFingerprint["files"] = {};
  const unique = [...new Set(paths)].sort();
  const stats = await Promise.all(unique.map((path) => lstat(join(workspace, path)).catch(() => null)));
  for (const [k, info] of stats.entries()) {
    if (info?.isFile()) files[unique[k]!] = [info.size, info.mtimeMs];
  }
  return { files, capped: false, paths: unique };
}
