/**
 * The run directory's cache keys and the folder adapter of the cache port: one key per attempt,
 * a re-run restoring the newest earlier attempt of the same run (never another run's, shard's or
 * job's), the lock left out, entries immutable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, utimes } from "node:fs/promises";
import { join } from "node:path";
import { folderCache, runCacheKeys, type CacheScope } from "../../src/action/run-cache.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const scope: CacheScope = { workflow: "rhema nightly", job: "shard", shard: "2/4", out: ".rhema/runs/shard-2", runId: "99", attempt: 3 };

test("keys name workflow, job, shard, out, run and attempt; the restore key is the run's prefix", () => {
  assert.deepEqual(runCacheKeys(scope), {
    key: "rhema-rhema_nightly-shard-2_4-.rhema_runs_shard_2-99-3",
    restoreKeys: ["rhema-rhema_nightly-shard-2_4-.rhema_runs_shard_2-99-"],
  });
  assert.notEqual(runCacheKeys({ ...scope, shard: "3/4" }).restoreKeys[0], runCacheKeys(scope).restoreKeys[0]);
});

test("the folder cache restores the newest earlier attempt of the same run, without the lock", async (t) => {
  const root = await tempDir(t);
  const cache = folderCache(join(root, "cache"));
  const runDir = join(root, "run");
  const save = async (attempt: number, runId = "99") => {
    await writeFiles(runDir, { "manifest.json": `attempt ${attempt} run ${runId}`, "rhema.lock": "{}" });
    await cache.save(runDir, runCacheKeys({ ...scope, attempt, runId }).key);
  };
  await save(1);
  await save(2);
  await save(5, "100"); // another run of the workflow
  const old = new Date(Date.now() - 60_000);
  await utimes(join(root, "cache", runCacheKeys({ ...scope, attempt: 1 }).key), old, old);

  const target = join(root, "restored");
  assert.equal(await cache.restore(target, runCacheKeys(scope)), runCacheKeys({ ...scope, attempt: 2 }).key);
  assert.equal(await readFile(join(target, "manifest.json"), "utf8"), "attempt 2 run 99");
  assert.equal(existsSync(join(target, "rhema.lock")), false, "the lock is not cached");

  await writeFiles(runDir, { "manifest.json": "changed" });
  await cache.save(runDir, runCacheKeys({ ...scope, attempt: 2 }).key);
  const again = join(root, "again");
  await cache.restore(again, runCacheKeys({ ...scope, attempt: 2 }));
  assert.equal(await readFile(join(again, "manifest.json"), "utf8"), "attempt 2 run 99", "an entry is never overwritten");
  assert.equal(await cache.restore(join(root, "none"), runCacheKeys({ ...scope, runId: "7" })), undefined);
});

test("the folder cache leaves the shared setups' prepared bases out, as the Actions cache's paths do", async (t) => {
  const root = await tempDir(t);
  const cache = folderCache(join(root, "cache"));
  const runDir = join(root, "run");
  await writeFiles(runDir, { "manifest.json": "{}", "prepared/abc/workspace/node_modules/x.js": "x", "tasks/s/t/default/1/result.json": "{}" });
  await cache.save(runDir, "k");
  const target = join(root, "restored");
  await cache.restore(target, { key: "k", restoreKeys: [] });
  assert.ok(existsSync(join(target, "tasks/s/t/default/1/result.json")));
  assert.equal(existsSync(join(target, "prepared")), false);
});
