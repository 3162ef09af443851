/**
 * docs/design.md is the contract, so the parts of it the code can say are checked against the
 * code: its layer table is the architecture checker's (who may import whom), so are its room
 * tables (the sub-folders of runner/ and policy/), and its exit-code table places every error
 * code of src/core/errors.ts under the exit code the CLI gives it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type ErrorCode } from "../../src/core/errors.js";
import { exitCodeFor } from "../../src/cli/exit-codes.js";
import { MAY_IMPORT, type Layer } from "../support/check-architecture.js";
import { readDoc, tableRows } from "../support/doc-blocks.js";
import { docTables } from "../support/doc-tables.js";
import { ROOMS } from "../support/rooms.js";
import { repoRoot } from "../support/paths.js";

const design = readDoc("docs/design.md");

function section(title: string): string[] {
  const start = design.indexOf(`\n## ${title}`);
  assert.ok(start >= 0, `docs/design.md has a section "${title}"`);
  const rest = design.slice(start + 1).split("\n");
  const end = rest.findIndex((l, i) => i > 0 && l.startsWith("## "));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The code spans of a table cell, e.g. "`cli`, `action` — the edges" → ["cli", "action"]. */
const spans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

test("the layer table of docs/design.md is the one test/architecture.test.ts enforces", () => {
  const documented = new Map<string, string[]>();
  for (const [layerCell = "", , importsCell = ""] of tableRows(section("2. Layers: who may import whom"))) {
    const layers = spans(layerCell).filter((l) => l in MAY_IMPORT);
    const imports = /every layer and index/.test(importsCell)
      ? [...Object.keys(MAY_IMPORT).filter((l) => !["index", "cli", "action"].includes(l)), "index"]
      : /every layer but the edges/.test(importsCell)
        ? Object.keys(MAY_IMPORT).filter((l) => !["index", "cli", "action"].includes(l))
        : importsCell.split(",").map((s) => s.trim()).filter((s) => s !== "—" && s !== "");
    for (const layer of layers) documented.set(layer, imports.sort());
  }
  const enforced = new Map(Object.entries(MAY_IMPORT).map(([layer, may]) => [layer, [...may].sort()]));
  assert.deepEqual(Object.fromEntries(documented), Object.fromEntries(enforced));
  assert.equal((Object.keys(MAY_IMPORT) as Layer[]).length, documented.size);
});

test("the room tables of docs/design.md are the ones test/architecture.test.ts enforces", () => {
  const documented: Record<string, Record<string, string[]>> = {};
  for (const table of docTables(design)) {
    const layer = /^room of `([a-z-]+)\/`$/.exec(table.header[0] ?? "")?.[1];
    if (layer === undefined) continue;
    const rooms = table.rows.map(([roomCell = ""]) => spans(roomCell)[0]!.replace(/\/$/, ""));
    documented[layer] = Object.fromEntries(table.rows.map(([, , importsCell = ""], i) => {
      const room = rooms[i]!;
      const imports = importsCell === "every room" ? rooms.filter((r) => r !== room) : spans(importsCell).map((r) => r.replace(/\/$/, ""));
      return [room, imports.sort()];
    }));
  }
  const enforced = Object.fromEntries(Object.entries(ROOMS).map(([layer, rooms]) =>
    [layer, Object.fromEntries(Object.entries(rooms).map(([room, may]) => [room, [...may].sort()]))]));
  assert.deepEqual(documented, enforced);
});

test("the exit-code table of docs/design.md places every error code where the CLI does", () => {
  const source = readFileSync(join(repoRoot, "src", "core", "errors.ts"), "utf8");
  const union = /export type ErrorCode =([\s\S]*?)";\n/.exec(source.replace(/^\s*\/\/.*$/gm, ""))?.[1] + "\"";
  const codes = [...union.matchAll(/\|\s*"([a-z_]+)"/g)].map((m) => m[1]! as ErrorCode);
  assert.ok(codes.length > 20, `read ${codes.length} error codes`);
  const documented = new Map<string, number>();
  for (const [exit = "", , codesCell = ""] of tableRows(section("5. Errors and exit codes"))) {
    for (const code of spans(codesCell)) documented.set(code, Number(exit));
  }
  const misplaced = codes.filter((code) => documented.get(code) !== exitCodeFor(code)).map((code) => `${code}: doc ${documented.get(code)}, code ${exitCodeFor(code)}`);
  assert.deepEqual(misplaced, []);
});
