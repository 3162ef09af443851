/**
 * Shards a CI matrix can rely on, through the built CLI and real run directories: a shard whose
 * share is nothing passes with empty reports that merge; paths, --filter and --tag that select
 * nothing stay exit 2; the manifest and reports record the shard and a run directory refuses
 * another; `report merge` refuses missing, repeated and mixed shards (unless --allow-partial,
 * which names the missing ones) and takes the longest shard's wall time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { runCli } from "../support/cli.js";
import { junitXsd } from "../support/paths.js";
import { readJson, snapshotTree } from "../support/run-dir.js";
import { OPEN_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists } from "../support/wait.js";

interface Stats {
  shard: string | null;
  shards: { count: number; merged: string[]; missing: string[] } | null;
  startedAt: string;
  finishedAt: string;
  wallTimeMs: number;
  total: { counts: { tasks: number; passed: number; skipped: number } };
  tasks: { suite: string; id: string }[];
}

async function assertValidJUnit(xml: string): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, result.rawOutput);
}

const testsCount = (xml: string) => Number(/<testsuites [^>]*\btests="(\d+)"/.exec(xml)?.[1]);
const read = (dir: string, name: string) => readFile(join(dir, name), "utf8");

/** A suite `s` of `ids` (one quick scripted step each), tagged `fast` except where `slow` says. */
async function writeSuite(root: string, ids: readonly string[], slow: readonly string[] = []): Promise<void> {
  const files: Record<string, string> = { "policy.yaml": OPEN_POLICY };
  for (const id of ids) files[`s/${id}.yaml`] = taggingTask(id, 1, { extra: `tags: [${slow.includes(id) ? "slow" : "fast"}]\n` });
  await writeFiles(root, files);
}

test("a shard that selects nothing passes with empty reports that merge, and resumes", async (t) => {
  const root = await tempDir(t);
  await writeSuite(root, ["only"]);
  const [one, two] = [join(root, "one"), join(root, "two")];
  assert.equal((await runCli(["run", "s", "--shard", "1/2", "--out", one], { cwd: root })).code, 0);
  const empty = await runCli(["run", "s", "--shard", "2/2", "--out", two], { cwd: root });
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stderr, /shard 2\/2 selected nothing \(the 1 selected task falls in other shards\)/);

  const manifest = await readJson<{ shard: string | null; tasks: unknown[] }>(join(two, "manifest.json"));
  assert.deepEqual([manifest.shard, manifest.tasks], ["2/2", []]);
  assert.equal((await readJson<{ shard: string | null }>(join(one, "manifest.json"))).shard, "1/2");
  const junit = await read(two, "junit.xml");
  assert.equal(testsCount(junit), 0);
  await assertValidJUnit(junit);
  const stats = await readJson<Stats>(join(two, "stats.json"));
  assert.deepEqual([stats.shard, stats.shards, stats.total.counts.tasks], ["2/2", null, 0]);
  const summary = await read(two, "summary.md");
  assert.match(summary, /^### rhema run `[^`]+` \(shard 2\/2\): 0 of 0 tasks passed/);
  assert.match(summary, /Shard 2\/2 selected no task to run/);

  const resumed = await runCli(["run", "s", "--shard", "2/2", "--out", two], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal((await readJson<{ resumes: number }>(join(two, "manifest.json"))).resumes, 1);

  const merged = join(root, "merged");
  const merge = await runCli(["report", "merge", one, two, "--out", merged], { cwd: root });
  assert.equal(merge.code, 0, merge.stderr);
  assert.match(merge.stdout, /merged 1 task result from 2 runs \(shards 1\/2, 2\/2 of 2\)/);
  const mergedJunit = await read(merged, "junit.xml");
  assert.equal(testsCount(mergedJunit), 1);
  assert.match(mergedJunit, /<testcase classname="s" name="only"/);
  await assertValidJUnit(mergedJunit);
  const mergedStats = await readJson<Stats>(join(merged, "stats.json"));
  assert.deepEqual([mergedStats.shard, mergedStats.shards], [null, { count: 2, merged: ["1/2", "2/2"], missing: [] }]);
  assert.equal(mergedStats.total.counts.passed, 1);
  assert.match(await read(merged, "summary.md"), /\(2 shards merged\): 1 of 1 task passed/);
});

test("tags that shrink a matrix leave empty shards passing; a selection of nothing stays exit 2, sharded or not", async (t) => {
  const root = await tempDir(t);
  await writeSuite(root, ["a", "b", "c"], ["b", "c"]);
  const shrunk = await Promise.all([1, 2, 3].map((i) => runCli(["run", "s", "--tag", "fast", "--shard", `${i}/3`, "--out", join(root, `tag-${i}`), "--report-skipped"], { cwd: root })));
  assert.deepEqual(shrunk.map((r) => r.code), [0, 0, 0], shrunk.map((r) => r.stderr).join("\n"));
  const ran = await Promise.all([1, 2, 3].map(async (i) => (await readJson<Stats>(join(root, `tag-${i}`, "stats.json"))).total.counts.tasks));
  assert.deepEqual(ran.sort(), [0, 0, 1], "one task kept by the tag, two shards empty");

  for (const args of [["--filter", "s/nothing*"], ["--tag", "nosuch"], ["--tag", "nosuch", "--shard", "2/2"], ["--filter", "x/*", "--shard", "1/1"]]) {
    const out = join(root, `none-${args.join("-").replace(/[^a-z0-9-]/gi, "")}`);
    const result = await runCli(["run", "s", ...args, "--out", out], { cwd: root });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, /no task to run: s selected none \(after --filter\/--tag\)/, args.join(" "));
    assert.equal(await exists(out), false, `${args.join(" ")}: no run directory`);
  }
});

