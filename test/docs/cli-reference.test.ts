/**
 * docs/cli.md against the yargs definitions the CLI is built from, both ways: every option of
 * every command (name, type, default or `required`, choices) is a row of that command's table,
 * and no table names an option the command lacks; every command has its table, and every exit
 * code is listed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import yargs from "yargs";
import { COMMAND_LINES, commandOptionBuilders, type CommandName } from "../../src/cli/main.js";
import { EXIT_CANNOT_CONTINUE, EXIT_INTERRUPTED, EXIT_INVALID_INPUT, EXIT_OK, EXIT_TASK_FAILED } from "../../src/cli/exit-codes.js";
import { docTables, readDoc, unquote, type DocTable } from "../support/doc-tables.js";
import { runCli } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";

/** One option as the docs' table row shows it. */
interface OptionRow {
  type: string;
  default: string;
  choices: string;
}

/** yargs's own options, on every command: listed once, under "Global options". */
const GLOBAL = ["help", "version"];

/** The declarations yargs keeps (its `getOptions()`, which its typings leave out). */
interface YargsOptions {
  key: Record<string, unknown>;
  boolean: string[];
  number: string[];
  array: string[];
  default: Record<string, unknown>;
  choices: Record<string, unknown[] | undefined>;
  demandedOptions: Record<string, unknown>;
}

function optionsOf(y: unknown): YargsOptions {
  return (y as { getOptions(): YargsOptions }).getOptions();
}

/** What a yargs options builder declares, in the docs' terms, by flag (`--out`). */
function declaredOptions(command: CommandName, build: (y: ReturnType<typeof yargs>) => unknown): Map<string, OptionRow> {
  const y = yargs([]);
  build(y);
  const o = optionsOf(y);
  const positionals = [...COMMAND_LINES[command].matchAll(/[<[](\w+)/g)].map((m) => m[1]!);
  const rows = new Map<string, OptionRow>();
  for (const key of Object.keys(o.key)) {
    if (GLOBAL.includes(key) || positionals.includes(key)) continue;
    const base = o.boolean.includes(key) ? "boolean" : o.number.includes(key) ? "number" : "string";
    const value = o.default[key];
    rows.set(`--${key}`, {
      type: o.array.includes(key) ? `${base}[]` : base,
      default: key in o.demandedOptions ? "required" : value === undefined ? "—" : Array.isArray(value) ? JSON.stringify(value) : String(value),
      choices: o.choices[key]?.map(String).join(", ") ?? "—",
    });
  }
  return rows;
}

/** A table's option rows, by flag, in the same terms. */
function documentedOptions(table: DocTable): Map<string, OptionRow & { description: string }> {
  assert.deepEqual(table.header, ["flag", "type", "default", "choices", "description"], `the table under "${table.heading}" has the columns flag | type | default | choices | description`);
  const rows = new Map<string, OptionRow & { description: string }>();
  for (const [flag, type, def, choices, description] of table.rows) {
    const name = unquote(flag!);
    assert.ok(!rows.has(name), `"${table.heading}" lists ${name} twice`);
    rows.set(name, {
      type: type!, default: unquote(def!),
      choices: choices === "—" ? "—" : choices!.split(",").map((c) => unquote(c.trim())).join(", "),
      description: description ?? "",
    });
  }
  return rows;
}

function optionTables(): Map<string, DocTable> {
  const tables = new Map<string, DocTable>();
  for (const table of docTables(readDoc("cli.md"))) {
    if (table.header[0] !== "flag") continue;
    const name = table.heading === "The `rhema` command line" ? "global" : table.heading.replace(/^rhema /, "");
    assert.ok(!tables.has(name), `docs/cli.md has two option tables for "${name}"`);
    tables.set(name, table);
  }
  return tables;
}

test("docs/cli.md has one option table per command and no table for a command that does not exist", async () => {
  const builders = await commandOptionBuilders();
  assert.deepEqual([...optionTables().keys()].sort(), ["global", ...Object.keys(builders)].sort());
});

test("every option of every command is in docs/cli.md with its type, default and choices, and no other", async () => {
  const builders = await commandOptionBuilders();
  const tables = optionTables();
  for (const [command, build] of Object.entries(builders) as [CommandName, (y: ReturnType<typeof yargs>) => unknown][]) {
    const declared = declaredOptions(command, build);
    const documented = documentedOptions(tables.get(command)!);
    const missing = [...declared.keys()].filter((flag) => !documented.has(flag));
    const extra = [...documented.keys()].filter((flag) => !declared.has(flag));
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, `rhema ${command}: options missing from docs/cli.md, or listed there but not declared`);
    for (const [flag, row] of declared) {
      const doc = documented.get(flag)!;
      assert.deepEqual({ type: doc.type, default: doc.default, choices: doc.choices }, row, `rhema ${command} ${flag}`);
      assert.ok(doc.description.length > 0, `rhema ${command} ${flag} has a description`);
    }
  }
});

test("docs/cli.md's global options are yargs's own, on every command", () => {
  const documented = documentedOptions(optionTables().get("global")!);
  assert.deepEqual([...documented.keys()], GLOBAL.map((key) => `--${key}`));
  const keys = Object.keys(optionsOf(yargs([])).key);
  for (const key of GLOBAL) assert.ok(keys.includes(key), key);
});

test("docs/cli.md lists every exit code and no other", () => {
  const table = docTables(readDoc("cli.md")).find((t) => t.heading === "Exit codes");
  assert.ok(table, "an Exit codes table");
  const codes = table.rows.map((row) => Number(row[0]));
  assert.deepEqual(codes, [EXIT_OK, EXIT_TASK_FAILED, EXIT_INVALID_INPUT, EXIT_CANNOT_CONTINUE, EXIT_INTERRUPTED]);
});

test("the built CLI's commands, as its help lists them, are the commands docs/cli.md is checked against", async () => {
  const commandsIn = async (args: string[]) => {
    const help = await runCli([...args, "--help"], { cwd: repoRoot });
    assert.equal(help.code, 0, help.stderr);
    const section = help.stdout.split("\n\n").find((block) => block.startsWith("Commands:")) ?? "";
    return [...section.matchAll(/^\s+rhema ((?:\w+ )*\w+)/gm)].map((m) => m[1]!);
  };
  const names = Object.keys(COMMAND_LINES);
  const top = await commandsIn([]);
  assert.deepEqual(top, [...new Set(names.map((name) => name.split(" ")[0]!))]);
  for (const parent of top.filter((word) => !names.includes(word))) {
    assert.deepEqual(await commandsIn([parent]), names.filter((name) => name.startsWith(`${parent} `)), `rhema ${parent} --help`);
  }
});
