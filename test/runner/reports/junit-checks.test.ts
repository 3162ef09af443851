import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderJUnitReport } from "../../../src/runner/reports/junit-report.js";
import type { CheckOutcome, TaskResult } from "../../../src/runner/run-dir/task-result.js";
import type { ReportMeta } from "../../../src/runner/reports/report-meta.js";
import { assertValidJUnit } from "../../support/published-schemas.js";
import { sampleMeta, sampleResult } from "../sample-results.js";

const checkMeta = (overrides: Partial<ReportMeta> = {}): ReportMeta => sampleMeta({ junitCases: "check", ...overrides });

/** Every testcase as `classname|name` → its element. */
function testcases(xml: string): Map<string, string> {
  const cases = new Map<string, string>();
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(?:\/>|>[\s\S]*?<\/testcase>)/g)) cases.set(`${m[1]}|${m[2]}`, m[0]);
  return cases;
}

function check(name: string, line: number, passed: boolean, extra: Partial<CheckOutcome> = {}): CheckOutcome {
  return { name, command: `run ${name}`, exitCode: passed ? 0 : 1, passed, durationMs: 100, outputTail: passed ? "ok" : `${name} broke`, timedOut: false, line, ...extra };
}

function withChecks(result: TaskResult, checks: CheckOutcome[]): TaskResult {
  return { ...result, checks };
}

/** A trial of a repeated task `s/r` (3 planned). */
function trial(repeat: number, status: TaskResult["status"], checks: CheckOutcome[]): TaskResult {
  return { ...withChecks(sampleResult("s", "r", status, repeat), checks), trial: { repeat, variant: null } };
}

const REPEATED: Partial<ReportMeta> = { trialPlans: [{ suite: "s", id: "r", trials: 3, gate: { kind: "every" } }] };

