import assert from "node:assert/strict";
import { test } from "node:test";
import { findClosestLines } from "../../../src/tools/files/closest-lines.js";

const FILE = ["import x from 'x';", "", "export function total(items) {", "  let sum = 0;", "  for (const i of items) sum += i.price;", "  return sum;", "}", ""].join("\n");

test("finds the region most like the wanted text", () => {
  const found = findClosestLines(FILE, "  let sum = 1;\n  for (const i of items) sum += i.cost;");
  assert.deepEqual(found && { startLine: found.startLine, lines: found.lines, whitespaceOnly: found.whitespaceOnly }, {
    startLine: 4, lines: ["  let sum = 0;", "  for (const i of items) sum += i.price;"], whitespaceOnly: false,
  });
});

test("says when only whitespace differs", () => {
  const found = findClosestLines(FILE, "let sum = 0;\nfor (const i of items) sum += i.price;\n");
  assert.equal(found?.startLine, 4);
  assert.equal(found?.whitespaceOnly, true);
});

test("returns null when nothing is close", () => {
  assert.equal(findClosestLines(FILE, "SELECT * FROM users WHERE id = 7"), null);
  assert.equal(findClosestLines(FILE, "\n\n"), null);
});
