/**
 * `--quarantine FILE` through the built CLI: a quarantined task's failure is reported (JUnit
 * `<skipped message="quarantined: …">` with the failure in system-out and `quarantined=true`,
 * valid against the XSD; stats.json and summary.md mark it) but the run exits 0 when only
 * quarantined tasks fail; a failure outside the list still exits 1; `report merge` keeps the
 * marking; `validate --quarantine` checks the file; a bad file is exit 2 at its line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { runCli } from "../support/cli.js";
import { junitXsd } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

async function assertValidJUnit(xml: string): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, result.rawOutput);
}

/** A scripted task whose one check runs `check`; `extra` is more YAML (repeats:). */
function task(check: string, extra = ""): string {
  return `prompt: Say done.
policy: ../policy.yaml
model: { provider: scripted, script: [{ say: done }] }
checks:
  - { name: the check, run: ${JSON.stringify(check)} }
${extra}`;
}

const SUITE = {
  "policy.yaml": OPEN_POLICY,
  "s/broken.yaml": task("echo upstream is down; false"),
  "s/broken-thrice.yaml": task("false", "repeats: 3\n"),
  "s/healed.yaml": task("true"),
  "s/fine.yaml": task("true"),
};

const QUARANTINE = `version: 1
quarantine:
  - task: s/broken
    reason: upstream outage
  - s/broken-thrice
  - s/healed
  - gone/renamed
`;

/** The testcase element named `name` (its whole text). */
function testcase(xml: string, name: string): string {
  const match = new RegExp(`<testcase classname="s" name="${name}"[\\s\\S]*?</testcase>`).exec(xml);
  assert.ok(match, `no testcase ${name}`);
  return match[0];
}

test("only quarantined tasks fail: exit 0, each reported as a quarantined skip with its failure, valid JUnit; stats and summary mark them", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { ...SUITE, "q ü.yaml": QUARANTINE });
  const out = join(root, "run");
  const run = await runCli(["run", "s", "--out", out, "--sandbox", "off", "--quarantine", "q ü.yaml"], { cwd: root });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stderr, /q ü\.yaml:7:5: quarantine lists gone\/renamed, which the suite does not define: the entry is ignored/);
  assert.match(run.stdout, /Quarantined: 3 tasks, 2 not passing \(reported, not failing the run\): s\/broken failed, s\/broken-thrice failed/);

  const junit = await readFile(join(out, "junit.xml"), "utf8");
  await assertValidJUnit(junit);
  assert.match(junit, /<testsuite name="s" [^>]*tests="4" failures="0" errors="0" skipped="2">/);
  const broken = testcase(junit, "broken");
  assert.match(broken, /<skipped message="quarantined: upstream outage — failed: check &quot;the check&quot; failed \(exit code 1\): upstream is down"\/>/);
  assert.match(broken, /<system-out><!\[CDATA\[quarantined \(upstream outage\): this failure is reported but does not fail the gate\n\ncheck "the check" failed[\s\S]*command: echo upstream is down; false\nresult: exit code 1\noutput \(tail\):\nupstream is down/);
  assert.match(broken, /\[\[PROPERTY\|status=failed\]\][\s\S]*\[\[PROPERTY\|quarantined=true\]\]/);
  assert.doesNotMatch(broken, /<failure/);
  const thrice = testcase(junit, "broken-thrice");
  assert.match(thrice, /<skipped message="quarantined — failed: 0 of 3 trials passed \(gate: every trial\)"\/>/);
  assert.equal([...thrice.matchAll(/trial \d\/3: failed\ncheck "the check" failed/g)].length, 3);
  assert.doesNotMatch(thrice, /<failure|<rerunFailure/);
  assert.match(testcase(junit, "healed"), /\[\[PROPERTY\|quarantined=true\]\]/);
  assert.doesNotMatch(testcase(junit, "healed"), /<skipped/);
  assert.doesNotMatch(testcase(junit, "fine"), /quarantined/);
  for (const id of ["broken", "broken-thrice", "healed"]) assert.match(junit, new RegExp(`<property name="task\\.${id}\\.quarantined" value="true"/>`));

  const stats = JSON.parse(await readFile(join(out, "stats.json"), "utf8")) as {
    quarantine: unknown; taskTrials: { id: string; status: string; quarantine: unknown }[];
  };
  assert.deepEqual(stats.quarantine, {
    file: join(root, "q ü.yaml"),
    entries: [
      { suite: "s", id: "broken", reason: "upstream outage" }, { suite: "s", id: "broken-thrice", reason: null },
      { suite: "s", id: "healed", reason: null }, { suite: "gone", id: "renamed", reason: null },
    ],
  });
  assert.deepEqual(stats.taskTrials.map((e) => [e.id, e.status, e.quarantine]), [
    ["broken", "failed", { reason: "upstream outage" }], ["broken-thrice", "failed", { reason: null }], ["fine", "passed", null], ["healed", "passed", { reason: null }],
  ]);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /#### Quarantine\n\n3 quarantined tasks \(`--quarantine`\), 2 not passing: their failures are reported but do not fail the run\./);
  assert.match(summary, /\| 🔒 \| `s\/broken` \| ❌ failed \| upstream outage \| reported, does not fail the run \|/);
  assert.match(summary, /\| 🔒 \| `s\/broken-thrice` \| ❌ failed \(0 of 3 trials\) \| — \| reported, does not fail the run \|/);
  assert.match(summary, /\| 🔒 \| `s\/healed` \| ✅ passed \| — \| passed: could leave quarantine \|/);

  // report merge keeps the marking: it reads the quarantine list back from stats.json.
  const merged = join(root, "merged");
  const merge = await runCli(["report", "merge", out, "--out", merged], { cwd: root });
  assert.equal(merge.code, 0, merge.stderr);
  const mergedJunit = await readFile(join(merged, "junit.xml"), "utf8");
  await assertValidJUnit(mergedJunit);
  assert.equal(testcase(mergedJunit, "broken"), broken);
  assert.deepEqual((JSON.parse(await readFile(join(merged, "stats.json"), "utf8")) as { quarantine: unknown }).quarantine, stats.quarantine);

  // --junit-cases trial: each failed trial of a quarantined task is a quarantined skip.
  const trials = await runCli(["report", "merge", out, "--out", join(root, "by-trial"), "--junit-cases", "trial"], { cwd: root });
  assert.equal(trials.code, 0, trials.stderr);
  const byTrial = await readFile(join(root, "by-trial", "junit.xml"), "utf8");
  await assertValidJUnit(byTrial);
  assert.match(testcase(byTrial, "broken-thrice#2"), /<skipped message="quarantined — trial 2\/3 failed: check &quot;the check&quot; failed \(exit code 1\)"\/>/);
});

