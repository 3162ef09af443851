/** Which output schemas the Responses API gets as strict (strict-schema.ts): only those strict mode takes as they are. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isStrictSchema } from "../../src/providers/strict-schema.js";

const closed = (properties: Record<string, unknown>) => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });

test("a schema whose every object is closed and requires all its properties is strict, nested objects, arrays and $defs included", () => {
  assert.equal(isStrictSchema(closed({ verdict: { enum: ["pass", "fail"] }, score: { type: "integer", minimum: 0 } })), true);
  assert.equal(isStrictSchema(closed({ items: { type: "array", items: closed({ n: { type: ["number", "null"] } }) } })), true);
  assert.equal(isStrictSchema({ ...closed({ a: { $ref: "#/$defs/A" } }), $defs: { A: closed({ x: { type: "string" } }) } }), true);
  // A property may bear a keyword's name: it is a name, not the keyword.
  assert.equal(isStrictSchema(closed({ if: { type: "string" }, not: { type: "boolean" } })), true);
});

test("an open object, an optional property, a nested one of them, or a keyword strict mode rejects is not strict", () => {
  assert.equal(isStrictSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a"] }), false, "additionalProperties not false");
  assert.equal(isStrictSchema({ type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"], additionalProperties: false }), false, "b optional");
  assert.equal(isStrictSchema(closed({ inner: { type: "object", properties: { x: { type: "string" } } } })), false, "nested open object");
  assert.equal(isStrictSchema(closed({ list: { type: "array", items: { type: "string" }, uniqueItems: true } })), false, "uniqueItems");
  assert.equal(isStrictSchema({ ...closed({ a: { type: "string" } }), allOf: [] }), false, "allOf");
  assert.equal(isStrictSchema({ ...closed({}), $defs: { Open: { type: "object", properties: { y: {} } } } }), false, "an open $defs entry");
});
