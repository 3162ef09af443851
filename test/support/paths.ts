/** Paths the tests need, whether they run from test/ (tsx) or dist/test/ (compiled). */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("test support: repository root not found");
    dir = parent;
  }
  return dir;
}

export const repoRoot = findRepoRoot();
/** The compiled output of a source module, e.g. `compiled("src/cli/main.js")`. */
export const compiled = (rel: string): string => join(repoRoot, "dist", rel);
/** The JUnit XML schemas reports are validated against (`schema/junit/`, in the repository). */
export const junitXsd = (name: "junit-10.xsd" | "junit-10-ext.xsd"): string => join(repoRoot, "schema", "junit", name);
/** The replay corpus generated from scripted rhema runs (`npm run bench:corpus`), in the repository. */
export const corpusDir = join(repoRoot, "bench", "corpus", "scripted");
/**
 * Optional extras outside the repository, never needed: the third-party replay corpus in a
 * `shared/` folder beside the checkout. A test that reads it skips, saying why, when it is absent
 * (`optionalExtra`); nothing else in test/, bench/ or scripts/ reaches outside the repository
 * (test/standalone.test.ts checks).
 */
export const EXTRA_CORPUS_DIR = resolve(repoRoot, "..", "shared", "corpus", "terminal-bench");

/** `path` when it exists, else the reason a test that needs it skips (printed by node:test). */
export function optionalExtra(path: string): { path: string } | { skip: string } {
  return existsSync(path) ? { path } : { skip: `optional extra ${path} is absent (only the in-repository inputs run)` };
}
