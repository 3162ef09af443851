/**
 * `--junit-cases check` through the built CLI (issue 26): one flat testcase per check, classname
 * `suite.id`, name the check's, `line` where the check is written in the task file, the failure
 * per check with its output; a task without checks, one whose setup failed and a quarantined one
 * still show, as `(task)`; a repeated flaky task's check carries a `<flakyFailure>` per failed
 * trial; `report merge --junit-cases check` of two shards gives the same testcases; every
 * junit.xml validates against schema/junit/junit-10-ext.xsd.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { assertValidJUnit } from "../support/published-schemas.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

/** Three checks, the second failing with some output; comments move the checks' lines. */
const TWO_CHECKS = `prompt: Say done.
policy: ../policy.yaml
model: { provider: scripted, script: [{ say: done }] }
checks:
  # the first check
  - { name: it builds, run: "true" }

  # the second check fails
  - name: unit tests
    run: "echo 'AssertionError: 1 != 2'; false"
  - { name: lint, run: "true" }
`;

const NO_CHECKS = "prompt: Say done.\npolicy: ../policy.yaml\nmodel: { provider: scripted, script: [{ say: done }] }\n";

const SETUP_FAILS = `prompt: Say done.
policy: ../policy.yaml
workspace: { setup: ["echo no toolchain; exit 3"] }
model: { provider: scripted, script: [{ say: done }] }
checks:
  - { name: never runs, run: "true" }
`;

/** By repeat bad, good, good with a 0.5 pass rate: the task passes, its check failed once. */
const FLAKY = `prompt: Say good.
repeats: 3
pass: { rate: 0.5 }
model:
  provider: scripted
  pick: repeat
  scripts:
    - script: [{ say: bad }]
    - script: [{ say: good }]
    - script: [{ say: good }]
checks:
  - { name: says good, run: 'grep -qx good "$RHEMA_FINAL_ANSWER"' }
`;

/** Every testcase of the report as `classname|name` → its whole element. */
function testcases(xml: string): Map<string, string> {
  const cases = new Map<string, string>();
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(?:\/>|>[\s\S]*?<\/testcase>)/g)) cases.set(`${m[1]}|${m[2]}`, m[0]);
  return cases;
}

function only(cases: Map<string, string>, key: string): string {
  const found = cases.get(key);
  assert.ok(found, `no testcase ${key}; have ${[...cases.keys()].join(", ")}`);
  return found;
}

test("--junit-cases check: a testcase per check with its line and own failure; tasks without check results show as (task); valid JUnit", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY, "s/two.yaml": TWO_CHECKS, "s/none.yaml": NO_CHECKS, "s/setup.yaml": SETUP_FAILS, "s/flaky.yaml": FLAKY,
  });
  const out = join(root, "run");
  const run = await runCli(["run", "s", "--out", out, "--sandbox", "off", "--junit-cases", "check"], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const xml = await readFile(join(out, "junit.xml"), "utf8");
  await assertValidJUnit(xml);
  const cases = testcases(xml);
  assert.deepEqual([...cases.keys()], [
    "s.flaky|says good", "s.none|(task)", "s.setup|(task)", "s.two|it builds", "s.two|unit tests", "s.two|lint",
  ]);
  assert.match(xml, /<testsuite name="s" [^>]*tests="6" failures="1" errors="1" skipped="0"/);

  const builds = only(cases, "s.two|it builds");
  assert.match(builds, /^<testcase classname="s.two" name="it builds" time="[\d.]+" file="s\/two.yaml" line="6">/);
  assert.doesNotMatch(builds, /<failure|<error|<skipped/);
  const unit = only(cases, "s.two|unit tests");
  assert.match(unit, / line="9">/);
  assert.match(unit, /<failure message="check &quot;unit tests&quot; failed \(exit code 1\): AssertionError: 1 != 2" type="check">/);
  assert.match(unit, /check: unit tests\ncommand: echo 'AssertionError: 1 != 2'; false\nresult: exit code 1\noutput \(tail\):\nAssertionError: 1 != 2/);
  assert.match(unit, /\[\[PROPERTY\|status=failed\]\]\n\[\[PROPERTY\|counted=1\]\]\n\[\[PROPERTY\|passes=0\]\]/);
  assert.match(only(cases, "s.two|lint"), / line="11">/);
  assert.doesNotMatch(only(cases, "s.two|lint"), /<failure/);

  const none = only(cases, "s.none|(task)");
  assert.doesNotMatch(none, /<failure|<error|<skipped/);
  assert.match(none, /\[\[PROPERTY\|status=passed\]\]/);
  const setup = only(cases, "s.setup|(task)");
  assert.match(setup, /<error message="setup failed: setup command `echo no toolchain; exit 3` exited 3[^"]*" type="setup_failed">/);

  const flaky = only(cases, "s.flaky|says good");
  assert.match(flaky, / line="12">/);
  assert.doesNotMatch(flaky, /<failure|<error/);
  assert.equal([...flaky.matchAll(/<flakyFailure message="trial 1\/3: check &quot;says good&quot; failed \(exit code 1\)" type="check">/g)].length, 1);
  assert.match(flaky, /trial 1\/3: check "says good" failed \(exit code 1\)\ntrial 2\/3: passed\ntrial 3\/3: passed/);
  assert.match(flaky, /\[\[PROPERTY\|status=passed\]\]\n\[\[PROPERTY\|counted=3\]\]\n\[\[PROPERTY\|passes=2\]\]/);

  // The line is in result.json too.
  const result = JSON.parse(await readFile(join(out, "tasks/s/two/default/1/result.json"), "utf8")) as { checks: { name: string; line: number }[] };
  assert.deepEqual(result.checks.map((c) => [c.name, c.line]), [["it builds", 6], ["unit tests", 9], ["lint", 11]]);
});

test("report merge --junit-cases check of two shards gives the unsharded run's testcases; a quarantined failure is a skip", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY, "s/two.yaml": TWO_CHECKS, "s/none.yaml": NO_CHECKS, "s/setup.yaml": SETUP_FAILS,
    "q.yaml": "version: 1\nquarantine:\n  - task: s/two\n    reason: known bug\n",
  });
  const shards = ["1/2", "2/2"].map((shard, k) => ({ shard, out: join(root, `shard-${k + 1}`) }));
  for (const { shard, out } of shards) {
    const ran = await runCli(["run", "s", "--out", out, "--sandbox", "off", "--shard", shard, "--quarantine", "q.yaml"], { cwd: root });
    assert.ok(ran.code === 0 || ran.code === 1, ran.stderr);
  }
  const merged = join(root, "merged");
  const merge = await runCli(["report", "merge", ...shards.map((s) => s.out), "--out", merged, "--junit-cases", "check"], { cwd: root });
  assert.equal(merge.code, 0, merge.stderr);
  const xml = await readFile(join(merged, "junit.xml"), "utf8");
  await assertValidJUnit(xml);
  const cases = testcases(xml);
  assert.deepEqual([...cases.keys()], ["s.none|(task)", "s.setup|(task)", "s.two|it builds", "s.two|unit tests", "s.two|lint"]);
  const unit = only(cases, "s.two|unit tests");
  assert.match(unit, / line="9">/);
  assert.match(unit, /<skipped message="quarantined: known bug — check &quot;unit tests&quot; failed \(exit code 1\): AssertionError: 1 != 2"\/>/);
  assert.match(unit, /\[\[PROPERTY\|quarantined=true\]\]/);
  assert.doesNotMatch(unit, /<failure/);
  assert.match(only(cases, "s.setup|(task)"), /<error [^>]*type="setup_failed">/);
});
