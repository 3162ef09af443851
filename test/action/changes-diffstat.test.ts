/**
 * The Action and changes.patch: the `changes` output lists each trial's patch, and
 * `comment-diffstat` turns the patches into a collapsed per-file diff stat for the PR comment.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { actionOutputs, type ActionRunOutcome } from "../../src/action/action-outcome.js";
import { diffstatComment, patchFileStats } from "../../src/action/changes-diffstat.js";
import type { TaskResult } from "../../src/runner/run-dir/task-result.js";
import { sampleResult } from "../runner/sample-results.js";

const PATCH = `diff --git a/src/app.js b/src/app.js
index 1111111..2222222 100644
--- a/src/app.js
+++ b/src/app.js
@@ -1,3 +1,3 @@
 keep
--- an old line that looks like a header
+++ a new line that looks like a header
+another
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/logo.png differ
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
`;

test("the changes output lists each trial's patch under the run directory; trials without one are left out", () => {
  const changed = (id: string, changes: TaskResult["changes"]): TaskResult => ({ ...sampleResult("s", id, "passed", 1), ...(changes ? { changes } : {}) });
  const stats = { files: 1, insertions: 1, deletions: 0, binary: 0, bytes: 10, truncated: false, leftOut: 0 };
  const outcome: ActionRunOutcome = {
    results: [changed("a", { path: "tasks/s/a/default/1/changes.patch", ...stats }), changed("b", { path: null, reason: "git was not found on PATH" }), changed("c", undefined)],
    interrupted: false, interruptedTasks: 0, runDir: "/run",
    reports: { junit: "/run/junit.xml", stats: "/run/stats.json", summary: "/run/summary.md" },
  };
  assert.equal(actionOutputs(outcome).changes, "/run/tasks/s/a/default/1/changes.patch");
  assert.equal(actionOutputs({ ...outcome, results: [] }).changes, "");
});

test("a patch's files with lines added and removed: hunk lines that look like headers counted, binary files marked", () => {
  assert.deepEqual(patchFileStats(PATCH), [
    { path: "src/app.js", added: 2, removed: 1, binary: false },
    { path: "logo.png", added: 0, removed: 0, binary: true },
    { path: "run.sh", added: 0, removed: 0, binary: false },
  ]);
});

test("the comment's diff stat is collapsed, per trial, leaving out trials that changed nothing", () => {
  const comment = diffstatComment([
    { label: "s/a", text: PATCH, truncated: true },
    { label: "s/idle", text: "", truncated: false },
    { label: "s/gone", text: null, truncated: false },
  ]);
  assert.equal(comment, [
    "<details>", "<summary>Changes: 2 trials changed files</summary>", "",
    "**s/a**", "", "```text", " src/app.js | +2 −1", " logo.png | Bin", " run.sh | +0 −0", " (the patch was cut at its size cap: files past it are not listed)", "```", "",
    "**s/gone**: changes.patch could not be read", "",
    "</details>", "",
  ].join("\n"));
  assert.equal(diffstatComment([{ label: "s/idle", text: "", truncated: false }]), "");
});
