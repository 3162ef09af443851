/**
 * Budgets end to end, through the built CLI: a task's cost budget stops it mid-turn (stopped,
 * checkpointed) and a larger one continues it with tokens and cost summed over both runs; the
 * same budget keeps it stopped, said; a run budget across a suite at concurrency 2 starts no
 * task once spent and overshoots by at most one request per running task; --max-tokens needs no
 * price; a cost budget on an unpriced model is exit 2 before anything runs; a run directory
 * made before content hashes (file-bytes scheme) resumes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseStatsReport } from "../../src/runner/reports/stats-report.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { fileBytesHash } from "../../src/runner/tasks/content-hash.js";
import { runCli } from "../support/cli.js";
import { readJson } from "../support/run-dir.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists } from "../support/wait.js";

/** A scripted task of `steps` shell calls (each appends its tag, then sleeps), priced as Sonnet 4.5 unless `priceAs` is null. */
function pricedTask(tag: string, opts: { steps?: number; sleep?: number; priceAs?: string | null; limits?: string } = {}): string {
  const calls = Array.from({ length: opts.steps ?? 4 }, (_, k) =>
    `    - call: shell\n      input: { command: "echo ${tag}-${k} >> tags.txt && sleep ${opts.sleep ?? 0}" }\n`).join("");
  const priceAs = opts.priceAs === null ? "" : `  priceAs: ${opts.priceAs ?? "claude-sonnet-4-5"}\n`;
  return `prompt: Append the tags.
policy: ../policy.yaml
model:
  provider: scripted
${priceAs}  script:
${calls}    - say: done
${opts.limits ? `limits: ${opts.limits}\n` : ""}checks:
  - { name: all tags, run: "test $(wc -l < tags.txt) -eq ${opts.steps ?? 4}" }
`;
}

interface UsageEvent { type: "usage"; usage: { inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; outputTokens: number }; costUsd?: number | null }
async function usageEvents(out: string, suite: string, id: string): Promise<UsageEvent[]> {
  const text = await readFile(join(out, "tasks", suite, id, "default", "1", "events.jsonl"), "utf8");
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string }).filter((e): e is UsageEvent => e.type === "usage");
}
const lines = async (path: string) => (await readFile(path, "utf8")).split("\n").filter(Boolean);

// Sonnet 4.5 through the simulator, per request of a 4-call task: ~$0.0049 (the cache write),
// then ~$0.0007 each; cumulative ~0.0049, 0.0055, 0.0062, 0.0069, 0.0074. $0.006 stops it
// before its 4th request.
test("a task's cost budget stops it mid-turn; a larger one continues it from the checkpoint, the stopped call made once", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/priced.yaml": pricedTask("p", { limits: "{ maxCostUsd: 0.006 }" }) });
  const out = join(root, "run");
  const first = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(first.code, 1, first.stderr);
  const [stopped] = await readRunResults(out);
  assert.equal(stopped!.status, "stopped");
  assert.deepEqual(stopped!.budget && { ...stopped!.budget, spent: 0 }, { scope: "task", measure: "cost", limit: 0.006, spent: 0 });
  assert.ok(stopped!.budget!.spent >= 0.006 && stopped!.budget!.spent < 0.0075, String(stopped!.budget!.spent));
  assert.equal(stopped!.error!.code, "budget");
  assert.equal(stopped!.stats!.requests, 3, "stopped before the 4th request");
  assert.deepEqual(stopped!.checks, [], "no check ran");
  assert.deepEqual(await lines(join(out, "tasks/suite/priced/default/1/workspace/tags.txt")), ["p-0", "p-1", "p-2"]);
  assert.match(first.stdout, /passed 0, failed 0, errored 0, stopped 1/);
  assert.match(first.stderr, /\[suite\/priced\] stopped \(budget\) in /);
  assert.match(first.stdout, /Stopped: suite\/priced: the task's cost budget of \$0\.0060 is spent \(\$0\.00\d+\)/);
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(junit, /<error message="stopped: the task's cost budget of \$0\.0060 is spent[^"]*" type="budget">/);
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.deepEqual([stats.total.counts.stopped, stats.total.counts.errored, stats.total.counts.failed], [1, 0, 0]);
  assert.match(await readFile(join(out, "summary.md"), "utf8"), /🛑 1 stopped on a budget/);

  const again = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /\[suite\/priced\] stopped \(budget\) \(kept from an earlier run\)/);
  assert.match(again.stderr, /suite\/priced stays stopped: the task's cost budget of \$0\.0060 is spent .*; raise that budget to continue it/);
  assert.deepEqual(await readRunResults(out), [stopped], "the same budget keeps the result as it was");

  // Raising the budget in the task file continues it: limits are not part of the content hash.
  await writeFile(join(root, "suite/priced.yaml"), pricedTask("p", { limits: "{ maxCostUsd: 1 }" }));
  const raised = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(raised.code, 0, raised.stderr + raised.stdout);
  const [finished] = await readRunResults(out);
  assert.equal(finished!.status, "passed");
  assert.equal(finished!.resumed, 1);
  assert.deepEqual(await lines(join(out, "tasks/suite/priced/default/1/workspace/tags.txt")), ["p-0", "p-1", "p-2", "p-3"], "no call ran twice");
  const usage = await usageEvents(out, "suite", "priced");
  assert.equal(usage.length, 5, "five requests over both runs: the stopped one made once");
  const costOfAll = usage.reduce((n, e) => n + e.costUsd!, 0);
  const tokensOfAll = usage.reduce((n, e) => n + e.usage.inputTokens + e.usage.cacheReadTokens + e.usage.cacheWriteTokens + e.usage.outputTokens, 0);
  assert.equal(finished!.stats!.requests, 5);
  assert.ok(Math.abs(finished!.stats!.costUsd! - costOfAll) < 1e-9, `${finished!.stats!.costUsd} vs ${costOfAll}`);
  const s = finished!.stats!;
  assert.equal(s.inputTokens + s.cacheReadTokens + s.cacheWriteTokens + s.outputTokens, tokensOfAll, "tokens summed over both runs");
});

