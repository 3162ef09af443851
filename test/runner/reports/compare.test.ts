/**
 * `report compare`'s rows, verdicts, Markdown and JSON from constructed results: a clear
 * regression, noise, a clear improvement and no change give the four verdicts; the gate per
 * --fail-on; the Markdown's order; the JSON valid against the published schema; --cells over
 * results that carry variants.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { buildCompareReport, compareJsonSchema, compareReportSchema, comparisonFails } from "../../../src/runner/reports/compare-json.js";
import { renderCompareMarkdown } from "../../../src/runner/reports/compare-markdown.js";
import { cellsOf, compareCells, compareRuns, rowStatus, type CompareRow } from "../../../src/runner/reports/compare-rows.js";
import { failsGate, verdictOf } from "../../../src/runner/reports/compare-verdict.js";
import { repoRoot } from "../../support/paths.js";
import { cellResults } from "./compare-fixtures.js";

const BASE = cellResults([
  { id: "regress", passes: 10, trials: 10 },
  { id: "noise", passes: 5, trials: 10 },
  { id: "improve", passes: 0, trials: 10, usd: null },
  { id: "steady", passes: 50, trials: 50 },
  { id: "gone", passes: 1, trials: 1 },
]);
const HEAD = cellResults([
  { id: "regress", passes: 0, trials: 10, usd: 0.02 },
  { id: "noise", passes: 4, trials: 10 },
  { id: "improve", passes: 10, trials: 10, usd: null },
  { id: "steady", passes: 50, trials: 50 },
  { id: "fresh", passes: 2, trials: 3 },
]);

const statuses = (rows: readonly CompareRow[]) => Object.fromEntries(rows.map((row) => [`${row.id}${row.headCell ? `@${row.headCell}` : ""}`, rowStatus(row)]));

test("a clear regression, noise, a clear improvement and no change give the four verdicts; added and removed tasks are named", () => {
  const comparison = compareRuns(BASE, HEAD, 0.1);
  assert.deepEqual(statuses(comparison.rows), {
    fresh: "added", gone: "removed", improve: "improved", noise: "inconclusive", regress: "regressed", steady: "unchanged",
  });
  const regress = comparison.rows.find((r) => r.id === "regress")!;
  assert.equal(regress.kind, "compared");
  if (regress.kind !== "compared") return;
  assert.equal(regress.change!.difference, -1);
  // Newcombe 1998 Table II (h) mirrored: 0/10 − 10/10.
  assert.ok(Math.abs(regress.change!.interval.upper - -0.6075) < 5e-5, String(regress.change!.interval.upper));
  assert.deepEqual([regress.base.costPerTrialUsd, regress.head.costPerTrialUsd, regress.head.costPerPassUsd].map((usd) => usd === null ? null : Number(usd.toFixed(12))), [0.01, 0.02, null]);
});

test("the figures of a side: pass rate with its interval, cost per trial and per pass, unpriced as null, steps, flaky", () => {
  const noise = compareRuns(BASE, HEAD, 0.1).rows.find((r) => r.id === "noise")!;
  assert.equal(noise.kind, "compared");
  if (noise.kind !== "compared") return;
  assert.equal(noise.head.trials, 10);
  assert.equal(noise.head.passes, 4);
  assert.equal(noise.head.passRate!.rate, 0.4);
  assert.ok(Math.abs(noise.head.costPerPassUsd! - 0.025) < 1e-12);
  assert.equal(noise.head.steps, 3);
  assert.equal(noise.head.flaky, true);
  assert.equal(noise.flakyFlip, null);
  const improve = compareRuns(BASE, HEAD, 0.1).rows.find((r) => r.id === "improve")!;
  assert.ok(improve.kind === "compared");
  assert.deepEqual([improve.head.costPerTrialUsd, improve.head.costPerPassUsd], [null, null]);
});

test("the verdict comes from the interval, not the point estimate; the margin bounds unchanged", () => {
  const change = (lower: number, upper: number) => ({ difference: (lower + upper) / 2, interval: { lower, upper } });
  assert.equal(verdictOf(change(-0.3, -0.01), 0.1), "regressed");
  assert.equal(verdictOf(change(0.01, 0.3), 0.1), "improved");
  assert.equal(verdictOf(change(-0.09, 0.1), 0.1), "unchanged");
  assert.equal(verdictOf(change(-0.11, 0.05), 0.1), "inconclusive");
  assert.equal(verdictOf(change(-0.11, 0.05), 0.2), "unchanged");
  assert.equal(verdictOf(null, 0.1), "inconclusive");
  // A point estimate of −0.5 over 2 trials each is no regression: 1/2 − 2/2.
  const small = compareRuns(cellResults([{ id: "t", passes: 2, trials: 2 }]), cellResults([{ id: "t", passes: 1, trials: 2 }]), 0.1);
  assert.equal(rowStatus(small.rows[0]!), "inconclusive");
});

test("--fail-on: regressed fails on a regression, inconclusive also on an inconclusive cell, never never", () => {
  assert.equal(failsGate(["improved", "unchanged"], "regressed"), false);
  assert.equal(failsGate(["improved", "regressed"], "regressed"), true);
  assert.equal(failsGate(["inconclusive"], "regressed"), false);
  assert.equal(failsGate(["inconclusive"], "inconclusive"), true);
  assert.equal(failsGate(["regressed"], "inconclusive"), true);
  assert.equal(failsGate(["regressed", "inconclusive"], "never"), false);
  // Added and removed tasks are listed, never a failure.
  const onlyAdded = compareRuns(cellResults([{ id: "a", passes: 1, trials: 1 }]), cellResults([{ id: "a", passes: 1, trials: 1 }, { id: "b", passes: 0, trials: 1 }]), 0.1);
  assert.equal(comparisonFails(onlyAdded, "inconclusive"), true, "1/1 → 1/1 is inconclusive at one trial");
  assert.equal(comparisonFails(onlyAdded, "regressed"), false);
});

test("the Markdown lists regressions first, then improvements, then the rest collapsed", () => {
  const md = renderCompareMarkdown(compareRuns(BASE, HEAD, 0.1), { base: "runs/base", head: "runs/head" });
  const at = (text: string) => {
    const i = md.indexOf(text);
    assert.ok(i >= 0, `${text} in:\n${md}`);
    return i;
  };
  assert.ok(at("**1 regressed**, 1 improved, 1 unchanged, 1 inconclusive, 1 added, 1 removed") < at("### Regressed (1)"));
  assert.ok(at("### Regressed (1)") < at("| s/regress | **regressed** | 10/10 → 0/10 | −100.0 pts (−100.0 to −60.8) |"));
  assert.ok(at("| s/regress |") < at("### Improved (1)"));
  assert.ok(at("### Improved (1)") < at("| s/improve | improved |"));
  assert.ok(at("| s/improve |") < at("<details><summary>The rest: 1 inconclusive, 1 unchanged, 1 added, 1 removed</summary>"));
  const rest = md.slice(at("<details>"), at("</details>"));
  assert.deepEqual([...rest.matchAll(/^\| (s\/\S+) \| ([^|]+) \|/gm)].map((m) => `${m[1]} ${m[2]!.trim()}`),
    ["s/noise inconclusive", "s/steady unchanged", "s/fresh added (head only)", "s/gone removed (base only)"]);
  assert.match(md, /\| s\/improve \| improved \| 0\/10 → 10\/10 \| \+100\.0 pts \(\+60\.8 to \+100\.0\) \| unpriced → unpriced \| unpriced → unpriced \|/);
});

test("the Markdown of a comparison without a regression or an improvement has only the collapsed rest", () => {
  const md = renderCompareMarkdown(compareRuns(cellResults([{ id: "t", passes: 3, trials: 4 }]), cellResults([{ id: "t", passes: 2, trials: 4 }]), 0.1), { base: "b", head: "h" });
  assert.doesNotMatch(md, /### Regressed|### Improved/);
  assert.match(md, /0 regressed, 0 improved, 0 unchanged, 1 inconclusive/);
  assert.match(md, /<details><summary>The rest: 1 inconclusive<\/summary>/);
});

test("the committed schema/compare.schema.json equals the one generated from the zod schema", () => {
  const committed = JSON.parse(readFileSync(join(repoRoot, "schema/compare.schema.json"), "utf8"));
  assert.deepStrictEqual(committed, compareJsonSchema(), "run `npm run build && node scripts/gen-schemas.mjs`");
});

test("the JSON validates against the published schema and carries the rows, counts and gate", () => {
  const report = buildCompareReport(compareRuns(BASE, HEAD, 0.1), { base: "runs/base", head: "runs/head" }, "regressed");
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validate = ajv.compile(JSON.parse(readFileSync(join(repoRoot, "schema/compare.schema.json"), "utf8")) as object);
  assert.ok(validate(JSON.parse(JSON.stringify(report))), JSON.stringify(validate.errors));
  assert.deepStrictEqual(compareReportSchema.parse(report), report);
  assert.deepEqual(report.counts, { regressed: 1, improved: 1, unchanged: 1, inconclusive: 1, added: 1, removed: 1 });
  assert.equal(report.failed, true);
  const regress = report.rows.find((r) => r.id === "regress")!;
  assert.equal(regress.status, "regressed");
  assert.equal(regress.change!.difference, -1);
  assert.equal(report.rows.find((r) => r.id === "fresh")!.base, null);
  // The schema is not a formality: a row missing its status is refused.
  const broken = JSON.parse(JSON.stringify(report)) as { rows: Record<string, unknown>[] };
  delete broken.rows[0]!.status;
  assert.equal(validate(broken), false);
});

test("--cells compares each task's other cells with the base cell of one run whose results carry variants", () => {
  const results = cellResults([
    { id: "a", variant: "model=haiku", passes: 1, trials: 12 },
    { id: "a", variant: "model=opus", passes: 12, trials: 12 },
    { id: "a", variant: "model=sonnet", passes: 11, trials: 12 },
    { id: "b", variant: "model=haiku", passes: 3, trials: 3 },
    { id: "b", variant: "model=sonnet", passes: 3, trials: 3 },
    { id: "c", variant: "model=opus", passes: 1, trials: 1 },
  ]);
  assert.deepEqual(cellsOf(results), ["model=haiku", "model=opus", "model=sonnet"]);
  const comparison = compareCells(results, "model=sonnet", 0.1);
  assert.equal(comparison.mode, "cells");
  assert.deepEqual(comparison.rows.map((r) => `${r.id} ${r.baseCell}→${r.headCell} ${rowStatus(r)}`), [
    "a model=sonnet→model=haiku regressed",
    "a model=sonnet→model=opus inconclusive",
    "b model=sonnet→model=haiku inconclusive",
    "b model=sonnet→model=opus removed",
    "c model=sonnet→model=opus added",
  ]);
  const md = renderCompareMarkdown(comparison, { base: "run", head: "run" });
  assert.match(md, /Cells of `run` against the cell `model=sonnet`/);
  assert.match(md, /\| s\/a @model=haiku \| \*\*regressed\*\* \| 11\/12 → 1\/12 \|/);
});

test("between two runs with variants, each task's cell is paired with the same cell", () => {
  const base = cellResults([{ id: "a", variant: "x", passes: 8, trials: 8 }, { id: "a", variant: "y", passes: 0, trials: 8 }]);
  const head = cellResults([{ id: "a", variant: "x", passes: 0, trials: 8 }, { id: "a", variant: "y", passes: 8, trials: 8 }]);
  assert.deepEqual(statuses(compareRuns(base, head, 0.1).rows), { "a@x": "regressed", "a@y": "improved" });
});
