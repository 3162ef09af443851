/**
 * The user docs as a test reads them: the Markdown files (README.md and docs/*.md), their fenced
 * blocks with the info string's language and marks (```sh runnable exit=1), the table that
 * follows a block, and their relative links. Pure reading: the doc tests decide what to check.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

/** README.md and every docs/*.md, as paths relative to the repository root. */
export function docFiles(): string[] {
  const docs = readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

export function readDoc(file: string): string {
  return readFileSync(join(repoRoot, file), "utf8");
}

export interface FencedBlock {
  /** The doc, relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word: `sh`, `yaml`, …; "" for none. */
  lang: string;
  /** The info string's other words: `runnable`, `exit=1`, `cookbook`, `synopsis`. */
  marks: string[];
  body: string;
  /** The lines after the closing fence, up to the next fence or heading. */
  after: string[];
}

/** Every fenced block of `text` (``` fences; a block is never nested). */
export function fencedBlocks(file: string, text: string): FencedBlock[] {
  const lines = text.split("\n");
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (open === null) continue;
    const [lang = "", ...marks] = open[1]!.trim().split(/\s+/).filter((w) => w !== "");
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: a fenced block is never closed`);
    const rest = lines.slice(end + 1);
    const stop = rest.findIndex((l) => l.startsWith("```") || l.startsWith("#"));
    blocks.push({ file, line: i + 1, lang, marks, body: lines.slice(i + 1, end).join("\n"), after: stop < 0 ? rest : rest.slice(0, stop) });
    i = end;
  }
  return blocks;
}

/** The value of a `name=value` mark, or undefined. */
export function markValue(block: FencedBlock, name: string): string | undefined {
  const mark = block.marks.find((m) => m.startsWith(`${name}=`));
  return mark?.slice(name.length + 1);
}

/** The rows of the first Markdown table in `lines` (header and rule left out), cells trimmed. */
export function tableRows(lines: readonly string[]): string[][] {
  const start = lines.findIndex((l) => l.startsWith("|"));
  if (start < 0) return [];
  const table = lines.slice(start);
  const end = table.findIndex((l) => !l.startsWith("|"));
  return (end < 0 ? table : table.slice(0, end)).slice(2).map((row) => row.slice(1, row.endsWith("|") ? -1 : undefined).split("|").map((c) => c.trim()));
}

/** Every `](target)` link of `text` whose target is not a URL or an in-page anchor. */
export function relativeLinks(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (target.startsWith("#") || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    out.push(target);
  }
  return out;
}
