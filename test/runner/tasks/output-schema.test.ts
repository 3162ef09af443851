/**
 * A task's `output.schema` at load (output-schema.ts through loadTaskFile): every bad path and
 * every bad schema is a TaskFileError located at `output.schema` in the task file; a good one is
 * read, and its content (not its path) is in the content hash.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { TaskFileError, loadTaskFile } from "../../../src/runner/tasks/task-file.js";
import { outputSchemaProblem } from "../../../src/runner/tasks/output-schema.js";
import { tempDir } from "../../support/temp-dir.js";

const GOOD = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };

async function taskWith(dir: string, output: string): Promise<string> {
  const file = join(dir, "suite", "t.yaml");
  await mkdir(join(dir, "suite"), { recursive: true });
  await writeFile(file, `prompt: Answer.\noutput:\n  repairs: 1\n  schema: ${output}\n`);
  return file;
}

async function loadProblem(file: string): Promise<{ line: number; field: string; message: string }> {
  const err = await loadTaskFile(file).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof TaskFileError, `expected a TaskFileError, got ${String(err)}`);
  return { line: err.line, field: err.field, message: err.message };
}

test("a bad output.schema path or file is a located error at output.schema: empty, '.', a folder, a FIFO, missing, not JSON, not an object, not JSON Schema, not an object schema", async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, "suite", "folder"), { recursive: true });
  execFileSync("mkfifo", [join(dir, "suite", "pipe.json")]);
  await writeFile(join(dir, "suite", "broken.json"), "{ not json");
  await writeFile(join(dir, "suite", "list.json"), "[1, 2]");
  await writeFile(join(dir, "suite", "bad-schema.json"), JSON.stringify({ type: "object", properties: { a: { type: "colour" } } }));
  await writeFile(join(dir, "suite", "string.json"), JSON.stringify({ type: "string" }));
  const cases: [string, RegExp][] = [
    ['""', /output\.schema \(a JSON Schema file path\) is empty|expected output\.schema/],
    [".", /not a file but a folder/],
    ["folder", /not a file but a folder: .*folder/],
    ["pipe.json", /pipe\.json is a FIFO, not a regular file/],
    ["missing.json", /schema file not found: .*missing\.json/],
    ["broken.json", /not JSON: .*broken\.json/],
    ["list.json", /a JSON Schema is an object, but the file holds a list/],
    ["bad-schema.json", /not valid JSON Schema.*bad-schema\.json/],
    ["string.json", /must describe an object \(type: object\), got type "string"/],
    ["{ type: object, properties: { a: { type: colour } } }", /not valid JSON Schema/],
    ["42", /expected output\.schema as a JSON Schema file path or an inline JSON Schema object/],
  ];
  for (const [schema, message] of cases) {
    const file = await taskWith(dir, schema);
    const problem = await loadProblem(file);
    assert.deepEqual([problem.line, problem.field], [4, "output.schema"], `${schema}: ${problem.message}`);
    assert.match(problem.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:4:`), schema);
    assert.match(problem.message, message, schema);
  }
});

test("output.schema's other paths: a device node and a missing parent are located errors; a link to a schema elsewhere and a name of spaces and unicode are read", async (t) => {
  const dir = await tempDir(t);
  const elsewhere = await tempDir(t);
  await mkdir(join(dir, "suite"), { recursive: true });
  await writeFile(join(elsewhere, "shared.json"), JSON.stringify(GOOD));
  await symlink(join(elsewhere, "shared.json"), join(dir, "suite", "linked.json"));
  await writeFile(join(dir, "suite", "an answer — schéma.json"), JSON.stringify(GOOD));
  const bad: [string, RegExp][] = [["no/such/parent.json", /schema file not found: .*no\/such\/parent\.json/]];
  // A device node (made here, never under /dev) needs root to make.
  if (process.getuid?.() === 0) {
    execFileSync("mknod", [join(dir, "suite", "null.json"), "c", "1", "3"]);
    bad.push(["null.json", /null\.json is a device, not a regular file: nothing was read from it/]);
  } else t.diagnostic("not root: the device-node case needs mknod");
  for (const [schema, message] of bad) {
    const problem = await loadProblem(await taskWith(dir, schema));
    assert.deepEqual([problem.line, problem.field], [4, "output.schema"], `${schema}: ${problem.message}`);
    assert.match(problem.message, message, schema);
  }
  for (const schema of ["linked.json", '"an answer — schéma.json"']) {
    const task = await loadTaskFile(await taskWith(dir, schema));
    assert.deepEqual(task.output?.schema, GOOD, schema);
  }
});

test("output.repairs is a whole number from 0 to 10, located", async (t) => {
  const dir = await tempDir(t);
  for (const [repairs, message] of [["-1", /cannot be negative/], ["1.5", /whole number/], ["11", /at most 10/]] as const) {
    const file = join(dir, "t.yaml");
    await writeFile(file, `prompt: Answer.\noutput: { schema: { type: object }, repairs: ${repairs} }\n`);
    const problem = await loadProblem(file);
    assert.equal(problem.field, "output.repairs");
    assert.match(problem.message, message);
  }
});

test("a schema file is read into the task, repairs default to 2, and its content (not its path) is in the content hash", async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, "suite"), { recursive: true });
  await writeFile(join(dir, "suite", "a.json"), JSON.stringify(GOOD));
  await writeFile(join(dir, "suite", "b.json"), JSON.stringify(GOOD));
  const file = join(dir, "suite", "t.yaml");
  await writeFile(file, "prompt: Answer.\noutput: { schema: a.json }\n");
  const first = await loadTaskFile(file);
  assert.deepEqual(first.output, { schema: GOOD, schemaFile: join(dir, "suite", "a.json"), repairs: 2 });
  await writeFile(file, "prompt: Answer.\noutput: { schema: b.json }\n");
  assert.equal((await loadTaskFile(file)).contentHash, first.contentHash, "the same schema in another file is the same task");
  await writeFile(join(dir, "suite", "b.json"), JSON.stringify({ ...GOOD, required: [] }));
  assert.notEqual((await loadTaskFile(file)).contentHash, first.contentHash, "an edited schema is a changed task");
  await writeFile(file, `prompt: Answer.\noutput: { schema: ${JSON.stringify(GOOD)} }\n`);
  assert.deepEqual((await loadTaskFile(file)).output, { schema: GOOD, schemaFile: null, repairs: 2 });
});

test("outputSchemaProblem: a draft-07 schema is read as draft-07; an unknown $schema is refused", () => {
  assert.equal(outputSchemaProblem({ $schema: "http://json-schema.org/draft-07/schema#", type: "object" }), null);
  assert.match(outputSchemaProblem({ $schema: "https://example.com/x", type: "object" }) ?? "", /not one rhema reads/);
});
