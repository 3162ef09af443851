/**
 * Paths compared as the kernel sees them: every link resolved, so a link to an input is that
 * input. Used to keep the outputs a user names (`--out`, report copies, a merge's out
 * directory) apart from the files and folders a run reads.
 */
import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { errnoCode } from "../../core/errors.js";

/** `path` with every link resolved; for a path not there yet, its deepest existing folder resolved and the rest appended. */
export async function canonicalPath(path: string): Promise<string> {
  const missing: string[] = [];
  let head = resolve(path);
  for (;;) {
    try {
      return join(await realpath(head), ...missing);
    } catch (err) {
      const code = errnoCode(err);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
    }
    const parent = dirname(head);
    if (parent === head) return resolve(path);
    missing.unshift(basename(head));
    head = parent;
  }
}

/** Whether `path` is `folder` or below it (both canonical). */
export function isWithinOrSame(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
