/**
 * A (task, cell) pair's content hash covers the overrides the cell applies to the task (not its
 * `limits`, not its budget): change one cell's overrides and only that cell's pairs read as
 * changed, whatever else the matrix file holds.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseMatrixText } from "../../../src/runner/tasks/matrix-file.js";
import { parseTaskSource } from "../../../src/runner/tasks/task-file.js";
import { applyCell } from "../../../src/runner/tasks/task-variants.js";

const TASK = parseTaskSource("prompt: Say ok.\nmodel: { provider: scripted, script: [{ say: ok }] }\n", "/s/suite/t.yaml");

/** Each cell's content hash for TASK, by variant id, under the matrix `text`. */
function hashes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const cell of parseMatrixText(text, "/s/matrix.yaml").cells) {
    const applied = applyCell(TASK, cell);
    assert.ok(typeof applied !== "string", String(applied));
    out[cell.id] = applied.contentHash;
  }
  return out;
}

const matrix = (flavourA: string, rest = "") =>
  `matrix:\n  env:\n    - { id: a, vars: { FLAVOUR: ${flavourA} } }\n    - { id: b, vars: { FLAVOUR: salty } }\n${rest}`;

test("a cell's overrides are in its pairs' content hash: changing one cell's changes only its hash", () => {
  const before = hashes(matrix("sweet"));
  const after = hashes(matrix("sour"));
  assert.notEqual(before["env=a"], TASK.contentHash, "a cell's pair is not the bare task");
  assert.notEqual(before["env=a"], before["env=b"], "two cells' overrides differ");
  assert.notEqual(after["env=a"], before["env=a"], "env=a's overrides changed");
  assert.equal(after["env=b"], before["env=b"], "env=b's did not");
});

test("a cell's limits and budget are not in its hash: raising them continues stopped trials instead of refusing them as changed", () => {
  const limits = (steps: number, usd: number) =>
    `matrix:\n  model:\n    - { id: m, provider: scripted, priceAs: claude-sonnet-4-6 }\n  limits:\n    - { id: l, maxSteps: ${steps} }\n  include:\n    - { budget: { maxCostUsd: ${usd} } }\n`;
  assert.deepEqual(hashes(limits(3, 1)), hashes(limits(9, 5)));
});

test("the transcript axis sets cacheTtl per cell over the task's own, and a bad one is located in the matrix file", () => {
  const task = parseTaskSource("prompt: Say ok.\nmodel: { provider: scripted, script: [{ say: ok }] }\ntranscript: { budgetTokens: 9000, cacheTtl: 1h }\n", "/s/suite/t.yaml");
  const { cells } = parseMatrixText("matrix:\n  transcript:\n    - { id: short, cacheTtl: 5m }\n    - { id: auto, cacheTtl: auto }\n", "/s/matrix.yaml");
  const applied = cells.map((cell) => applyCell(task, cell));
  assert.deepEqual(applied.map((a) => (typeof a === "string" ? a : a.transcript)), [
    { budgetTokens: 9000, cacheTtl: "5m" },
    { budgetTokens: 9000, cacheTtl: "auto" },
  ]);
  assert.throws(() => parseMatrixText("matrix:\n  transcript:\n    - { id: x, cacheTtl: 2h }\n", "/s/matrix.yaml"), /matrix\.yaml:3:\d+: .*cacheTtl.*expected cacheTtl 5m, 1h or auto/);
});
