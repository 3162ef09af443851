/**
 * Every table in the README and docs/ has as many cells in each row as in its header: a row with
 * more or fewer cells renders shifted or cut (GitHub drops the excess), which a reader cannot see
 * from the source. A `|` inside a cell is written `\|`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";

/** The cells of a table row: split at the `|` not escaped, without the outer ones. */
function cells(row: string): number {
  return row.trim().replace(/\\\|/g, "").replace(/^\||\|$/g, "").split("|").length;
}

/** Each row whose cell count differs from its table's header: `file:line: n cells, header m`. */
function misshapenRows(file: string, text: string): string[] {
  const lines = text.split("\n");
  const out: string[] = [];
  let header: number | null = null;
  let inFence = false;
  lines.forEach((line, k) => {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence || !line.trimStart().startsWith("|")) {
      header = null;
      return;
    }
    if (header === null) {
      // A table starts with a header row followed by its delimiter row.
      if (/^\s*\|?\s*:?-{3,}/.test(lines[k + 1] ?? "")) header = cells(line);
      return;
    }
    const n = cells(line);
    if (n !== header) out.push(`${file}:${k + 1}: ${n} cells, its header ${header}`);
  });
  return out;
}

test("every row of every Markdown table in README.md and docs/ has its header's number of cells", async () => {
  const docs = (await readdir(join(repoRoot, "docs"))).filter((f) => f.endsWith(".md")).map((f) => join("docs", f));
  const bad: string[] = [];
  for (const file of ["README.md", ...docs]) bad.push(...misshapenRows(file, await readFile(join(repoRoot, file), "utf8")));
  assert.deepEqual(bad, []);
});
