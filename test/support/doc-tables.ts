/**
 * The tables of a Markdown reference page (docs/*.md), for the tests that check a page against
 * the code: each table under its nearest heading, each row as its cells (trimmed, `\|` unescaped).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

export interface DocTable {
  /** The nearest heading above the table, without its `#`s. */
  heading: string;
  header: string[];
  rows: string[][];
}

/** The text of a page under docs/. */
export function readDoc(name: string): string {
  return readFileSync(join(repoRoot, "docs", name), "utf8");
}

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** Every table of a Markdown text, outside fenced blocks. */
export function docTables(markdown: string): DocTable[] {
  const tables: DocTable[] = [];
  let heading = "";
  let fenced = false;
  let current: DocTable | null = null;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    const h = /^#+\s+(.*)$/.exec(line);
    if (h) heading = h[1]!.trim();
    if (!line.trim().startsWith("|")) {
      current = null;
      continue;
    }
    if (current === null) {
      current = { heading, header: cells(line), rows: [] };
      tables.push(current);
    } else if (!/^\|[\s|:-]+\|$/.test(line.trim())) {
      current.rows.push(cells(line));
    }
  }
  return tables;
}

/** A cell's code span (`` `x` `` → `x`), or the cell as written when it is not one. */
export function unquote(cell: string): string {
  const m = /^`([^`]*)`$/.exec(cell);
  return m ? m[1]! : cell;
}
