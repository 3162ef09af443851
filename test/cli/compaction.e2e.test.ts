/**
 * A long scripted task under a small transcript budget, through the built CLI: its stats.json
 * shows the flushes, and `rhema bench replay` of its own run directory reproduces its cache hit
 * rate within a point.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { OPEN_POLICY, compactingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const STEPS = 36;
const BUDGET = 5_000;
const BLOCK = 500;

test("a long task flushes within its budget, and the replay of its run directory gives the same hit rate within a point", async (t) => {
  const dir = await tempDir(t);
  await writeFiles(dir, {
    "suite/policy.yaml": OPEN_POLICY,
    "suite/long/read.yaml": compactingTask({ steps: STEPS, budget: BUDGET, block: BLOCK }),
    "suite/ws/notes.txt": "a line of notes that the model reads again and again\n".repeat(20),
  });
  const out = join(dir, "run");
  const run = await runCli(["run", join(dir, "suite/long"), "--out", out], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  const stats = JSON.parse(await readFile(join(out, "stats.json"), "utf8")) as { total: { stats: { flushes: number; requests: number; cacheHitRate: number; peakRequestTokens: number } } };
  const live = stats.total.stats;
  assert.ok(live.flushes >= 3, `flushed ${live.flushes} times`);
  assert.equal(live.requests, STEPS + 1);
  assert.ok(live.peakRequestTokens <= BUDGET, `peak ${live.peakRequestTokens} within the budget`);
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.match(summary, new RegExp(`${live.flushes} compaction flushes \\(0 free(, \\d+ merges?)?\\), peak request ${live.peakRequestTokens} tokens`));

  const replay = await runCli(["bench", "replay", out, "--strategy", "sections", "--budget", String(BUDGET), "--block", String(BLOCK), "--json"], { cwd: dir });
  assert.equal(replay.code, 0, replay.stderr);
  const figures = JSON.parse(replay.stdout) as { total: Array<{ hitRate: number; flushes: number; requests: number }> };
  const row = figures.total[0]!;
  t.diagnostic(`live: ${live.flushes} flushes, hit rate ${live.cacheHitRate.toFixed(4)}; replay: ${row.flushes} flushes, hit rate ${row.hitRate.toFixed(4)}`);
  assert.equal(row.requests, live.requests);
  assert.equal(row.flushes, live.flushes);
  assert.ok(Math.abs(row.hitRate - live.cacheHitRate) <= 0.01, `replay ${row.hitRate.toFixed(4)} vs live ${live.cacheHitRate.toFixed(4)}`);
  // A run directory made before trials (layout 1: the task's files in tasks/<suite>/<id>/, no
  // layout in the manifest) replays the same.
  const older = join(dir, "older");
  await cp(out, older, { recursive: true });
  const trialDir = join(older, "tasks", "long", "read", "default", "1");
  for (const name of await readdir(trialDir)) await rename(join(trialDir, name), join(older, "tasks", "long", "read", name));
  await rm(join(older, "tasks", "long", "read", "default"), { recursive: true });
  const manifest = JSON.parse(await readFile(join(older, "manifest.json"), "utf8")) as Record<string, unknown> & { tasks: Record<string, unknown>[] };
  const { layout: _layout, variants: _variants, ...layoutOne } = manifest;
  await writeFile(join(older, "manifest.json"), JSON.stringify({ ...layoutOne, tasks: layoutOne.tasks.map(({ trials: _n, gate: _g, ...task }) => task) }));
  const replayOlder = await runCli(["bench", "replay", older, "--strategy", "sections", "--budget", String(BUDGET), "--block", String(BLOCK), "--json"], { cwd: dir });
  assert.equal(replayOlder.code, 0, replayOlder.stderr);
  assert.deepEqual((JSON.parse(replayOlder.stdout) as typeof figures).total[0], row, "layout 1 replays as layout 2 does");
});
