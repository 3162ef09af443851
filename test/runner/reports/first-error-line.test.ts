/**
 * The error line of a failed check's output: the assertion, not the runner's tally. Judged on
 * what `node --test` really prints for a failing test — live on the Node running the tests, and
 * as recorded from Node 20 and 22 (TAP off a TTY) and Node 24 (the spec reporter everywhere).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { findErrorLine, firstErrorLine } from "../../../src/runner/reports/first-error-line.js";
import { excerptOf } from "../../../src/runner/reports/summary-report.js";
import { repoRoot } from "../../support/paths.js";
import { tempDir } from "../../support/temp-dir.js";

const ASSERTION = "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:";
const recorded = (version: string) => readFile(join(repoRoot, "test/runner/fixtures/node-test-output", `node-${version}.txt`), "utf8");

test("the assertion line of a failing `node --test` on this Node, never its `fail` tally", async (t) => {
  const workspace = await tempDir(t);
  await cp(join(repoRoot, "tasks/fixtures/add"), workspace, { recursive: true });
  const testFile = join(workspace, "test/add.test.js");
  await writeFile(testFile, (await readFile(testFile, "utf8")).replace("assert.equal(add(2, 3), 5);", "assert.equal(add(2, 3), -1);"));
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // else the child reports to this test runner instead of printing
  const ran = spawnSync(process.execPath, ["--test", "test/add.test.js"], { cwd: workspace, env, encoding: "utf8" });
  assert.equal(ran.status, 1, ran.stdout + ran.stderr);
  t.diagnostic(`node ${process.version}: ${firstErrorLine(ran.stdout + ran.stderr)}`);
  assert.equal(firstErrorLine(ran.stdout + ran.stderr), ASSERTION);
});

test("Node 20, 22 and 24's recorded outputs all give the same assertion line", async () => {
  for (const version of ["20.20.2", "22.23.3", "24.21.0"]) {
    assert.equal(firstErrorLine(await recorded(version)), ASSERTION, `node ${version}`);
  }
});

test("Node 24's excerpt keeps the assertion in its tail and does not lead with `ℹ fail 1`", async () => {
  const output = await recorded("24.21.0");
  const excerpt = excerptOf(output);
  assert.doesNotMatch(excerpt.split("\n")[0]!, /ℹ/);
  assert.ok(excerpt.includes(`  ${ASSERTION}`));
  const padded = `${output}\n${Array.from({ length: 40 }, (_, i) => `    at frame${i}`).join("\n")}`;
  assert.equal(excerptOf(padded).split("\n")[0], ASSERTION, "an assertion above the tail leads it");
});

test("ranked: an error line, then a failed test, then any line naming a failure; tallies never", () => {
  const cases: Array<[string[], string]> = [
    [["not ok 1 - adds", "Error: Cannot find module '/w/test'"], "Error: Cannot find module '/w/test'"],
    [["ℹ fail 1", "✖ adds two numbers (2ms)", "something failed"], "✖ adds two numbers (2ms)"],
    [["# fail 1", "build failed: see above"], "build failed: see above"],
    [["src/a.ts(3,5): error TS2322: Type 'string' is not assignable"], "src/a.ts(3,5): error TS2322: Type 'string' is not assignable"],
    [["E       AssertionError: assert 1 == 2", "FAILED test_a.py::test_one"], "E       AssertionError: assert 1 == 2"],
    [["--- FAIL: TestAdd (0.00s)", "FAIL"], "--- FAIL: TestAdd (0.00s)"],
    [["error[E0308]: mismatched types"], "error[E0308]: mismatched types"],
    [["\u001b[31m✖ adds two numbers\u001b[39m", "ℹ fail 1"], "✖ adds two numbers"],
    [["✖ failing tests:", "ℹ fail 1", "# fail 1"], ""],
  ];
  for (const [lines, expected] of cases) assert.equal(findErrorLine(lines.join("\n"))?.text ?? "", expected, lines.join(" | "));
});

test("with no error line, the first line that is not a tally; an empty output gives none", () => {
  assert.equal(firstErrorLine("ℹ tests 1\n\nexpected 5 lines, got 3\n"), "expected 5 lines, got 3");
  assert.equal(firstErrorLine("ℹ pass 0\nℹ fail 1\n"), "");
  assert.equal(firstErrorLine(""), "");
});

test("TAP's error field: an inline message, and one without a name", () => {
  const tap = (error: string, extra = "") => `not ok 1 - t\n  ---\n  duration_ms: 1\n${extra}  error: ${error}\n  ...\n`;
  assert.equal(firstErrorLine(tap("'it''s broken'", "  name: 'TypeError'\n")), "TypeError: it's broken");
  assert.equal(firstErrorLine(tap("'test failed'")), "test failed");
  assert.equal(firstErrorLine("error: |-\nnot in a TAP block"), "error: |-", "only inside a YAML block");
});
