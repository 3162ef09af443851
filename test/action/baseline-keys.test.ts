/**
 * The baseline's names and keys (a restore finds only its name's and shard's newest entry), what
 * a saved baseline keeps, and the Actions cache paths: the same list for save and restore.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { baselineName, baselineNameOfKey, baselineRestoreKeys, baselineSaveKey, baselineSource, keptInBaseline } from "../../src/action/baseline.js";
import { cachePaths } from "../../src/action/run-cache.js";

test("a base run saves under its name, shard, run and attempt; a restore's prefix is the name and the shard", () => {
  const scope = { workflow: "rhema gate", ref: "release/1-2", shard: "2/4", runId: "99", attempt: 3 };
  assert.equal(baselineName(scope), "rhema-baseline-rhema_gate-release_1_2");
  const key = baselineSaveKey(scope);
  assert.equal(key, "rhema-baseline-rhema_gate-release_1_2-2_4-99-3");
  assert.equal(baselineNameOfKey(key), baselineName(scope));
  const restore = baselineRestoreKeys(baselineName(scope), "2/4");
  assert.ok(key.startsWith(restore.restoreKeys[0]!));
  assert.ok(!baselineSaveKey({ ...scope, shard: "3/4" }).startsWith(restore.restoreKeys[0]!), "another shard's");
  assert.ok(!baselineSaveKey({ ...scope, ref: "release/1-2x" }).startsWith(restore.restoreKeys[0]!), "another branch's");
  assert.equal(baselineSaveKey({ ...scope, shard: null }), "rhema-baseline-rhema_gate-release_1_2-all-99-3");
});

test("the baseline input: a rhema-baseline- name is a cache entry, anything else a path", () => {
  assert.deepEqual(baselineSource("rhema-baseline-gate-main"), { kind: "cache", name: "rhema-baseline-gate-main" });
  assert.deepEqual(baselineSource("runs/base"), { kind: "path", path: "runs/base" });
});

test("a saved baseline keeps everything but the lock and the trials' workspaces", () => {
  assert.equal(keptInBaseline("rhema.lock"), false);
  assert.equal(keptInBaseline("tasks/s/t/default/1/workspace"), false);
  assert.equal(keptInBaseline("tasks/s/t/workspace"), false, "layout 1");
  for (const kept of ["manifest.json", "stats.json", "tasks/s/t/default/1/result.json", "tasks/workspace", "tasks/s/workspace", "tasks/s/t/default/1/workspace.json"]) {
    assert.equal(keptInBaseline(kept), true, kept);
  }
});

test("the Actions cache paths: relative to the workspace inside it, the lock excluded", () => {
  assert.deepEqual(cachePaths("/w/.rhema/baseline", "/w"), [".rhema/baseline", "!.rhema/baseline/rhema.lock", "!.rhema/baseline/prepared", "!.rhema/baseline/tasks/**/layer/work"]);
  assert.deepEqual(cachePaths("/elsewhere/run", "/w"), ["/elsewhere/run", "!/elsewhere/run/rhema.lock", "!/elsewhere/run/prepared", "!/elsewhere/run/tasks/**/layer/work"]);
});
