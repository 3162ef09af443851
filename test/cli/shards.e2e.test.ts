/**
 * A CI matrix of three shards, merged with `rhema report merge`, reports what one unsharded
 * run reports: every task once, the same outcomes, stats and denials (times and ids aside).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const TIME_KEYS = new Set(["runId", "startedAt", "finishedAt", "wallTimeMs", "durationMs", "transcriptPath"]);

/** stats.json without what differs between two runs of the same tasks: ids, times, durations. */
function stableStats(text: string): unknown {
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip)
      : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).filter(([k]) => !TIME_KEYS.has(k)).map(([k, x]) => [k, strip(x)]))
      : v;
  return strip(JSON.parse(text));
}

function stableXml(text: string): string {
  return text
    .replace(/\b(time|timestamp|hostname)="[^"]*"/g, '$1=""')
    .replace(/rhema run [^"<]+/g, "rhema run RUN")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "ID")
    .replace(/\/tmp\/[^/]+\/(shard-\d|merged)\//g, "DIR/")
    .replace(/(\[\[ATTACHMENT\||report: )(shard-\d|merged)\//g, "$1DIR/")
    .replace(/(value|name)="task\.[^".]+\.durationMs" value="\d+"/g, "$1=\"duration\"")
    .replace(/duration_ms [\d.]+/g, "duration_ms N")
    .replace(/durationMs" value="\d+"/g, 'durationMs" value="N"');
}

function stableSummary(text: string): string {
  return text
    .replace(/`[^`]*[0-9a-f]{8}-[^`]*`/g, "`RUN`")
    .replace(/\d+(\.\d+)?(ms|s)\b/g, "T")
    .replace(/duration_ms [\d.]+/g, "duration_ms N")
    .replace(/\/tmp\/[^/]+\/(shard-\d|merged)\//g, "DIR/")
    .replace(/`(shard-\d|merged)\/report\.html`/g, "`DIR/report.html`");
}

/** Seven deterministic tasks in two suites (tool output that does not vary between runs). */
async function writeDeterministicSuites(root: string): Promise<void> {
  const files: Record<string, string> = { "policy.yaml": OPEN_POLICY };
  for (const [k, id] of ["a", "b", "c", "d"].entries()) files[`alpha/${id}.yaml`] = taggingTask(id, k + 1);
  for (const [k, id] of ["e", "f", "g"].entries()) files[`beta/${id}.yaml`] = taggingTask(id, k + 1, { extra: k === 1 ? '  - { name: a failing check, run: "test -f nothing" }\n' : "" });
  await writeFiles(root, files);
}

test("shards 1/3, 2/3 and 3/3 merged equal the unsharded run's reports", async (t) => {
  const root = await tempDir(t);
  await writeDeterministicSuites(root);
  // The same name length as the shards': the workspace path is in the prompt, so in the token counts.
  const whole = join(root, "shard-0");
  await runCli(["run", "alpha", "beta", "--out", whole], { cwd: root });
  const shards = [1, 2, 3].map((i) => join(root, `shard-${i}`));
  for (const [k, dir] of shards.entries()) {
    const result = await runCli(["run", "alpha", "beta", "--out", dir, "--shard", `${k + 1}/3`], { cwd: root });
    assert.ok(result.code === 0 || result.code === 1, result.stderr);
  }
  const perShard = await Promise.all(shards.map(async (d) => (await readRunResults(d)).map((r) => `${r.suite}/${r.id}`)));
  assert.deepEqual(perShard.flat().sort(), (await readRunResults(whole)).map((r) => `${r.suite}/${r.id}`).sort(), "each task ran in exactly one shard");

  const merged = join(root, "merged");
  const merge = await runCli(["report", "merge", ...shards, "--out", merged], { cwd: root });
  assert.equal(merge.code, 0, merge.stderr);
  assert.match(merge.stdout, /merged 7 task results from 3 runs/);
  const read = (dir: string, name: string) => readFile(join(dir, name), "utf8");
  // The shard record aside (the merge says which shards it holds; the whole run is unsharded).
  const mergedStats = JSON.parse(await read(merged, "stats.json")) as Record<string, unknown>;
  const wholeStats = JSON.parse(await read(whole, "stats.json")) as Record<string, unknown>;
  assert.deepEqual([mergedStats.shard, mergedStats.shards], [null, { count: 3, merged: ["1/3", "2/3", "3/3"], missing: [] }]);
  assert.deepEqual([wholeStats.shard, wholeStats.shards], [null, null]);
  const withoutShards = ({ shards: _shards, ...rest }: Record<string, unknown>) => JSON.stringify(rest);
  assert.deepEqual(stableStats(withoutShards(mergedStats)), stableStats(withoutShards(wholeStats)));
  assert.equal(stableXml(await read(merged, "junit.xml")), stableXml(await read(whole, "junit.xml")));
  const mergedSummary = await read(merged, "summary.md");
  assert.match(mergedSummary, /^### rhema run `[^`]+` \(3 shards merged\):/);
  assert.equal(stableSummary(mergedSummary.replace(" (3 shards merged)", "")), stableSummary(await read(whole, "summary.md")));
});
