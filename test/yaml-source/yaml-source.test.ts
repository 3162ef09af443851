/**
 * yaml-source: every value, key, syntax error, alias and schema issue is located at the
 * line:column of the node it is about, and a located message reads `file:line:column: message`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { formatLocatedMessage, parseYamlSource, valueAtPath } from "../../src/yaml-source/yaml-source.js";

const NESTED = "name: x\nlimits:\n  steps: 3\n  timeout: 10m\nlist:\n  - a\n  - { k: v }\n";

test("locates a value at a path, down to list items and keys inside them", () => {
  const yaml = parseYamlSource(NESTED);
  assert.deepEqual(yaml.locateValue(["name"]), { line: 1, column: 7 });
  assert.deepEqual(yaml.locateValue(["limits", "timeout"]), { line: 4, column: 12 });
  assert.deepEqual(yaml.locateValue(["list", 1, "k"]), { line: 7, column: 10 });
});

test("a path that leaves the document is located at its nearest ancestor that exists", () => {
  const yaml = parseYamlSource(NESTED);
  assert.deepEqual(yaml.locateValue(["limits", "missing", "deeper"]), { line: 3, column: 3 });
  assert.deepEqual(yaml.locateValue(["nowhere"]), { line: 1, column: 1 });
  assert.deepEqual(parseYamlSource("").locateValue(["a"]), { line: 1, column: 1 });
});

test("locates a key itself, or the mapping when the key is not there", () => {
  const yaml = parseYamlSource(NESTED);
  assert.deepEqual(yaml.locateKey(["limits"], "timeout"), { line: 4, column: 3 });
  assert.deepEqual(yaml.locateKey([], "list"), { line: 5, column: 1 });
  assert.deepEqual(yaml.locateKey(["limits"], "absent"), { line: 3, column: 3 });
});

test("a zod issue is located at its first unknown key, or at the value its path names", () => {
  const schema = z.strictObject({
    name: z.string(),
    limits: z.strictObject({ steps: z.number(), timeout: z.number() }),
    list: z.array(z.unknown()),
  });
  const yaml = parseYamlSource("name: x\nlimits:\n  steps: 3\n  timeout: 10m\n  extra: 1\n  more: 2\nlist: []\n");
  const value = yaml.toValue({ maxAliasCount: 10 });
  assert.ok(value.ok);
  const result = schema.safeParse(value.value);
  assert.ok(!result.success);
  const located = result.error.issues.map((issue) => [issue.code, yaml.locateIssue(issue)]);
  assert.deepEqual(located, [
    ["invalid_type", { line: 4, column: 12 }],
    ["unrecognized_keys", { line: 5, column: 3 }],
  ]);
});

test("syntax errors are located and keep yaml's message, without its pretty context", () => {
  const yaml = parseYamlSource("a: 1\na: 2\nb:\n\t- x\n");
  assert.deepEqual(yaml.syntaxProblems, [
    { line: 2, column: 1, message: "Map keys must be unique" },
    { line: 4, column: 1, message: "Tabs are not allowed as indentation" },
  ]);
  assert.deepEqual(parseYamlSource("a: [1, 2]\n").syntaxProblems, []);
});

test("an unclosed quote is reported where it opens, not at the end of the file", () => {
  const yaml = parseYamlSource("id: x\nprompt: 'unclosed\nmore: text\n\n");
  assert.deepEqual(yaml.syntaxProblems, [
    { line: 2, column: 9, message: "unclosed quote: the string opened here runs to the end of the file" },
  ]);
});

test("an alias that names no anchor is located at the alias, inside a list too", () => {
  const yaml = parseYamlSource("a: &ok 1\nb: *ok\nc: [1, *nope]\n");
  const value = yaml.toValue({ maxAliasCount: 10 });
  assert.ok(!value.ok);
  assert.deepEqual({ line: value.problem.line, column: value.problem.column }, { line: 3, column: 8 });
  assert.match(value.problem.message, /Unresolved alias/);
});

test("too many alias expansions is a problem located at the first alias", () => {
  const yaml = parseYamlSource("a: &a [x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n");
  const value = yaml.toValue({ maxAliasCount: 2 });
  assert.ok(!value.ok);
  assert.deepEqual({ line: value.problem.line, column: value.problem.column }, { line: 2, column: 8 });
  assert.match(value.problem.message, /alias/i);
  assert.deepEqual(yaml.toValue({ maxAliasCount: 100 }), {
    ok: true,
    value: { a: ["x", "x"], b: [["x", "x"], ["x", "x"], ["x", "x"]], c: Array.from({ length: 3 }, () => Array.from({ length: 3 }, () => ["x", "x"])) },
  });
});

test("the root's kind: empty (nothing, comments, ~), mapping, list or scalar", () => {
  const kinds = ["", "# only a comment\n", "~\n", "a: 1\n", "- a\n", "just text\n"].map((text) => parseYamlSource(text).rootKind);
  assert.deepEqual(kinds, ["empty", "empty", "empty", "mapping", "list", "scalar"]);
});

test("UTF-8 bytes with a byte-order mark are read, and the mark shifts no column", () => {
  const yaml = parseYamlSource(Buffer.from("\uFEFFkey: value\n", "utf8"));
  assert.deepEqual(yaml.toValue({ maxAliasCount: 1 }), { ok: true, value: { key: "value" } });
  assert.deepEqual(yaml.locateValue(["key"]), { line: 1, column: 6 });
});

test("a located message names file:line:column, or only the file when there is no place", () => {
  assert.equal(formatLocatedMessage("/t/a.yaml", { line: 3, column: 7 }, "prompt: required"), "/t/a.yaml:3:7: prompt: required");
  assert.equal(formatLocatedMessage("/t/a.yaml", undefined, "cannot read"), "/t/a.yaml: cannot read");
});

test("valueAtPath walks plain data and is undefined where the path leaves it", () => {
  const data = { a: { b: [10, { c: null }] } };
  assert.equal(valueAtPath(data, ["a", "b", 0]), 10);
  assert.equal(valueAtPath(data, ["a", "b", 1, "c"]), null);
  assert.equal(valueAtPath(data, ["a", "b", 0, "x"]), undefined);
  assert.equal(valueAtPath(data, ["z", "y"]), undefined);
  assert.deepEqual(valueAtPath(data, []), data);
});
