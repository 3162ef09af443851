/**
 * changes.patch through the built CLI: a check reads it through `$RHEMA_CHANGES` (in the sandbox
 * when there is one), so "the agent changed nothing" fails a task; what setup wrote is not in it;
 * result.json, summary.md and junit.xml (an `[[ATTACHMENT|…]]` relative to the repository root,
 * valid against the ext schema) link it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { junitXsd } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const task = (script: string) => `prompt: Tag it.
policy: ../policy.yaml
workspace: { from: ../fixture, setup: ["echo made by setup > setup.txt"] }
model:
  provider: scripted
  script:
${script}checks:
  - { name: changed something, run: 'test -s "$RHEMA_CHANGES"' }
  - { name: patch names the tag, run: 'grep -q "^+one$" "$RHEMA_CHANGES" && ! grep -q setup.txt "$RHEMA_CHANGES"' }
`;

const FILES: Record<string, string> = {
  "policy.yaml": OPEN_POLICY,
  "fixture/README.md": "hello\n",
  "suite/changed.yaml": task(`    - call: shell
      input: { command: "echo one >> tags.txt" }
    - say: tagged
`),
  "suite/idle.yaml": task(`    - say: done, nothing to change
`),
};

test("a check tells an agent that changed nothing by $RHEMA_CHANGES; the reports link each patch", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, FILES);
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const results = Object.fromEntries((await readRunResults(out)).map((r) => [r.id, r]));
  assert.equal(results.changed?.status, "passed", JSON.stringify(results.changed?.checks));
  assert.equal(results.idle?.status, "failed");
  assert.deepEqual(results.idle?.checks.map((c) => c.passed), [false, false]);
  const patchPath = "tasks/suite/changed/default/1/changes.patch";
  assert.deepEqual(results.changed?.changes, { path: patchPath, files: 1, insertions: 1, deletions: 0, binary: 0, bytes: 125, truncated: false, leftOut: 0 });
  assert.deepEqual(results.idle?.changes, { path: "tasks/suite/idle/default/1/changes.patch", files: 0, insertions: 0, deletions: 0, binary: 0, bytes: 0, truncated: false, leftOut: 0 });
  assert.equal(await readFile(join(out, patchPath), "utf8"), "diff --git a/tags.txt b/tags.txt\nnew file mode 100644\nindex 0000000..5626abf\n--- /dev/null\n+++ b/tags.txt\n@@ -0,0 +1 @@\n+one\n");

  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, /#### Changes\n\n- ✅ `suite\/changed`: 1 file, \+1 −0 — `tasks\/suite\/changed\/default\/1\/changes\.patch`\n- ❌ `suite\/idle`: no changes — `tasks\/suite\/idle\/default\/1\/changes\.patch`/);

  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(junit, /changes: tasks\/suite\/changed\/default\/1\/changes\.patch \(1 file, \+1 −0\)\n\[\[ATTACHMENT\|run\/tasks\/suite\/changed\/default\/1\/changes\.patch\]\]/);
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const valid = await validateXML({ xml: [{ fileName: "junit.xml", contents: junit }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(valid.valid, valid.rawOutput);
});
