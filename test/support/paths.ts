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
/** The read-only shared folder beside the checkout. */
export const sharedDir = resolve(repoRoot, "..", "shared");