test("--shard values: not i/n with 1 ≤ i ≤ n is exit 2 naming it; blanks around the numbers are allowed and recorded as i/n", async (t) => {
  const root = await tempDir(t);
  await writeSuite(root, ["a", "b"]);
  for (const value of ["0/2", "3/2", "a/b", "1/0", "", "1/2/3", "-1/2", "1.5/2", "99999999999999999999/99999999999999999999"]) {
    const out = join(root, "bad");
    const result = await runCli(["run", "s", `--shard=${value}`, "--out", out], { cwd: root });
    assert.equal(result.code, 2, `"${value}": ${result.stderr}`);
    assert.ok(result.stderr.includes(`Expected --shard as i/n with 1 ≤ i ≤ n (e.g. 2/3), got "${value}"`), `"${value}": ${result.stderr}`);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    assert.equal(await exists(out), false);
  }
  const spaced = join(root, "spaced");
  const result = await runCli(["run", "s", "--shard", " 1 / 2 ", "--out", spaced], { cwd: root });
  assert.equal(result.code, 0, result.stderr);
  assert.equal((await readJson<{ shard: string }>(join(spaced, "manifest.json"))).shard, "1/2");
  assert.equal((await readJson<Stats>(join(spaced, "stats.json"))).shard, "1/2");
  const unsharded = join(root, "unsharded");
  assert.equal((await runCli(["run", "s", "--out", unsharded], { cwd: root })).code, 0);
  assert.equal((await readJson<{ shard: string | null }>(join(unsharded, "manifest.json"))).shard, null);
  assert.equal((await readJson<Stats>(join(unsharded, "stats.json"))).shard, null);
});

test("resuming a run directory with another --shard (or none) is exit 2 naming both; --restart starts it over as the new shard", async (t) => {
  const root = await tempDir(t);
  await writeSuite(root, ["a", "b", "c"]);
  const out = join(root, "run");
  assert.equal((await runCli(["run", "s", "--shard", "1/2", "--out", out], { cwd: root })).code, 0);
  const before = await snapshotTree(out);
  for (const [args, now] of [[["--shard", "2/2"], "shard 2/2 \\(--shard 2/2\\)"], [[], "an unsharded run \\(no --shard\\)"], [["--shard", "1/3"], "shard 1/3 \\(--shard 1/3\\)"], [["--shard", "2/2", "--add"], "shard 2/2 \\(--shard 2/2\\)"]] as const) {
    const refused = await runCli(["run", "s", ...args, "--out", out], { cwd: root });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, new RegExp(`${out} holds shard 1/2 \\(--shard 1/2\\), and this run is ${now}: .*--restart`));
    assert.deepEqual(await snapshotTree(out), before, `${args.join(" ")}: nothing in the run directory changed`);
  }
  const restarted = await runCli(["run", "s", "--shard", "2/2", "--restart", "--out", out], { cwd: root });
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.equal((await readJson<{ shard: string }>(join(out, "manifest.json"))).shard, "2/2");
  assert.equal((await readJson<Stats>(join(out, "stats.json"))).shard, "2/2");

  const plain = join(root, "plain");
  assert.equal((await runCli(["run", "s", "--out", plain], { cwd: root })).code, 0);
  const sharded = await runCli(["run", "s", "--shard", "1/2", "--out", plain], { cwd: root });
  assert.equal(sharded.code, 2, sharded.stderr);
  assert.match(sharded.stderr, /holds an unsharded run \(no --shard\), and this run is shard 1\/2/);
});

