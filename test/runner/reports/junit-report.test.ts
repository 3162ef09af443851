import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { validateXML } from "xmllint-wasm";
import { renderJUnitReport } from "../../../src/runner/reports/junit-report.js";
import type { SkippedTask } from "../../../src/runner/tasks/task-key.js";
import { junitXsd } from "../../support/paths.js";
import { sampleMeta, sampleResult, sampleRun } from "../sample-results.js";

async function assertValidJUnit(xml: string): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, result.rawOutput);
}

/** The opening tag of the testcase for `id`, and everything up to its end. */
function testCase(xml: string, id: string): string {
  const match = new RegExp(`<testcase [^>]*name="${id}"[^>]*?(/>|>[\\s\\S]*?</testcase>)`).exec(xml);
  assert.ok(match, `no testcase ${id}`);
  return match[0];
}

const skipped: SkippedTask[] = [
  { suite: "strings", id: "slow-one", file: "/repo/tasks/strings/slow-one.yaml", reason: "tag" },
  { suite: "extra", id: "only-skipped", file: "/repo/tasks/extra/only-skipped.yaml", reason: "filter" },
];

describe("junit report", () => {
  test("validates against junit-10-ext.xsd, with skipped cases, tricky output and no results at all", async () => {
    await assertValidJUnit(renderJUnitReport(sampleRun(), sampleMeta({ skipped })));
    await assertValidJUnit(renderJUnitReport([], sampleMeta()));
    const tricky = sampleResult("s", "x", "failed");
    tricky.checks[0]!.outputTail = "a ]]> b ]]> c \u0001 \u001b[31mred\u001b[0m <tag> & \"q\"";
    tricky.finalAnswer = "done ]]> <![CDATA[ nested";
    await assertValidJUnit(renderJUnitReport([tricky], sampleMeta()));
  });

  test("one testsuite per suite in order, one testcase per task with classname and time", () => {
    const xml = renderJUnitReport([...sampleRun()].reverse(), sampleMeta());
    const suites = [...xml.matchAll(/<testsuite name="([^"]+)"[^>]*tests="(\d+)" failures="(\d+)" errors="(\d+)"/g)].map((m) => m.slice(1).join(" "));
    assert.deepStrictEqual(suites, ["arithmetic 3 1 1", "strings 3 1 0", "zeta 3 0 0"]);
    assert.match(xml, /<testsuites name="rhema run run-1" tests="9" failures="2" errors="1" skipped="0">/);
    assert.match(testCase(xml, "task-04"), /^<testcase classname="strings" name="task-04" time="5.936" file="\/repo\/tasks\/strings\/task-04.yaml">/);
  });

  test("a failed check is a failure with the check's name, exit code, error line and output tail", () => {
    const failed = testCase(renderJUnitReport(sampleRun(), sampleMeta()), "task-01");
    assert.match(failed, /<failure message="check &quot;unit tests&quot; failed \(exit code 1\): not ok 1 - adds" type="check"><!\[CDATA\[check: unit tests\ncommand: npm test\nresult: exit code 1\noutput \(tail\):\nnot ok 1 - adds/);
    assert.doesNotMatch(failed, /<error/);
  });

  test("a timed-out check says so", () => {
    const result = sampleResult("s", "slow", "failed");
    result.checks[0] = { ...result.checks[0]!, exitCode: null, timedOut: true, durationMs: 30_000 };
    assert.match(renderJUnitReport([result], sampleMeta()), /failed \(timed out after 30s\): not ok 1 - adds" type="check"/);
  });

  test("an agent failure is an error typed by its code", () => {
    const errored = testCase(renderJUnitReport(sampleRun(), sampleMeta()), "task-03");
    assert.match(errored, /<error message="agent error step_cap: the turn hit its step cap \(40 steps\)" type="step_cap">/);
    assert.doesNotMatch(errored, /<failure/);
  });

  test("a task stopped on a budget is an error of type budget naming the budget, and validates", async () => {
    const xml = renderJUnitReport([...sampleRun(), sampleResult("zeta", "pricey", "stopped", 2)], sampleMeta());
    const stopped = testCase(xml, "pricey");
    assert.match(stopped, /<error message="stopped: the task's cost budget of \$0\.0100 is spent \(\$0\.0123\): stopped before the next model request" type="budget">/);
    assert.match(stopped, /\[\[PROPERTY\|status=stopped\]\]/);
    await assertValidJUnit(xml);
  });

  test("system-out carries the final answer, the transcript path and policy denials", () => {
    const passed = testCase(renderJUnitReport(sampleRun(), sampleMeta()), "task-00");
    assert.match(passed, /<system-out><!\[CDATA\[Fixed task-00\.\n\ntranscript: tasks\/arithmetic\/task-00\/events\.jsonl\npolicy denials: 2\n  shell denied by no-push: no pushes from CI\n  write_file denied by default: default deny\n\n\[\[PROPERTY\|status=passed\]\]\n/);
  });

  test("suite properties carry suite totals and each task's stats and denials", () => {
    const xml = renderJUnitReport(sampleRun(), sampleMeta());
    for (const property of [
      '<property name="suite.policyDenials" value="4"/>',
      '<property name="suite.requests" value="12"/>',
      '<property name="task.task-00.cacheReadTokens" value="4000"/>',
      '<property name="task.task-00.cacheHitRate" value="0.7273"/>',
      '<property name="task.task-00.policyDenials" value="2"/>',
      '<property name="task.task-03.status" value="errored"/>',
    ]) assert.ok(xml.includes(property), property);
    assert.ok(!xml.includes('name="task.task-03.requests"'), "a task without stats has no stats properties");
  });

  test("skipped test cases appear only when meta lists them", () => {
    assert.doesNotMatch(renderJUnitReport(sampleRun(), sampleMeta()), /<skipped/);
    const xml = renderJUnitReport(sampleRun(), sampleMeta({ skipped }));
    assert.match(testCase(xml, "slow-one"), /classname="strings"[\s\S]*<skipped message="not selected by --tag"\/>[\s\S]*not selected by --tag/);
    assert.match(xml, /<testsuite name="extra" time="0" tests="1" failures="0" errors="0" skipped="1">/);
    assert.match(xml, /<testsuites name="rhema run run-1" tests="11" failures="2" errors="1" skipped="2">/);
  });

  test("timestamps are the results' ISO times, not local time", () => {
    const xml = renderJUnitReport(sampleRun(), sampleMeta());
    assert.match(xml, /<testsuite name="arithmetic" time="14.106" timestamp="2025-01-02T03:04:05.000Z"/);
  });
});

describe("junit report of an interrupted run", () => {
  const unfinished = [
    { suite: "arithmetic", id: "task-01b", file: "/repo/tasks/arithmetic/task-01b.yaml", state: "interrupted" as const },
    { suite: "late", id: "never", file: "/repo/tasks/late/never.yaml", state: "not_started" as const },
  ];

  test("lists a running task as an interrupted error and a never-started one as skipped, and stays valid", async () => {
    const xml = renderJUnitReport(sampleRun(), sampleMeta({ unfinished }));
    await assertValidJUnit(xml);
    assert.match(testCase(xml, "task-01b"), /^<testcase classname="arithmetic" name="task-01b" time="0" file="\/repo\/tasks\/arithmetic\/task-01b.yaml">\s*<error message="interrupted: the run stopped while this task ran; the same command continues it from its checkpoint" type="interrupted"\/>/);
    assert.match(testCase(xml, "never"), /<skipped message="not started: the run was interrupted"\/>\s*<system-out><!\[CDATA\[not started: the run was interrupted\n\n\[\[PROPERTY\|status=not_started\]\]\]\]><\/system-out>/);
    assert.match(xml, /<testsuites name="rhema run run-1" tests="11" failures="2" errors="2" skipped="1">/);
    const order = [...xml.matchAll(/<testcase [^>]*name="([^"]+)"/g)].map((m) => m[1]).slice(0, 4);
    assert.deepStrictEqual(order, ["task-00", "task-01b", "task-03", "task-06"], "testcases stay in id order within their suite");
  });
});

describe("junit report for consumers", () => {
  test("a testcase's file is the path meta gives for it (relative to the repository), else the absolute one", () => {
    const xml = renderJUnitReport(sampleRun(), sampleMeta({ displayFiles: { "/repo/tasks/strings/task-04.yaml": "tasks/strings/task-04.yaml" } }));
    assert.match(testCase(xml, "task-04"), /file="tasks\/strings\/task-04.yaml"/);
    assert.match(testCase(xml, "task-01"), /file="\/repo\/tasks\/strings\/task-01.yaml"/);
  });
});

describe("junit testcase-level figures", () => {
  test("each testcase's system-out ends with its figures as [[PROPERTY|name=value]] lines, valid under both schemas", async () => {
    const xml = renderJUnitReport(sampleRun(), sampleMeta());
    const out = /<system-out><!\[CDATA\[([\s\S]*?)\]\]><\/system-out>/.exec(testCase(xml, "task-00"))![1]!;
    const properties = Object.fromEntries([...out.matchAll(/^\[\[PROPERTY\|([^=]+)=(.*)\]\]$/gm)].map((m) => [m[1], m[2]]));
    assert.deepStrictEqual(
      { status: properties.status, steps: properties.steps, cacheReadTokens: properties.cacheReadTokens, cacheHitRate: properties.cacheHitRate, policyDenials: properties.policyDenials },
      { status: "passed", steps: "2", cacheReadTokens: "4000", cacheHitRate: "0.7273", policyDenials: "2" },
    );
    assert.equal(/\[\[PROPERTY\|requests=/.test(testCase(xml, "task-03")), false, "a task without stats has no stats figures");
    await assertValidJUnit(xml);
    const strict = await readFile(junitXsd("junit-10.xsd"), "utf8");
    const withoutFile = xml.replace(/ file="[^"]*"/g, "").replace(/(<testsuites [^>]*) skipped="\d+"/, "$1");
    const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: withoutFile }], schema: [{ fileName: "junit-10.xsd", contents: strict }] });
    assert.ok(result.valid, `only file= and <testsuites skipped=> are outside strict junit-10.xsd: ${result.rawOutput}`);
  });

  test("what a task's commands ran in is a figure of its testcase and its suite: sandbox (bwrap, none, off) and network", async () => {
    const boxed = { ...sampleResult("s", "boxed", "passed"), sandbox: { mode: "bwrap" as const, network: "deny" as const } };
    const bare = { ...sampleResult("s", "bare", "passed"), sandbox: { mode: "none" as const, network: "allow" as const, reason: "bwrap is not installed" } };
    const older = sampleResult("s", "older", "passed");
    const xml = renderJUnitReport([boxed, bare, older], sampleMeta());
    assert.match(testCase(xml, "boxed"), /\[\[PROPERTY\|sandbox=bwrap\]\]\n\[\[PROPERTY\|network=deny\]\]/);
    assert.match(testCase(xml, "bare"), /\[\[PROPERTY\|sandbox=none\]\]\n\[\[PROPERTY\|network=allow\]\]/);
    assert.equal(/PROPERTY\|sandbox=/.test(testCase(xml, "older")), false, "a result from before sandboxes has none");
    assert.match(xml, /<property name="task.boxed.sandbox" value="bwrap"\/>\s*<property name="task.boxed.network" value="deny"\/>/);
    await assertValidJUnit(xml);
  });

  test("with the run directory's place each testcase names report.html with its trial's deep link and attaches it; a key's #, = and , are encoded whole", () => {
    const cell = { ...sampleResult("s", "t", "failed"), trial: { repeat: 2, variant: "model=a,limits=b" } };
    const xml = renderJUnitReport([cell], sampleMeta({ runDirShown: "runs/x", trialPlans: [{ suite: "s", id: "t", variant: "model=a,limits=b", trials: 2, gate: { kind: "every" } }] }));
    const fragment = `#trial=${encodeURIComponent("s/t@model=a,limits=b#2")}`;
    assert.equal(fragment, "#trial=s%2Ft%40model%3Da%2Climits%3Db%232");
    assert.ok(xml.includes(`report: runs/x/report.html${fragment}\n[[ATTACHMENT|runs/x/report.html]]`), xml);
    const trialCases = renderJUnitReport([cell], sampleMeta({ runDirShown: "runs/x", junitCases: "trial", trialPlans: [{ suite: "s", id: "t", variant: "model=a,limits=b", trials: 2, gate: { kind: "every" } }] }));
    assert.ok(trialCases.includes(`report: runs/x/report.html${fragment}`), "a trial's own testcase links it too");
    assert.ok(!renderJUnitReport([cell], sampleMeta()).includes("report.html"), "no place, no link");
  });
});
