/**
 * The words for each kind of schema failure (src/core/tool-input-errors.ts), through real ajv
 * validators: what was expected, what was got, branch noise said once, long lists cut.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SchemaCompiler, compileInputChecks } from "../../../src/core/tool-input/tool-input-check.js";
import { closestName } from "../../../src/core/tool-input/tool-input-errors.js";

const compiler = new SchemaCompiler();

function messageFor(properties: Record<string, unknown>, input: unknown, extra: Record<string, unknown> = {}): string {
  const checks = compileInputChecks([{ name: "t", description: "", inputSchema: { type: "object", properties, ...extra } }], { compiler });
  const checked = checks.check("t", input);
  assert.equal(checked.ok, false, "expected the input to be refused");
  return (checked as { message: string }).message.replace("Invalid input for `t`: ", "");
}

test("each keyword says what was expected and what was got", () => {
  const cases: Array<[Record<string, unknown>, unknown, string]> = [
    [{ mode: { const: "fast" } }, { mode: "slow" }, '`mode` must be "fast" (got "slow")'],
    [{ n: { type: "number", exclusiveMinimum: 0 } }, { n: 0 }, "`n` must be a number greater than 0 (got 0)"],
    [{ n: { type: "integer", maximum: 9 } }, { n: 10 }, "`n` must be an integer up to 9 (got 10)"],
    [{ n: { type: "integer", multipleOf: 5 } }, { n: 7 }, "`n` must be a multiple of 5 (got 7)"],
    [{ s: { type: "string", minLength: 2 } }, { s: "a" }, '`s` must be at least 2 characters long (got "a")'],
    [{ s: { type: "string", pattern: "^v\\d+$" } }, { s: "x1" }, '`s` must match the pattern /^v\\d+$/ (got "x1")'],
    [{ l: { type: "array", maxItems: 1 } }, { l: [1, 2] }, "`l` must have at most 1 items (got [1,2])"],
    [{ l: { type: "array", uniqueItems: true } }, { l: [1, 2, 1] }, "`l` must not repeat items (items 0 and 2 are the same)"],
    [{ v: { anyOf: [{ type: "string" }, { type: "integer" }] } }, { v: true }, "`v` must match one of the allowed forms (got true)"],
    [{ v: { oneOf: [{ type: "number" }, { type: "integer" }] } }, { v: 1 }, "`v` matches more than one of the allowed forms (got 1)"],
    [{ v: false }, { v: 1 }, "`v` is not allowed"],
    [{ a: {}, b: {} }, { a: 1 }, "`b` is required when `a` is given"],
    [{}, [1], "the input must be an object (got [1])"],
  ];
  for (const [properties, input, expected] of cases) {
    const extra = "a" in properties ? { dependentRequired: { a: ["b"] } } : {};
    assert.equal(messageFor(properties, input, extra), expected, JSON.stringify(properties));
  }
});

test("long values are cut, and more than eight problems are counted, not listed", () => {
  const long = "x".repeat(100);
  assert.equal(messageFor({ s: { type: "integer" } }, { s: long }), `\`s\` must be an integer (got "${"x".repeat(59)}…)`);
  const properties = Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`f${k}`, { type: "string" }]));
  const input = Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`f${k}`, k]));
  const message = messageFor(properties, input);
  assert.equal(message.split("; ").length, 9);
  assert.match(message, /^`f0` must be a string \(got 0\); .*; `f7` must be a string \(got 7\); and 2 more problems$/);
});

test("closestName suggests a near field, case and separators aside, and nothing far", () => {
  assert.equal(closestName("pth", ["path", "offset"]), "path");
  assert.equal(closestName("replace_all", ["path", "replaceAll"]), "replaceAll");
  assert.equal(closestName("Timeout", ["command", "timeoutMs"]), "timeoutMs");
  assert.equal(closestName("colour", ["path", "old", "new"]), undefined);
  assert.equal(closestName("x", []), undefined);
});