test("report merge refuses missing, repeated and mixed shards naming them, unless --allow-partial; the wall time is the longest shard's", async (t) => {
  const root = await tempDir(t);
  await writeSuite(root, ["a", "b", "c"]);
  const dir = (name: string) => join(root, name);
  for (const [name, shard] of [["s13", "1/3"], ["s23", "2/3"], ["s33", "3/3"], ["s12", "1/2"]] as const) {
    const result = await runCli(["run", "s", "--shard", shard, "--out", dir(name)], { cwd: root });
    assert.equal(result.code, 0, result.stderr);
  }
  assert.equal((await runCli(["run", "s", "--out", dir("whole")], { cwd: root })).code, 0);
  await cp(dir("s13"), dir("s13-copy"), { recursive: true });
  await symlink(dir("s13"), dir("s13-alias"));
  const merge = (inputs: readonly string[], out: string, ...flags: string[]) =>
    runCli(["report", "merge", ...inputs.map(dir), "--out", dir(out), ...flags], { cwd: root });

  const refusals: [string[], RegExp][] = [
    [["s13", "s33"], /Missing shard 2\/3: the inputs hold .*s13 \(shard 1\/3\), .*s33 \(shard 3\/3\)\. .*--allow-partial/],
    [["s13", "s13-copy", "s23", "s33"], /Shard 1\/3 is given twice: .*s13 \(shard 1\/3\) and .*s13-copy \(shard 1\/3\)/],
    [["s12", "s13"], /Expected shards of one matrix, got shards of 2 and 3: .*s12 \(shard 1\/2\), .*s13 \(shard 1\/3\)/],
    [["s13", "s13-alias", "s23", "s33"], /The run directory .*s13 is given twice: as .*s13 and as .*s13-alias/],
    [["s13", "s23", "s33", "s13"], /The run directory .*s13 is given twice as .*s13:/],
    [["whole", "s13"], /record no shard \(unsharded runs, or run by an older rhema\): .*whole; the others are shards of 3/],
  ];
  for (const [inputs, message] of refusals) {
    const result = await merge(inputs, "refused");
    assert.equal(result.code, 2, `${inputs.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, inputs.join(" "));
    assert.equal(await exists(dir("refused")), false, `${inputs.join(" ")}: nothing written`);
  }
  // --allow-partial lets shards be missing, never repeated or of two matrices.
  for (const inputs of [["s13", "s13-copy"], ["s12", "s13"]]) assert.equal((await merge(inputs, "refused", "--allow-partial")).code, 2, inputs.join(" "));

  const partial = await merge(["s13", "s33"], "partial", "--allow-partial");
  assert.equal(partial.code, 0, partial.stderr);
  assert.match(partial.stderr, /partial merge: shard 2\/3 missing/);
  const partialStats = await readJson<Stats>(join(dir("partial"), "stats.json"));
  assert.deepEqual(partialStats.shards, { count: 3, merged: ["1/3", "3/3"], missing: ["2/3"] });
  const partialSummary = await read(dir("partial"), "summary.md");
  assert.match(partialSummary, /\(2 of 3 shards merged\)/);
  assert.match(partialSummary, /\*\*Partial merge:\*\* shard 2\/3 of 3 is missing \(merged with --allow-partial\)/);
  await assertValidJUnit(await read(dir("partial"), "junit.xml"));
  // The partial merge is completed by merging it with the missing shard.
  const completed = await merge(["partial", "s23"], "completed");
  assert.equal(completed.code, 0, completed.stderr);
  assert.deepEqual((await readJson<Stats>(join(dir("completed"), "stats.json"))).shards, { count: 3, merged: ["1/3", "2/3", "3/3"], missing: [] });

  // The shards ran one after another: the merged wall time is the longest one's, not the span from the first start to the last finish.
  const full = await merge(["s33", "s13", "s23"], "full");
  assert.equal(full.code, 0, full.stderr);
  const shardWalls = await Promise.all(["s13", "s23", "s33"].map(async (name) => (await readJson<Stats>(join(dir(name), "stats.json"))).wallTimeMs));
  const fullStats = await readJson<Stats>(join(dir("full"), "stats.json"));
  assert.equal(fullStats.wallTimeMs, Math.max(...shardWalls));
  assert.ok(fullStats.wallTimeMs < Date.parse(fullStats.finishedAt) - Date.parse(fullStats.startedAt), "shorter than the span of the three runs");
  assert.equal(fullStats.total.counts.tasks, 3);

  // Inputs that record no shard merge unchecked among themselves, as before the record.
  const unsharded = await merge(["whole"], "unsharded");
  assert.equal(unsharded.code, 0, unsharded.stderr);
  assert.equal((await readJson<Stats>(join(dir("unsharded"), "stats.json"))).shards, null);
});
