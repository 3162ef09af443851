/**
 * `rhema report compare` through the built CLI (issue 22): run directories written as a run
 * writes them (layout 2, and a layout-1 merge's), the exit code per --fail-on, the Markdown on
 * stdout or in --out, the JSON valid against schema/compare.schema.json, the chart and its spec,
 * --cells over a run whose results carry variants, a real run's directory, and exit 2 for
 * directories that cannot be compared.
 */
import assert from "node:assert/strict";
import { readFile, symlink, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { RunDir } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { cellResults, writeCompareRun, type CellSpec } from "../runner/reports/compare-fixtures.js";

const REGRESSED: CellSpec[] = [{ id: "t", passes: 10, trials: 10 }];
const REGRESSED_HEAD: CellSpec[] = [{ id: "t", passes: 1, trials: 10 }];
const NOISE: CellSpec[] = [{ id: "t", passes: 6, trials: 10 }];
const NOISE_HEAD: CellSpec[] = [{ id: "t", passes: 5, trials: 10 }];
const IMPROVED: CellSpec[] = [{ id: "t", passes: 1, trials: 10 }];
const IMPROVED_HEAD: CellSpec[] = [{ id: "t", passes: 10, trials: 10 }];

async function runs(dir: string, base: CellSpec[], head: CellSpec[]): Promise<void> {
  await writeCompareRun(join(dir, "base"), base);
  await writeCompareRun(join(dir, "head"), head);
}

test("the exit code per --fail-on: a regression is 1, noise 0 (1 with --fail-on inconclusive), an improvement 0; never is always 0", async (t) => {
  const cases: [string, CellSpec[], CellSpec[], Record<string, number>][] = [
    ["regressed", REGRESSED, REGRESSED_HEAD, { regressed: 1, inconclusive: 1, never: 0 }],
    ["inconclusive", NOISE, NOISE_HEAD, { regressed: 0, inconclusive: 1, never: 0 }],
    ["improved", IMPROVED, IMPROVED_HEAD, { regressed: 0, inconclusive: 0, never: 0 }],
  ];
  for (const [verdict, base, head, codes] of cases) {
    const dir = await tempDir(t);
    await runs(dir, base, head);
    const plain = await runCli(["report", "compare", "base", "head"], { cwd: dir });
    assert.equal(plain.code, codes.regressed, `${verdict}: ${plain.stderr}`);
    assert.match(plain.stdout, new RegExp(`\\| s/t \\| (\\*\\*)?${verdict}(\\*\\*)? \\|`), plain.stdout);
    for (const failOn of ["regressed", "inconclusive", "never"]) {
      const r = await runCli(["report", "compare", "base", "head", "--fail-on", failOn], { cwd: dir });
      assert.equal(r.code, codes[failOn], `${verdict} --fail-on ${failOn}: ${r.stderr}`);
    }
  }
});

test("--out, --json and --chart write the Markdown, the JSON (valid against its schema) and the SVG with its spec", async (t) => {
  const dir = await tempDir(t);
  await runs(dir, [...REGRESSED, { id: "u", passes: 3, trials: 3 }], [...REGRESSED_HEAD, { id: "u", passes: 3, trials: 3 }, { id: "v", passes: 1, trials: 1 }]);
  const r = await runCli(["report", "compare", "base", "head", "--out", "compare.md", "--json", "compare.json", "--chart", "compare.svg"], { cwd: dir });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /compared 3 cells: 1 regressed, 0 improved, 0 unchanged, 1 inconclusive, 1 added, 0 removed/);
  const md = await readFile(join(dir, "compare.md"), "utf8");
  assert.ok(md.indexOf("### Regressed (1)") < md.indexOf("<details>"), md);
  const json = JSON.parse(await readFile(join(dir, "compare.json"), "utf8")) as { rows: { id: string; status: string }[]; failed: boolean };
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validate = ajv.compile(JSON.parse(await readFile(join(repoRoot, "schema/compare.schema.json"), "utf8")) as object);
  assert.ok(validate(json), JSON.stringify(validate.errors));
  assert.deepEqual(json.rows.map((row) => `${row.id} ${row.status}`), ["t regressed", "u inconclusive", "v added"]);
  assert.equal(json.failed, true);
  const svg = await readFile(join(dir, "compare.svg"), "utf8");
  assert.match(svg, /^<svg[\s\S]*<\/svg>\s*$/);
  assert.match(svg, /cost per trial \(USD\)/);
  const spec = JSON.parse(await readFile(join(dir, "compare.vl.json"), "utf8")) as { data: { values: { task: string; side: string; rate: number }[] } };
  assert.deepEqual(spec.data.values.map((v) => `${v.task} ${v.side} ${v.rate}`), ["s/t base base 1", "s/t head head 0.1", "s/u base base 1", "s/u head head 1", "s/v head head 1"]);
  const asJson = await runCli(["report", "compare", "base", "head", "--format", "json", "--fail-on", "never"], { cwd: dir });
  assert.equal(asJson.code, 0, asJson.stderr);
  assert.ok(validate(JSON.parse(asJson.stdout)), JSON.stringify(validate.errors));
});

