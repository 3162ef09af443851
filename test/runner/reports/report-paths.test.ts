/** Task file paths as reports show them: relative to the nearest repository root, else to the working directory. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { repositoryRelativePaths } from "../../../src/runner/reports/report-paths.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

test("a task file is shown relative to the nearest folder holding .git (a folder, or a worktree's file)", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "repo/.git/HEAD": "ref: refs/heads/main\n",
    "repo/tasks/arith/add.yaml": "prompt: x\n",
    "repo/vendor/wt/.git": "gitdir: /elsewhere\n",
    "repo/vendor/wt/tasks/t.yaml": "prompt: x\n",
  });
  const add = join(root, "repo/tasks/arith/add.yaml");
  const inWorktree = join(root, "repo/vendor/wt/tasks/t.yaml");
  assert.deepEqual(await repositoryRelativePaths([add, inWorktree, add], "/somewhere/else"), {
    [add]: "tasks/arith/add.yaml",
    [inWorktree]: "tasks/t.yaml",
  });
});

test("outside any repository the path is relative to the working directory; outside that too it is left out", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "work/suite/a.yaml": "prompt: x\n", "other/b.yaml": "prompt: x\n" });
  const a = join(root, "work/suite/a.yaml");
  const b = join(root, "other/b.yaml");
  assert.deepEqual(await repositoryRelativePaths([a, b], join(root, "work")), { [a]: "suite/a.yaml" });
  assert.deepEqual(await repositoryRelativePaths([a], null), {});
});
