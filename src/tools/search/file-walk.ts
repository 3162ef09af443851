/**
 * The JavaScript file walk behind glob and grep when ripgrep is not available, listing what
 * `rg --files` lists with the flags in ripgrep.ts: regular files, hidden ones included, `.git`
 * left out, `.gitignore` honoured (gitignore-rules.ts), symlinks not followed.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { CancelledError } from "../../core/errors.js";
import { type IgnoreMatcher, inheritedMatchers, isIgnored, loadMatcher } from "./gitignore-rules.js";

/**
 * Every file below the folder `root` (workspace-relative, "" for the root), as workspace-relative
 * paths, in no particular order.
 */
export async function walkFiles(workspace: string, root: string, signal: AbortSignal): Promise<string[]> {
  const files: string[] = [];
  const pending: Array<{ dir: string; matchers: readonly IgnoreMatcher[] }> = [
    { dir: root, matchers: await inheritedMatchers(workspace, root) },
  ];
  while (pending.length > 0) {
    if (signal.aborted) throw new CancelledError("file search cancelled");
    const { dir, matchers: above } = pending.pop()!;
    const entries = await readdir(join(workspace, dir), { withFileTypes: true }).catch(() => [] as Dirent[]);
    const own = entries.some((e) => e.name === ".gitignore" && e.isFile()) ? await loadMatcher(workspace, dir) : null;
    const matchers = own ? [...above, own] : above;
    for (const entry of entries) {
      if (entry.name === ".git") continue;
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!isIgnored(matchers, path, true)) pending.push({ dir: path, matchers });
      } else if (entry.isFile() && !isIgnored(matchers, path, false)) {
        files.push(path);
      }
    }
  }
  return files;
}
