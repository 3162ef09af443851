/**
 * docs/reports.md against the published schemas, both ways: every field of result.json, of
 * stats.json (top level, aggregate, task rows) and of the transcript stats has a row, and no row
 * names a field the schema lacks; the --json tables list exactly the line and event types of
 * schema/events.schema.json, each with its fields. (JUnit properties are checked against real
 * runs in events-schema.e2e.test.ts.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support/paths.js";
import { docTables, readDoc, unquote } from "../support/doc-tables.js";

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  type?: string | string[];
  oneOf?: { $ref: string }[];
  $defs?: Record<string, JsonSchema>;
  const?: string;
}

const readSchema = (name: string) => JSON.parse(readFileSync(join(repoRoot, "schema", name), "utf8")) as JsonSchema;
/** An object schema, out of a nullable `anyOf`. */
const objectOf = (s: JsonSchema): JsonSchema => s.properties ? s : s.anyOf!.find((a) => a.properties)!;
const keys = (s: JsonSchema) => Object.keys(objectOf(s).properties!);

const tables = docTables(readDoc("reports.md"));
function column(heading: string): string[] {
  const table = tables.find((t) => t.heading === heading);
  assert.ok(table, `docs/reports.md has a table under "${heading}"`);
  return table.rows.map((row) => unquote(row[0]!));
}

function sameSet(documented: string[], declared: string[], what: string): void {
  const missing = declared.filter((k) => !documented.includes(k));
  const extra = documented.filter((k) => !declared.includes(k));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, `${what}: fields missing from docs/reports.md, or listed there but not in the schema`);
}

test("result.json and its transcript stats: every field documented, no other", () => {
  const result = readSchema("result.schema.json");
  sameSet(column("result.json"), keys(result), "result.json");
  sameSet(column("Transcript stats"), keys(result.properties!.stats!), "transcript stats");
});

test("stats.json: every field of the top level, the aggregates and the task rows documented, no other", () => {
  const stats = readSchema("stats.schema.json");
  sameSet(column("stats.json: top level"), keys(stats), "stats.json");
  const aggregate = [...new Set([...keys(stats.properties!.total!), ...keys(stats.properties!.suites!.items!)])];
  sameSet(column("stats.json: aggregate"), aggregate, "stats.json total / suites[]");
  sameSet(column("stats.json: tasks"), keys(stats.properties!.tasks!.items!), "stats.json tasks[]");
  sameSet(column("stats.json: taskTrials"), keys(stats.properties!.taskTrials!.items!), "stats.json taskTrials[]");
  sameSet(column("stats.json: trials"), keys(stats.properties!.total!.properties!.trials!), "stats.json total.trials");
});

test("report compare's JSON: every field of the top level, the rows and the figures documented, no other", () => {
  const compare = readSchema("compare.schema.json");
  sameSet(column("compare JSON: top level"), keys(compare), "compare JSON");
  const row = compare.properties!.rows!.items!;
  sameSet(column("compare JSON: rows"), keys(row), "compare JSON rows[]");
  sameSet(column("compare JSON: figures"), keys(row.properties!.base!), "compare JSON rows[].base");
  const cells = compare.properties!.cells!;
  const cellsArray = cells.items ? cells : cells.anyOf!.find((a) => a.items)!;
  sameSet(column("compare JSON: cells"), keys(cellsArray.items!), "compare JSON cells[]");
});

test("the --json tables list exactly the schema's line and event types, each with its fields", () => {
  const events = readSchema("events.schema.json");
  const def = (ref: string) => events.$defs![ref.replace("#/$defs/", "")]!;
  // A row's fields: the code spans of its second cell outside parentheses (which say what a field holds).
  const fieldsOf = (cell: string) => [...cell.replace(/\([^)]*\)/g, "").matchAll(/`(\w+)`/g)].map((m) => m[1]!);
  const check = (heading: string, refs: { $ref: string }[]) => {
    const table = tables.find((t) => t.header[0] === heading);
    assert.ok(table, heading);
    const documented = new Map(table.rows.map((row) => [unquote(row[0]!), fieldsOf(row[1]!)]));
    const declared = new Map(refs.map((r) => {
      const d = def(r.$ref);
      return [d.properties!.type!.const!, Object.keys(d.properties!).filter((k) => k !== "type")];
    }));
    sameSet([...documented.keys()], [...declared.keys()], `${heading}: types`);
    for (const [type, fields] of declared) sameSet(documented.get(type)!, fields, `${heading}: ${type}`);
  };
  check("line `type`", events.oneOf!);
  const taskEvent = events.oneOf!.map((r) => def(r.$ref)).find((d) => d.properties!.type!.const === "task_event")!;
  check("event `type`", taskEvent.properties!.event!.oneOf!);
});
