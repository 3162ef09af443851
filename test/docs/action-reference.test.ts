/**
 * docs/action.md against action.yml, both ways: every input (required or not, its default) and
 * every output is a row of the page's tables, and no row names one action.yml lacks.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { repoRoot } from "../support/paths.js";
import { docTables, readDoc, unquote, type DocTable } from "../support/doc-tables.js";

interface ActionMeta {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, unknown>;
}

const meta = parse(readFileSync(join(repoRoot, "action.yml"), "utf8")) as ActionMeta;

function table(heading: string, first: string): DocTable {
  const found = docTables(readDoc("action.md")).filter((t) => t.heading === heading);
  assert.equal(found.length, 1, `docs/action.md has one table under "## ${heading}"`);
  assert.equal(found[0]!.header[0], first);
  return found[0]!;
}

function names(rows: string[][]): string[] {
  return rows.map((row) => unquote(row[0]!));
}

function difference(declared: string[], documented: string[]): { missing: string[]; extra: string[] } {
  return { missing: declared.filter((n) => !documented.includes(n)), extra: documented.filter((n) => !declared.includes(n)) };
}

test("docs/action.md lists every input action.yml declares, with its default and whether it is required, and no other", () => {
  const inputs = table("Inputs", "input");
  assert.deepEqual(inputs.header.slice(1, 3), ["required", "default"]);
  assert.deepEqual(difference(Object.keys(meta.inputs), names(inputs.rows)), { missing: [], extra: [] });
  for (const row of inputs.rows) {
    const name = unquote(row[0]!);
    const declared = meta.inputs[name]!;
    assert.deepEqual(
      { required: row[1], default: unquote(row[2]!) },
      { required: declared.required === true ? "yes" : "no", default: declared.default === undefined ? "—" : String(declared.default) },
      `input ${name}`,
    );
    assert.ok((row.at(-1) ?? "").length > 0, `input ${name} has a description`);
  }
});

test("docs/action.md lists every output action.yml declares, and no other", () => {
  const outputs = table("Outputs", "output");
  assert.deepEqual(difference(Object.keys(meta.outputs), names(outputs.rows)), { missing: [], extra: [] });
  for (const row of outputs.rows) assert.ok((row[1] ?? "").length > 0, `output ${row[0]} has a description`);
});