test("a run budget across a suite at concurrency 2 starts no task once spent and overshoots by at most one request per running task", async (t) => {
  const root = await tempDir(t);
  const files: Record<string, string> = { "policy.yaml": OPEN_POLICY };
  for (const id of ["a", "b", "c", "d"]) files[`suite/${id}.yaml`] = pricedTask(id, { sleep: 0.3 });
  await writeFiles(root, files);
  const out = join(root, "run");
  const BUDGET = 0.012;
  const run = await runCli(["run", "suite", "--out", out, "--concurrency", "2", "--max-cost", String(BUDGET)], { cwd: root });
  assert.equal(run.code, 1, run.stderr);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.budget?.scope]), [["a", "stopped", "run"], ["b", "stopped", "run"], ["c", "stopped", "run"], ["d", "stopped", "run"]]);
  for (const id of ["c", "d"]) {
    const r = results.find((x) => x.id === id)!;
    assert.match(r.error!.message, /^not started: the run's budget was spent/);
    assert.equal(await exists(join(out, "tasks/suite", id, "default/1/events.jsonl")), false, `${id} never started`);
  }
  const perRequest = (await Promise.all(["a", "b"].map((id) => usageEvents(out, "suite", id)))).flat().map((e) => e.costUsd!);
  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  const spent = stats.total.stats!.costUsd!;
  assert.ok(spent >= BUDGET, `spent ${spent}`);
  assert.ok(spent <= BUDGET + 2 * Math.max(...perRequest), `spent ${spent} exceeds ${BUDGET} by more than one request per running task`);
  assert.equal(stats.total.counts.stopped, 4);

  // A larger run budget continues the stopped tasks and starts the rest.
  const more = await runCli(["run", "suite", "--out", out, "--concurrency", "2", "--max-cost", "1"], { cwd: root });
  assert.equal(more.code, 0, more.stderr + more.stdout);
  assert.deepEqual((await readRunResults(out)).map((r) => r.status), ["passed", "passed", "passed", "passed"]);
});

test("--max-tokens needs no price; the same budget again stays stopped, and --stopped-ok makes it exit 0", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": pricedTask("a", { priceAs: null }), "suite/b.yaml": pricedTask("b", { priceAs: null }) });
  const out = join(root, "run");
  const first = await runCli(["run", "suite", "--out", out, "--concurrency", "1", "--max-tokens", "3000"], { cwd: root });
  assert.equal(first.code, 1, first.stderr);
  const [a, b] = await readRunResults(out);
  assert.deepEqual([a!.status, a!.budget!.measure, a!.budget!.limit, b!.status], ["stopped", "tokens", 3000, "stopped"]);
  assert.ok(a!.budget!.spent >= 3000 && a!.stats!.requests < 5, JSON.stringify(a!.budget));
  assert.equal(a!.stats!.unpricedRequests, a!.stats!.requests, "unpriced, and no price was needed");
  assert.match(b!.error!.message, /not started: the run's budget was spent — the run's token budget of 3000 is spent/);
  const same = await runCli(["run", "suite", "--out", out, "--concurrency", "1", "--max-tokens", "3000", "--stopped-ok"], { cwd: root });
  assert.equal(same.code, 0, same.stderr);
  assert.match(same.stderr, /suite\/a stays stopped: .*suite\/b stays stopped: not started/s);
  assert.deepEqual(await readRunResults(out), [a, b]);
});