describe("junit report, --junit-cases check", () => {
  test("one testcase per check: classname suite.id, the check's name and line, its own failure; no (task) when every trial ran its checks", async () => {
    const result = withChecks(sampleResult("s", "t", "failed"), [check("build", 5, true), check("test", 8, false)]);
    const xml = renderJUnitReport([result], checkMeta());
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.deepEqual([...cases.keys()], ["s.t|build", "s.t|test"]);
    assert.match(cases.get("s.t|build")!, /^<testcase classname="s.t" name="build" time="0.1" file="\/repo\/tasks\/s\/t.yaml" line="5">/);
    assert.doesNotMatch(cases.get("s.t|build")!, /<failure/);
    assert.match(cases.get("s.t|test")!, /<failure message="check &quot;test&quot; failed \(exit code 1\): test broke" type="check"><!\[CDATA\[check: test\ncommand: run test\nresult: exit code 1\noutput \(tail\):\ntest broke\]\]><\/failure>/);
    assert.doesNotMatch(cases.get("s.t|test")!, /build broke/);
    assert.match(xml, /<testsuite name="s" [^>]*tests="2" failures="1" errors="0" skipped="0"/);
  });

  test("a result of an older rhema (no line) gives no line attribute", () => {
    const { line: _line, ...old } = check("build", 1, true);
    const xml = renderJUnitReport([withChecks(sampleResult("s", "t", "passed"), [old])], checkMeta());
    assert.doesNotMatch(testcases(xml).get("s.t|build")!, / line=/);
  });

  test("an agent error before the checks is the (task) testcase's error; a task without checks passes as (task)", async () => {
    const errored = withChecks(sampleResult("s", "err", "errored"), []);
    const none = withChecks(sampleResult("s", "none", "passed"), []);
    const xml = renderJUnitReport([errored, none], checkMeta());
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.deepEqual([...cases.keys()], ["s.err|(task)", "s.none|(task)"]);
    assert.match(cases.get("s.err|(task)")!, /<error message="agent error step_cap: the turn hit its step cap \(40 steps\)" type="step_cap">/);
    assert.match(cases.get("s.err|(task)")!, /\[\[PROPERTY\|status=errored\]\]/);
    assert.doesNotMatch(cases.get("s.none|(task)")!, /<error|<failure|<skipped/);
  });

  test("a timeout during the checks: checks that ran keep their verdicts, the one it stopped and those it kept from running are skipped, (task) has the timeout", async () => {
    const timedOut: TaskResult = {
      ...sampleResult("s", "slow", "errored"),
      error: { code: "timeout", message: "the task's timeout of 1m passed" },
      checks: [
        check("a", 4, true), check("b", 5, false),
        check("c", 6, false, { exitCode: null, timedOut: true }),
        check("d", 7, false, { exitCode: null, durationMs: 0, outputTail: "", notRun: "not run: the task's timeout passed before it started" }),
      ],
    };
    const xml = renderJUnitReport([timedOut], checkMeta());
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.deepEqual([...cases.keys()], ["s.slow|(task)", "s.slow|a", "s.slow|b", "s.slow|c", "s.slow|d"]);
    assert.match(cases.get("s.slow|(task)")!, /<error message="timed out: the task's timeout of 1m passed; failed before it: check &quot;b&quot; failed \(exit code 1\): b broke" type="timeout">/);
    assert.doesNotMatch(cases.get("s.slow|a")!, /<failure|<skipped/);
    assert.match(cases.get("s.slow|b")!, /<failure message="check &quot;b&quot; failed/);
    assert.match(cases.get("s.slow|c")!, /<skipped message="stopped by the task's timeout before it finished"\/>/);
    assert.match(cases.get("s.slow|d")!, /<skipped message="not run: the task's timeout passed before it started"\/>/);
  });

  test("repeated trials, gate failed: a check's first failed trial is its failure, the others rerunFailure; a trial that errored is (task)'s error", async () => {
    const results = [
      trial(1, "failed", [check("x", 3, false), check("y", 4, true)]),
      trial(2, "errored", []),
      trial(3, "failed", [check("x", 3, false), check("y", 4, true)]),
    ];
    const xml = renderJUnitReport(results, checkMeta(REPEATED));
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.deepEqual([...cases.keys()], ["s.r|(task)", "s.r|x", "s.r|y"]);
    const x = cases.get("s.r|x")!;
    assert.match(x, /<failure message="trial 1\/3: check &quot;x&quot; failed \(exit code 1\): x broke" type="check">/);
    assert.match(x, /<rerunFailure message="trial 3\/3: check &quot;x&quot; failed \(exit code 1\): x broke" type="check">/);
    assert.match(x, /trial 1\/3: check "x" failed \(exit code 1\): x broke\ntrial 2\/3: no result for this check: the trial errored before it \(see \(task\)\)\ntrial 3\/3: check "x" failed/);
    assert.match(x, /\[\[PROPERTY\|status=failed\]\]\n\[\[PROPERTY\|counted=2\]\]\n\[\[PROPERTY\|passes=0\]\]/);
    assert.doesNotMatch(cases.get("s.r|y")!, /<failure|<rerun/);
    assert.match(cases.get("s.r|(task)")!, /<error message="trial 2\/3: agent error step_cap: [^"]*" type="step_cap">/);
    assert.match(cases.get("s.r|(task)")!, /\[\[PROPERTY\|trials=3\]\]/);
  });

  test("repeated trials, gate passed: the check passes with a flakyFailure per failed trial; an errored trial is a flakyError on (task)", async () => {
    const results = [
      trial(1, "failed", [check("x", 3, false)]),
      trial(2, "passed", [check("x", 3, true)]),
      trial(3, "errored", []),
    ];
    const xml = renderJUnitReport(results, checkMeta({ trialPlans: [{ suite: "s", id: "r", trials: 3, gate: { kind: "rate", min: 0.3, judgedOn: "rate" } }] }));
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.doesNotMatch(cases.get("s.r|x")!, /<failure/);
    assert.match(cases.get("s.r|x")!, /<flakyFailure message="trial 1\/3: check &quot;x&quot; failed/);
    assert.match(cases.get("s.r|(task)")!, /<flakyError message="trial 3\/3: agent error step_cap/);
    assert.doesNotMatch(cases.get("s.r|(task)")!, /<error /);
    assert.match(xml, /<testsuite name="s" [^>]*tests="2" failures="0" errors="0" skipped="0"/);
  });

  test("an interrupted trial, a matrix cell and a task the selection skipped are (task) testcases; the cell's class names its variant", async () => {
    const cell: TaskResult = { ...withChecks(sampleResult("s", "m", "passed"), [check("ok", 2, true)]), trial: { repeat: 1, variant: "model=a" } };
    const xml = renderJUnitReport([cell], checkMeta({
      unfinished: [{ suite: "s", id: "cut", file: "/repo/tasks/s/cut.yaml", state: "interrupted" }],
      skipped: [{ suite: "s", id: "left", file: "/repo/tasks/s/left.yaml", reason: "filter" }],
    }));
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.deepEqual([...cases.keys()], ["s.cut|(task)", "s.left|(task)", "s.m [model=a]|ok"]);
    assert.match(cases.get("s.cut|(task)")!, /<error message="interrupted: [^"]*" type="interrupted"\/?>/);
    assert.match(cases.get("s.left|(task)")!, /<skipped message="not selected by --filter"\/>/);
  });

  test("a quarantined task's failing check is a quarantined skip carrying its failure; its passing check passes", async () => {
    const result = withChecks(sampleResult("s", "q", "failed"), [check("good", 2, true), check("bad", 3, false)]);
    const xml = renderJUnitReport([result], checkMeta({ quarantine: { file: "/q.yaml", entries: [{ suite: "s", id: "q", reason: "flaky upstream" }] } }));
    await assertValidJUnit(xml);
    const cases = testcases(xml);
    assert.match(cases.get("s.q|bad")!, /<skipped message="quarantined: flaky upstream — check &quot;bad&quot; failed \(exit code 1\): bad broke"\/>/);
    assert.match(cases.get("s.q|bad")!, /quarantined \(flaky upstream\): this failure is reported but does not fail the gate\n\ncheck "bad" failed[\s\S]*output \(tail\):\nbad broke/);
    assert.doesNotMatch(cases.get("s.q|bad")!, /<failure/);
    assert.doesNotMatch(cases.get("s.q|good")!, /<skipped|<failure/);
    assert.match(cases.get("s.q|good")!, /\[\[PROPERTY\|quarantined=true\]\]/);
  });
});
