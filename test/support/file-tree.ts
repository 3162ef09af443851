/** Trees of files in temp folders as git-based tests need them: listed without following links, aged, and a git of no one's config. */
import { lutimes, readdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * Every path under `dir` (files, links and folders), relative and sorted; a link is not followed.
 * (Node 20's `readdir` with `recursive` and no `withFileTypes` follows links: one to `/proc/self` never ends.)
 */
export async function treeEntries(dir: string, under = ""): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(dir, under), { withFileTypes: true })) {
    const rel = join(under, entry.name);
    found.push(rel);
    if (entry.isDirectory()) found.push(...(await treeEntries(dir, rel)));
  }
  return found.sort();
}

/** Every entry under `dir` an hour old: none is racily clean in an index written now (git would hash it again, and store it). */
export async function ageTree(dir: string): Promise<void> {
  const then = new Date(Date.now() - 3_600_000);
  for (const rel of await treeEntries(dir)) await lutimes(join(dir, rel), then, then);
}

/** The environment of a git that reads no config of the machine's and commits as a fixed author. */
export const GIT_TEST_ENV = {
  PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "a", GIT_AUTHOR_EMAIL: "a@b", GIT_COMMITTER_NAME: "a", GIT_COMMITTER_EMAIL: "a@b",
};
