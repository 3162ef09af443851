/**
 * Failures say why, the same way in every report, through the built CLI: a failed setup's reason
 * ("command not found") whole — never cut at the colon, never "agent error" — in summary.md,
 * junit.xml and the Action's annotation and job summary; a timeout during checks shows the checks
 * that had already failed; an agent error keeps its label; a check's excerpt leads with the error
 * line of node:test output; JUnit's `<skipped message="…">` says why; junit.xml validates against
 * schema/junit/junit-10-ext.xsd (the schema rhema writes to).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { runAnnotations } from "../../src/action/action-outcome.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { junitXsd } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const say = `model:
  provider: scripted
  script:
    - say: done
`;

const FILES: Record<string, string> = {
  "policy.yaml": OPEN_POLICY,
  "suite/bad-setup.yaml": `prompt: Say done.
policy: ../policy.yaml
workspace: { setup: ["rhema-no-such-command --version"] }
${say}checks:
  - { name: ok, run: "true" }
`,
  "suite/slow-checks.yaml": `prompt: Say done.
policy: ../policy.yaml
limits: { timeout: 3s }
${say}checks:
  - { name: unit, run: "echo 'Error: expected 2, got 3' >&2; exit 1" }
  - { name: slow, run: "sleep 60" }
  - { name: never, run: "true" }
`,
  "suite/capped.yaml": `prompt: Run things.
policy: ../policy.yaml
limits: { maxSteps: 1 }
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "true" }
    - call: shell
      input: { command: "true" }
    - say: done
checks:
  - { name: ok, run: "true" }
`,
  "suite/node-test.yaml": `prompt: Say done.
policy: ../policy.yaml
${say}checks:
  - { name: node test, run: "node --test --test-reporter=spec adds.test.mjs" }
workspace: { from: ../fixture }
`,
  "fixture/adds.test.mjs": `import test from "node:test";
import assert from "node:assert/strict";
test("adds", () => {
  for (let i = 0; i < 3; i += 1) console.log("noise line " + i);
  assert.equal(1 + 1, 3);
});
`,
  "suite/later.yaml": `prompt: Say done.
policy: ../policy.yaml
tags: [later]
${say}`,
};

async function assertValidJUnit(xml: string): Promise<void> {
  for (const name of ["junit-10-ext.xsd"] as const) {
    const xsd = await readFile(junitXsd(name), "utf8");
    const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: name, contents: xsd }] });
    assert.ok(result.valid, `${name}: ${result.rawOutput}`);
  }
}

const testCase = (xml: string, id: string) => new RegExp(`<testcase classname="suite" name="${id}"[\\s\\S]*?</testcase>`).exec(xml)?.[0] ?? "";

test("each failure kind says why, whole and with its own label, in summary.md, junit.xml and the Action's annotations", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, FILES);
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out, "--concurrency", "2"], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const results = Object.fromEntries((await readRunResults(out)).map((r) => [r.id, r]));
  assert.equal(results["bad-setup"]?.error?.code, "setup_failed");
  assert.equal(results["slow-checks"]?.error?.code, "timeout");
  assert.equal(results.capped?.error?.code, "step_cap");

  // summary.md (the Action's job summary is this file, appended).
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /\*\*suite\/bad-setup\*\* — setup failed: setup command \\`rhema-no-such-command --version\\` exited 127: .*rhema-no-such-command: .*not found/);
  assert.doesNotMatch(summary, /bad-setup\*\* — agent error/);
  assert.match(summary, /\*\*suite\/slow-checks\*\* — timed out: the task's timeout of 3000 ms passed while check "slow" ran/);
  assert.match(summary, /\*\*suite\/slow-checks\*\* — check `unit` failed \(exit 1\)\n\n```text\nError: expected 2, got 3\n```/);
  assert.match(summary, /\*\*suite\/slow-checks\*\* — check `slow` timed out/);
  assert.match(summary, /\*\*suite\/slow-checks\*\* — check `never` not run: the task's timeout passed before it started/);
  assert.match(summary, /\*\*suite\/capped\*\* — agent error `step_cap`: /);
  assert.match(summary, /\*\*suite\/node-test\*\* — check `node test` failed \(exit 1\)\n\n```text\nAssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:\n/);

  // junit.xml: the same labels and reasons; valid against the ext schema.
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  await assertValidJUnit(junit);
  assert.match(testCase(junit, "bad-setup"), /<error message="setup failed: setup command `rhema-no-such-command --version` exited 127: [^"]*rhema-no-such-command: [^"]*not found" type="setup_failed">/);
  assert.match(testCase(junit, "slow-checks"), /<error message="timed out: the task's timeout of 3000 ms passed while check &quot;slow&quot; ran: it was stopped, and the checks after it did not run; failed before it: check &quot;unit&quot; failed \(exit code 1\): Error: expected 2, got 3" type="timeout">/);
  assert.match(testCase(junit, "slow-checks"), /check: unit\ncommand: [^\n]*\nresult: exit code 1\noutput \(tail\):\nError: expected 2, got 3/);
  assert.match(testCase(junit, "capped"), /<error message="agent error step_cap: [^"]+" type="step_cap">/);

  // The Action's annotations: the same headline, the reason whole.
  const annotations = runAnnotations({
    results: Object.values(results), interrupted: false, interruptedTasks: 0, runDir: out,
    reports: { junit: join(out, "junit.xml"), stats: join(out, "stats.json"), summary: join(out, "summary.md") },
  }, root);
  const errorOf = (id: string) => annotations.find((a) => a.level === "error" && a.title === `suite/${id}`)?.message ?? "";
  assert.match(errorOf("bad-setup"), /^setup failed: setup command `rhema-no-such-command --version` exited 127: .*rhema-no-such-command: .*not found$/);
  assert.match(errorOf("slow-checks"), /^timed out: the task's timeout of 3000 ms passed while check "slow" ran: it was stopped, and the checks after it did not run; failed before it: check "unit" failed \(exit code 1\): Error: expected 2, got 3$/);
  assert.match(errorOf("capped"), /^agent error step_cap: /);
  assert.match(errorOf("node-test"), /^check "node test" failed \(exit code 1\): AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:$/);
});

test("a task left out by --tag is <skipped message=…> in junit.xml, saying why", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/later.yaml": FILES["suite/later.yaml"]!, "suite/now.yaml": `prompt: Say done.\npolicy: ../policy.yaml\ntags: [now]\n${say}` });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out, "--tag", "now", "--report-skipped"], { cwd: root });
  assert.equal(run.code, 0, run.stderr);
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  await assertValidJUnit(junit);
  assert.match(testCase(junit, "later"), /<skipped message="not selected by --tag"\/>/);
});