test("a failure outside the quarantine list still exits 1; without the list the same run exits 1", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { ...SUITE, "q.yaml": "version: 1\nquarantine: [s/broken]\n" });
  const partly = await runCli(["run", "s", "--out", join(root, "a"), "--sandbox", "off", "--quarantine", "q.yaml"], { cwd: root });
  assert.equal(partly.code, 1, "s/broken-thrice is not quarantined");
  const junit = await readFile(join(root, "a", "junit.xml"), "utf8");
  await assertValidJUnit(junit);
  assert.match(testcase(junit, "broken-thrice"), /<failure /);
  assert.match(testcase(junit, "broken"), /<skipped message="quarantined — failed: /);
  const none = await runCli(["run", "s", "--out", join(root, "b"), "--sandbox", "off"], { cwd: root });
  assert.equal(none.code, 1);
  assert.doesNotMatch(await readFile(join(root, "b", "junit.xml"), "utf8"), /quarantined/);
});

test("a bad quarantine file is exit 2 at its line before anything runs; validate --quarantine checks it", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { ...SUITE, "bad.yaml": "version: 1\nquarantine:\n  - s/broken\n  - s/broken#2\n", "q.yaml": QUARANTINE });
  const out = join(root, "run");
  const bad = await runCli(["run", "s", "--out", out, "--sandbox", "off", "--quarantine", "bad.yaml"], { cwd: root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /bad\.yaml:4:5: quarantine\.1: expected a task label suite\/id/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /);
  await assert.rejects(readFile(join(out, "manifest.json")), "nothing was written");

  const invalid = await runCli(["validate", "s", "--quarantine", "bad.yaml"], { cwd: root });
  assert.equal(invalid.code, 2);
  assert.match(invalid.stderr, /bad\.yaml:4:5: quarantine\.1: /);
  const valid = await runCli(["validate", "s", "--quarantine", "q.yaml"], { cwd: root });
  assert.equal(valid.code, 0, valid.stderr);
  assert.match(valid.stdout, /valid: 4 tasks in 1 suite, .*, a quarantine file of 4 tasks/);
  assert.match(valid.stderr, /q\.yaml:7:5: quarantine lists gone\/renamed, which the suite does not define/);
  await writeFile(join(root, "empty.yaml"), "");
  const empty = await runCli(["validate", "s", "--quarantine", "empty.yaml"], { cwd: root });
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /empty\.yaml:1:1: \(root\): the quarantine file is empty/);
});

test("a quarantine file among the tasks is told by its top level: never run as a task, checked by validate, applied only when named", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { ...SUITE, "s/quarantine.yaml": QUARANTINE });
  const ran = await runCli(["run", "s/fine.yaml", "s/quarantine.yaml", "--out", "run", "--sandbox", "off"], { cwd: root });
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(await readFile(join(root, "run", "junit.xml"), "utf8"), /tests="1"/, "only the task ran");
  const valid = await runCli(["validate", "s"], { cwd: root });
  assert.equal(valid.code, 0, valid.stderr);
  await writeFile(join(root, "s", "quarantine.yaml"), "version: 1\nquarantine:\n  - { task: s/fine, reasn: flaky }\n");
  const invalid = await runCli(["validate", "s"], { cwd: root });
  assert.equal(invalid.code, 2, invalid.stdout);
  assert.match(invalid.stderr, /s\/quarantine\.yaml:3:\d+: quarantine\.0: unknown key `reasn`/);
  await writeFile(join(root, "s", "quarantine.yaml"), "version: 1\nquarantine:\n  - s/*\n");
  const glob = await runCli(["validate", "s"], { cwd: root });
  assert.equal(glob.code, 2, glob.stdout);
  assert.match(glob.stderr, /s\/quarantine\.yaml:3:5: quarantine\.0: expected a task label suite\/id \(.*no glob/);
});
