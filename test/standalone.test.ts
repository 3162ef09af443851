/**
 * The repository stands alone: what a user, a test or a benchmark needs is inside it. Nothing
 * in the tracked files reaches for the `shared/` folder beside a checkout except the optional
 * extras test/support/paths.ts names (and the tests that use them skip, saying why, when it is
 * absent), and every relative link of the README opens a file of the repository. `.ci/run`
 * also runs the tests that read inputs in a fresh clone with nothing beside it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./support/paths.js";

/** A path outside the repository into the folder beside it: `../shared`, `"..", "shared"`, `/work/shared`. */
const OUTSIDE = /\.\.\/shared\b|["']\.\.["']\s*,\s*["']shared["']|\/work\/shared\b/;

/**
 * The files allowed to name it, and why: the one definition of the optional extras, the
 * corpus README saying where the third-party corpus may sit, and this test.
 */
const ALLOWED = new Map([
  ["test/support/paths.ts", "defines EXTRA_CORPUS_DIR, the optional third-party corpus"],
  ["bench/corpus/README.md", "says where the optional third-party corpus may sit"],
  ["test/standalone.test.ts", "this check"],
]);

function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { cwd: repoRoot, encoding: "utf8" }).split("\0").filter((f) => f !== "");
}

/** The tracked text files a user, a test or a benchmark reads or runs. */
function inScope(file: string): boolean {
  if (file.startsWith("bench/corpus/scripted/")) return false; // generated sessions, checked byte for byte elsewhere
  return /^(src|test|bench|scripts|schema|tasks|\.ci)\//.test(file) || ["package.json", "README.md", "action.yml", "tsconfig.json"].includes(file);
}

test("no tracked file reaches for ../shared except the optional extras test/support/paths.ts names", (t) => {
  if (!existsSync(join(repoRoot, ".git"))) {
    t.skip("not a git checkout: the tracked files cannot be listed");
    return;
  }
  const files = trackedFiles().filter(inScope);
  assert.ok(files.length > 100, `found ${files.length} files`);
  const offenders: string[] = [];
  for (const file of files) {
    if (ALLOWED.has(file)) continue;
    const path = join(repoRoot, file);
    if (!existsSync(path)) continue; // deleted in the working tree
    const text = readFileSync(path, "utf8");
    text.split("\n").forEach((line, i) => {
      if (OUTSIDE.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(offenders, [], "these lines read outside the repository; put what they need in it, or make it an optional extra in test/support/paths.ts");
});

test("every relative link of the README opens a file of the repository, and it names no DESIGN.md the repository lacks", () => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const broken: string[] = [];
  for (const m of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!.split("#")[0]!;
    if (target === "" || /^[a-z]+:/i.test(target)) continue;
    const path = normalize(join(repoRoot, target));
    if (!path.startsWith(repoRoot + "/") || !existsSync(path)) broken.push(m[1]!);
  }
  assert.deepEqual(broken, [], "README links to files the repository does not hold");
  if (/\bDESIGN\.md\b/.test(readme)) assert.ok(existsSync(join(repoRoot, "DESIGN.md")), "README names DESIGN.md, which the repository does not hold");
});