test("a cost budget on an unpriced model is exit 2 before any task starts, naming the model", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "own/a.yaml": pricedTask("a", { priceAs: null, limits: "{ maxCostUsd: 2 }" }),
    "flag/b.yaml": pricedTask("b", { priceAs: null }),
    "unknown/c.yaml": pricedTask("c", { priceAs: "no-such-model-9", limits: "{ maxCostUsd: 2 }" }),
  });
  const own = await runCli(["run", "own", "--out", join(root, "r1")], { cwd: root });
  assert.equal(own.code, 2);
  assert.match(own.stderr, /own\/a\.yaml: cannot enforce limits\.maxCostUsd \$2\.00 on unpriced model scripted \(a scripted model is priced only as its model\.priceAs\): add it to a pricing file/);
  const flag = await runCli(["run", "flag", "--out", join(root, "r2"), "--max-cost", "5"], { cwd: root });
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /cannot enforce --max-cost \$5\.00 \(task flag\/b, .*\) on unpriced model scripted/);
  const unknown = await runCli(["run", "unknown", "--out", join(root, "r3")], { cwd: root });
  assert.match(unknown.stderr, /on unpriced model no-such-model-9: add it to a pricing file/);
  assert.equal(unknown.code, 2);
  for (const dir of ["r1", "r2", "r3"]) assert.equal(await exists(join(root, dir)), false, "nothing was written");
  const bad = await runCli(["run", "flag", "--out", join(root, "r4"), "--max-cost", "-1"], { cwd: root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Expected --max-cost to be a number of dollars above 0 \(such as 20 or 0\.5\), got "-1"/);
});

test("a run directory made before content hashes (file-bytes scheme) resumes as it was written", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/a.yaml": pricedTask("a", { steps: 1 }), "suite/b.yaml": pricedTask("b", { steps: 1 }) });
  const out = join(root, "run");
  assert.equal((await runCli(["run", "suite", "--out", out], { cwd: root })).code, 0);
  // Rewrite it as the older rhema wrote it: no hashScheme in the manifest, every hash of the file's bytes.
  const bytesHash = async (id: string) => fileBytesHash(await readFile(join(root, `suite/${id}.yaml`)));
  const manifest = await readJson<{ hashScheme?: string; tasks: { id: string; contentHash: string }[] }>(join(out, "manifest.json"));
  assert.equal(manifest.hashScheme, "content-v2");
  assert.notEqual(manifest.tasks[0]!.contentHash, await bytesHash("a"), "the schemes differ, so comparing with the wrong one refuses");
  delete manifest.hashScheme;
  for (const task of manifest.tasks) task.contentHash = await bytesHash(task.id);
  await writeFile(join(out, "manifest.json"), JSON.stringify(manifest));
  for (const id of ["a", "b"]) {
    for (const file of ["task-state.json", "result.json"]) {
      const path = join(out, "tasks/suite", id, "default/1", file);
      await writeFile(path, JSON.stringify({ ...(await readJson(path)), contentHash: await bytesHash(id) }));
    }
  }
  await rm(join(out, "tasks/suite/b/default/1/result.json")); // b continues: its turn had ended, so only its check runs again
  const resumed = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, /\[suite\/a\] passed .*kept from an earlier run/);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.contentHash]), [["a", "passed", await bytesHash("a")], ["b", "passed", await bytesHash("b")]]);
  assert.equal((await readJson<{ hashScheme: string }>(join(out, "manifest.json"))).hashScheme, "file-bytes", "the directory keeps its scheme");
  // Under the old scheme any byte counts: a comment is a change.
  await writeFile(join(root, "suite/a.yaml"), `# edited\n${pricedTask("a", { steps: 1 })}`);
  const edited = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(edited.code, 2);
  assert.match(edited.stderr, /changed since their run started:\n {2}suite\/a/);
});
