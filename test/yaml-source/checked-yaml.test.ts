/** checkYamlFile: every problem of a small YAML input file located at its field, in file order. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { checkYamlFile } from "../../src/yaml-source/checked-yaml.js";
import { formatFieldProblems, valueAtPath } from "../../src/yaml-source/yaml-source.js";

const schema = z.strictObject({ version: z.literal(1), items: z.array(z.strictObject({ name: z.string(), size: z.number() })) });
const rules = { schema, what: "the thing file", needs: "version: 1 and items" };

function problems(text: string | Uint8Array, extra: Partial<Parameters<typeof checkYamlFile>[2]> = {}): string {
  const checked = checkYamlFile(text, "t.yaml", { ...rules, ...extra });
  assert.equal(checked.ok, false, "expected problems");
  return checked.ok ? "" : formatFieldProblems(checked.problems);
}

test("a valid file gives its value and the parsed source", () => {
  const checked = checkYamlFile("version: 1\nitems:\n  - { name: a, size: 2 }\n", "t.yaml", rules);
  assert.ok(checked.ok);
  assert.deepEqual(checked.value, { version: 1, items: [{ name: "a", size: 2 }] });
  assert.deepEqual(checked.yaml.locateValue(["items", 0]), { line: 3, column: 5 });
});

test("bytes that are not UTF-8, YAML syntax, an empty file and a top level that is no mapping each say so at their place", () => {
  assert.match(problems(Uint8Array.from([0x76, 0x3a, 0x20, 0xff, 0x0a])), /^t\.yaml:1:4: /);
  assert.match(problems("version: [1\n"), /^t\.yaml:\d+:\d+: yaml: /);
  assert.equal(problems("# nothing\n"), "t.yaml:1:1: (root): the thing file is empty: it needs version: 1 and items");
  assert.equal(problems("- a\n- b\n"), "t.yaml:1:1: (root): the thing file is not a mapping at its top level: it needs version: 1 and items");
});

test("unknown keys get a did-you-mean, a missing key is said at the mapping lacking it, all in file order", () => {
  assert.equal(problems("version: 1\nitems:\n  - { name: a, sise: 2 }\n  - { size: 3 }\nextra: x\n"), [
    "t.yaml:3:16: items.0: unknown key `sise`; did you mean `size`?",
    "t.yaml:4:5: items.1: missing key `name`",
    "t.yaml:5:1: (root): unknown key `extra`",
  ].join("\n"));
});

test("a file's own describer reads the issues it knows and leaves the rest to the default", () => {
  const text = "version: 1\nitems:\n  - { name: 7, size: 1 }\n  - { size: 3 }\n";
  const own = problems(text, { describeIssue: (issue, value) => (valueAtPath(value, issue.path) === 7 ? { field: "here", message: "a name is text" } : null) });
  assert.match(own, /^t\.yaml:3:\d+: here: a name is text\n/);
  assert.match(own, /\nt\.yaml:4:5: items\.1: missing key `name`$/);
});
