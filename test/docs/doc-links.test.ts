/**
 * The docs hold together: every relative link of README.md and docs/*.md opens a file of the
 * repository (resolved from the linking file's folder), and an anchor into a Markdown file names
 * one of its headings, and every repository file a doc names in code exists (examples of a user's files,
 * `src/add.js` in a cookbook table, are not the repository's: only its own kinds of file count).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { test } from "node:test";
import { docFiles, readDoc, relativeLinks } from "../support/doc-blocks.js";
import { repoRoot } from "../support/paths.js";

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function anchorsIn(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...withoutCode.matchAll(/^#{1,6}\s+(.*)$/gm)].map((m) => anchorOf(m[1]!)));
}

test("every doc is linked from the README", () => {
  const readme = readDoc("README.md");
  const unlinked = docFiles().filter((f) => f !== "README.md" && !readme.includes(`](${f})`) && !readme.includes(`](${f}#`));
  assert.deepEqual(unlinked, [], "the README is the front page: link each doc from it");
});

test("every relative link in README.md and docs/*.md opens a file of the repository, and its anchor a heading", () => {
  const broken: string[] = [];
  for (const file of docFiles()) {
    for (const link of relativeLinks(readDoc(file))) {
      const [target = "", anchor] = link.split("#");
      const path = target === "" ? join(repoRoot, file) : normalize(join(repoRoot, dirname(file), target));
      if (!path.startsWith(repoRoot + "/") || !existsSync(path)) {
        broken.push(`${file}: ${link} (no such file)`);
        continue;
      }
      if (anchor !== undefined && path.endsWith(".md") && !anchorsIn(readFileSync(path, "utf8")).has(anchor)) broken.push(`${file}: ${link} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test("in-page anchors name a heading of the same page", () => {
  const broken: string[] = [];
  for (const file of docFiles()) {
    const text = readDoc(file);
    const anchors = anchorsIn(text);
    for (const m of text.matchAll(/\]\(#([^)\s]+)\)/g)) if (!anchors.has(m[1]!)) broken.push(`${file}: #${m[1]}`);
  }
  assert.deepEqual(broken, []);
});

test("every repository file a doc names in code (`src/….ts`, `test/….ts`, `schema/….json`, `bench/…/`, …) exists", () => {
  const missing: string[] = [];
  for (const file of docFiles()) {
    for (const m of readDoc(file).matchAll(/`((?:src|test|schema|bench|scripts)\/(?:[\w./-]+\.(?:ts|mjs|json|xsd|svg|md|sh)|[\w./-]+\/))`/g)) {
      if (!existsSync(join(repoRoot, m[1]!))) missing.push(`${file}: ${m[1]}`);
    }
  }
  assert.deepEqual(missing, []);
});
