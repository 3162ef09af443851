import assert from "node:assert/strict";
import { test } from "node:test";
import { builtinTools } from "../../src/tools/index.js";

test("builtinTools lists the seven tools in a fixed order with their effects", () => {
  assert.deepEqual(builtinTools().map((t) => [t.spec.name, t.effect]), [
    ["read_file", "read"], ["write_file", "write"], ["edit_file", "write"], ["list_dir", "read"],
    ["glob", "read"], ["grep", "read"], ["shell", "exec"],
  ]);
});

test("the specs are byte-identical from one call to the next (they sit in the cached prefix)", () => {
  const first = JSON.stringify(builtinTools().map((t) => t.spec));
  const second = JSON.stringify(builtinTools({ ripgrep: "js" }).map((t) => t.spec));
  assert.equal(first, second);
  assert.doesNotMatch(first, /\d{4}-\d{2}-\d{2}|\/tmp\//);
});

test("every schema is a closed object whose required fields are properties, and each tool plans", () => {
  for (const tool of builtinTools()) {
    const schema = tool.spec.inputSchema as { type: string; properties: Record<string, unknown>; required?: string[]; additionalProperties: boolean };
    assert.equal(schema.type, "object", tool.spec.name);
    assert.equal(schema.additionalProperties, false, tool.spec.name);
    for (const field of schema.required ?? []) assert.ok(field in schema.properties, `${tool.spec.name}.${field}`);
    assert.equal(typeof tool.plan, "function", tool.spec.name);
    assert.ok(tool.spec.description.length < 500, tool.spec.name);
  }
});