test("--cells compares a matrix run's cells (layout-2 variant folders, manifest variants) with its base cell", async (t) => {
  // Cell ids as a matrix names them (axis=id), which the folders hold.
  const dir = await tempDir(t);
  await writeCompareRun(join(dir, "run"), [
    { id: "a", variant: "model=haiku", passes: 0, trials: 8 },
    { id: "a", variant: "model=sonnet", passes: 8, trials: 8 },
    { id: "b", variant: "model=haiku", passes: 4, trials: 8 },
    { id: "b", variant: "model=sonnet", passes: 4, trials: 8 },
  ]);
  assert.ok((await readFile(join(dir, "run/tasks/s/a/model=haiku/8/result.json"), "utf8")).includes('"variant": "model=haiku"'));
  const first = await runCli(["report", "compare", "run", "--cells", "--json", "cells.json"], { cwd: dir });
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /Cells of `run` against the cell `model=haiku`/);
  assert.match(first.stdout, /\| s\/a @model=sonnet \| improved \| 0\/8 → 8\/8 \|/);
  const bySonnet = await runCli(["report", "compare", "run", "--cells", "--base-cell", "model=sonnet"], { cwd: dir });
  assert.equal(bySonnet.code, 1, bySonnet.stderr);
  assert.match(bySonnet.stdout, /\| s\/a @model=haiku \| \*\*regressed\*\* \| 8\/8 → 0\/8 \|/);
  assert.match(bySonnet.stdout, /\| s\/b @model=haiku \| inconclusive \| 4\/8 → 4\/8 \|/);
  const unknown = await runCli(["report", "compare", "run", "--cells", "--base-cell", "opus"], { cwd: dir });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /--base-cell "opus" is not a cell of run; its cells are model=haiku, model=sonnet/);
});

test("a layout-1 merge's directory compares with a layout-2 run's", async (t) => {
  const dir = await tempDir(t);
  const old = new RunDir(join(dir, "old"));
  for (const result of cellResults([{ id: "a", passes: 1, trials: 1 }, { id: "b", passes: 0, trials: 1 }])) {
    const { trial: _trial, ...layoutOne } = result;
    await old.task(layoutOne).writeResult(layoutOne);
  }
  await writeCompareRun(join(dir, "new"), [{ id: "a", passes: 1, trials: 1 }, { id: "b", passes: 1, trials: 1 }]);
  const r = await runCli(["report", "compare", "old", "new", "--format", "json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout) as { rows: { id: string; status: string; base: { passes: number } }[] };
  assert.deepEqual(json.rows.map((row) => `${row.id} ${row.status} ${row.base.passes}`), ["a inconclusive 1", "b inconclusive 0"]);
});

test("two real runs of a scripted suite compare: the same task and cell, its repeats counted", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": "prompt: hi\nmodel: { provider: scripted, script: [{ say: ok }] }\nchecks:\n  - { name: ok, run: 'true' }\n" });
  for (const out of ["base", "head"]) {
    const run = await runCli(["run", "suite", "--policy", "policy.yaml", "--sandbox", "off", "--repeats", "3", "--out", out], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
  }
  const r = await runCli(["report", "compare", "base", "head", "--json", "c.json", "--chart", "c.svg"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\| suite\/a \| inconclusive \| 3\/3 → 3\/3 \| 0\.0 pts \(/);
  const json = JSON.parse(await readFile(join(dir, "c.json"), "utf8")) as { rows: { headCell: string | null; head: { trials: number; steps: number } }[] };
  assert.deepEqual(json.rows.map((row) => [row.headCell, row.head.trials, row.head.steps]), [[null, 3, 1]]);
  // A scripted run has no dollars: the chart plots tokens per trial and says so.
  assert.match(await readFile(join(dir, "c.svg"), "utf8"), /tokens per trial/);
});

test("directories that cannot be compared are exit 2, naming them", async (t) => {
  const dir = await tempDir(t);
  await writeCompareRun(join(dir, "run"), REGRESSED);
  await mkdir(join(dir, "empty"));
  await symlink(join(dir, "run"), join(dir, "alias"));
  const cases: [string[], RegExp][] = [
    [["missing", "run"], /Run directory not found: .*\/missing/],
    [["run", "run"], /The run directory .*\/run is given twice as .*\/run: compare two runs, or one run's cells with --cells/],
    [["run", "alias"], /is given twice: as .*\/run and as .*\/alias/],
    [["run", "empty"], /The run directory .*\/empty holds no trial result/],
    [["run"], /Expected two run directories, BASE and HEAD \(or one with --cells\), got 1: run/],
    [["run", "run", "run"], /Expected two run directories/],
    [["run", "empty", "--cells"], /--cells compares the cells of one run directory: give one, got 2/],
    [["run", "--cells"], /has one cell \(default\): --cells needs a run with several variants/],
    [["run", "alias", "--base-cell", "x"], /--base-cell names the base of --cells/],
    [["run", "alias", "--margin", "1.5"], /--margin takes a pass-rate change from 0 to below 1 .*got "1\.5"/],
    [["run", "alias", "--margin", "ten"], /--margin takes .*got "ten"/],
    [["run", "alias", "--out", ""], /Expected --out to name a path, got ""/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(["report", "compare", ...args], { cwd: dir });
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  }
});
