/**
 * Counts read "1 task", "2 tasks": no line rhema shows says `N task(s)`. Every source file is
 * read for a template that interpolates a count before a noun written with `(s)` (the class, not
 * the lines known today), and `counted` is checked for its one rule.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { counted } from "../src/core/counted.js";
import { repoRoot } from "./support/paths.js";

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

test("no source template counts with a plural-only noun: `${n} task(s)`", async () => {
  const found: string[] = [];
  for (const file of await sourceFiles(join(repoRoot, "src"))) {
    const lines = (await readFile(file, "utf8")).split("\n");
    lines.forEach((line, k) => {
      // `${…} task(s)`, `${…} tool call(s)`, `${…} re-run(s)`: a count, then a noun with (s).
      if (/\$\{[^}]+\}\)? [\w -]*\w\(s\)/.test(line) || /\$\{[^}]+\}\(s\)/.test(line)) found.push(`${relative(repoRoot, file)}:${k + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], `write these with counted(n, "noun"):\n${found.join("\n")}`);
});

test("counted: the singular for exactly one, the plural otherwise", () => {
  assert.equal(counted(1, "task"), "1 task");
  assert.equal(counted(0, "task"), "0 tasks");
  assert.equal(counted(2, "step"), "2 steps");
  assert.equal(counted(1, "policy", "policies"), "1 policy");
  assert.equal(counted(3, "policy", "policies"), "3 policies");
});
