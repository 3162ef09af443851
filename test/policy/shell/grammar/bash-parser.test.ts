/** The bash grammar: loaded offline from the package's .wasm, once, and shared. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadBashParser } from "../../../../src/policy/shell/grammar/bash-parser.js";

test("the bash grammar loads once and is shared", async () => {
  const [a, b] = await Promise.all([loadBashParser(), loadBashParser()]);
  assert.equal(a, b);
  assert.equal(await loadBashParser(), a);
});

test("it parses bash and flags what it cannot parse", async () => {
  const parser = await loadBashParser();
  const good = parser.parse("git status && { ls; } | grep x");
  const bad = parser.parse("{rm,-rf,/}");
  try {
    assert.equal(good.rootNode.hasError, false);
    assert.equal(good.rootNode.firstNamedChild?.type, "list");
    assert.equal(bad.rootNode.hasError, true);
  } finally {
    good.delete();
    bad.delete();
  }
});
