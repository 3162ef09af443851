/**
 * Cost through the built CLI: a scripted task priced `priceAs` a real model shows its dollars in
 * result.json, events.jsonl, stats.json, JUnit, the summary and the final line, marked
 * simulated; an unpriced model — scripted without priceAs, or a model on an OpenAI-compatible
 * server — reads "unpriced" in each of them, never $0, and is said once; a pricing file prices
 * it; a bad pricing file is exit 2 with file:line:column before anything is written; a resumed
 * task's cost sums both runs; `report merge` sums the shards' costs.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseStatsReport } from "../../src/runner/reports/stats-report.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const scripted = (priceAs: string | null, steps = 1, sleep = 0) => `prompt: Append the tags.
policy: ../policy.yaml
model:
  provider: scripted
${priceAs === null ? "" : `  priceAs: ${priceAs}\n`}  script:
${Array.from({ length: steps }, (_, k) => `    - call: shell\n      input: { command: "echo t-${k} >> tags.txt && sleep ${sleep}" }\n`).join("")}    - say: done
checks:
  - { name: ok, run: "true" }
`;

const usageCosts = async (eventsFile: string): Promise<(number | null)[]> =>
  (await readFile(eventsFile, "utf8")).trim().split("\n").map((line) => JSON.parse(line)).filter((e) => e.type === "usage").map((e) => e.costUsd);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const sum = (values: readonly (number | null)[]) => values.reduce((n: number, v) => n + (v ?? 0), 0);
const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

test("a scripted task priced as a real model: its simulated cost in every report; an unpriced one reads unpriced, never $0", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/priced.yaml": scripted("claude-sonnet-4-5", 2), "suite/plain.yaml": scripted(null, 2) });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 0, run.stderr);
  const results = Object.fromEntries((await readRunResults(out)).map((r) => [r.id, r]));
  const priced = results.priced!;
  const plain = results.plain!;

  // result.json, against the dollars of each request in the event log.
  const costs = await usageCosts(join(out, priced.transcriptPath));
  assert.equal(costs.length, 3);
  assert.ok(costs.every((c) => typeof c === "number" && c > 0), `every request priced: ${costs}`);
  assert.ok(close(priced.cost!.usd!, sum(costs)), `${priced.cost!.usd} = Σ ${costs}`);
  assert.deepEqual({ ...priced.cost!, usd: 0 }, {
    usd: 0, workerUsd: 0, unpricedRequests: 0, pricedAs: "claude-sonnet-4-5", workerPricedAs: "claude-sonnet-4-5", simulated: true,
    prices: { source: "@pydantic/genai-prices", version: "0.1.8", pricingFile: null },
  });
  assert.deepEqual(await usageCosts(join(out, plain.transcriptPath)), [null, null, null], "an unpriced request's event says null");
  assert.deepEqual({ usd: plain.cost!.usd, pricedAs: plain.cost!.pricedAs, unpricedRequests: plain.cost!.unpricedRequests }, { usd: null, pricedAs: null, unpricedRequests: 3 });

  const stats = parseStatsReport(await readFile(join(out, "stats.json"), "utf8"));
  assert.ok(close(stats.total.cost!.usd!, priced.cost!.usd!));
  assert.deepEqual({ ...stats.total.cost!, usd: 0 }, { usd: 0, workerUsd: 0, unpricedRequests: 3, tasks: 2, unpricedTasks: 1, simulatedTasks: 1, replayedTasks: 0 });
  assert.deepEqual(stats.prices, [{ source: "@pydantic/genai-prices", version: "0.1.8", pricingFile: null }]);

  const xml = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(xml, new RegExp(`<property name="task\\.priced\\.totalCostUsd" value="${priced.cost!.usd}"/>`));
  assert.match(xml, /<property name="task\.priced\.costSimulated" value="true"\/>/);
  assert.match(xml, /<property name="task\.plain\.costUsd" value="unpriced"\/>/);
  assert.match(xml, /<property name="task\.plain\.totalCostUsd" value="unpriced"\/>/);

  const dollars = `$${priced.cost!.usd!.toFixed(4)}`;
  const summary = await readFile(join(out, "summary.md"), "utf8");
  assert.ok(summary.includes(`| \\${dollars} (simulated) |`), summary);
  assert.match(summary, /\| `suite\/plain` \|.*\| unpriced \|/);
  assert.ok(run.stdout.split("\n").includes(`Cost: ≥ ${dollars} (simulated; 3 unpriced requests)`), run.stdout);
  assert.match(run.stderr, new RegExp(`\\[suite/priced\\] passed .*, ${escapeRegExp(dollars)} \\(simulated\\)`));
  assert.match(run.stderr, /\[suite\/plain\] passed .*, unpriced/);
  assert.doesNotMatch(run.stderr + run.stdout + summary, /\$0\.00\b/, "unpriced is never $0");
});

test("a model on an OpenAI-compatible server is unpriced, said once; a pricing file of zeros makes it free", async (t) => {
  const server = await FakeOpenAIServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  const task = (id: string) => `prompt: Say done.\npolicy: ../policy.yaml\nmodel: { provider: openai, name: gpt-4o, baseUrl: "${server.baseUrl}" }\nchecks:\n  - { name: ok, run: "true" }\n# ${id}\n`;
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY, "suite/a.yaml": task("a"), "suite/b.yaml": task("b"),
    "pricing.yaml": "version: 1\nmodels:\n  - { provider: openai, model: gpt-4o, inputPerMTok: 0, outputPerMTok: 0 }\n",
  });
  const env = cliEnv({ OPENAI_API_KEY: "sk-local" });
  for (let i = 0; i < 4; i++) server.reply({ kind: "stream", text: "done" });

  const unpricedOut = join(root, "unpriced");
  const unpriced = await runCli(["run", "suite", "--out", unpricedOut, "--concurrency", "1"], { cwd: root, env });
  assert.equal(unpriced.code, 0, unpriced.stderr);
  const note = "unpriced: model openai/gpt-4o has no known price; add it to a pricing file (--pricing)";
  assert.equal(unpriced.stderr.split(note).length - 1, 1, `said once:\n${unpriced.stderr}`);
  assert.match(unpriced.stdout, /^Cost: unpriced$/m);
  const stats = parseStatsReport(await readFile(join(unpricedOut, "stats.json"), "utf8"));
  assert.deepEqual(stats.total.cost, { usd: null, workerUsd: 0, unpricedRequests: 2, tasks: 2, unpricedTasks: 2, simulatedTasks: 0, replayedTasks: 0 });
  assert.match(await readFile(join(unpricedOut, "summary.md"), "utf8"), / · cost unpriced · /);
  assert.match(await readFile(join(unpricedOut, "junit.xml"), "utf8"), /<property name="suite\.costUsd" value="unpriced"\/>/);

  const freeOut = join(root, "free");
  const free = await runCli(["run", "suite", "--out", freeOut, "--concurrency", "1", "--pricing", "pricing.yaml"], { cwd: root, env });
  assert.equal(free.code, 0, free.stderr);
  assert.doesNotMatch(free.stderr, /unpriced/);
  assert.match(free.stdout, /^Cost: \$0\.00$/m);
  const freeStats = parseStatsReport(await readFile(join(freeOut, "stats.json"), "utf8"));
  assert.equal(freeStats.total.cost!.usd, 0);
  assert.equal(freeStats.prices[0]!.pricingFile!.path, join(root, "pricing.yaml"));
  assert.match(freeStats.prices[0]!.pricingFile!.sha256, /^[0-9a-f]{64}$/);
});

test("a bad pricing file is exit 2 naming file:line:column and field, before anything is written", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY, "suite/t.yaml": scripted("claude-sonnet-4-5"),
    "pricing.yaml": "version: 1\nmodels:\n  - provider: openai\n    model: local\n    inputPerMTok: free\n    outputPerMTok: 0\n",
  });
  const out = join(root, "run");
  for (const args of [["run", "suite", "--out", out, "--pricing", "pricing.yaml"], ["validate", "suite", "--pricing", "pricing.yaml"]]) {
    const bad = await runCli(args, { cwd: root });
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stderr.trim(), `rhema: ${join(root, "pricing.yaml")}:5:19: models.0.inputPerMTok: expected a price in dollars per million tokens (a number)`);
  }
  await assert.rejects(stat(out), "nothing was written");
  const missing = await runCli(["run", "suite", "--out", out, "--pricing", "nope.yaml"], { cwd: root });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.yaml:1:1: file: cannot read the pricing file: ENOENT/);
  const valid = await runCli(["validate", "suite", "--pricing", "policy.yaml"], { cwd: root });
  assert.equal(valid.code, 2, "a policy file is not a pricing file");
  assert.match(valid.stderr, /policy\.yaml:1:1: \(root\): missing key `models`\n.*policy\.yaml:2:1: \(root\): unknown key `default`\n.*policy\.yaml:3:1: \(root\): unknown key `rules`/);
});

test("a resumed task's cost sums both runs; report merge sums the shards' costs", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/slow.yaml": scripted("claude-sonnet-4-5", 6, 0.3), "suite/quick.yaml": scripted("claude-sonnet-4-5", 1) });
  const out = join(root, "run");
  const first = startCli(["run", "suite", "--out", out, "--filter", "suite/slow"], { cwd: root });
  await waitFor(async () => (await readFile(join(out, "tasks/suite/slow/default/1/workspace/tags.txt"), "utf8").catch(() => "")).includes("t-2"), 20_000, 50);
  first.child.kill("SIGTERM");
  assert.equal((await first.done).code, 130);
  const before = await usageCosts(join(out, "tasks/suite/slow/default/1/events.jsonl"));
  assert.ok(before.length >= 2 && before.length < 7, `the first run made some of the requests: ${before.length}`);

  const resumed = await runCli(["run", "suite", "--out", out, "--filter", "suite/slow"], { cwd: root });
  assert.equal(resumed.code, 0, resumed.stderr);
  const slow = (await readRunResults(out)).find((r) => r.id === "slow")!;
  const all = await usageCosts(join(out, slow.transcriptPath));
  assert.equal(slow.resumed, 1);
  assert.equal(slow.stats!.requests, all.length, "the stats count both runs' requests");
  assert.ok(all.length > before.length);
  assert.ok(close(slow.cost!.usd!, sum(all)), `${slow.cost!.usd} = Σ of both runs' ${all.length} requests`);
  assert.ok(slow.cost!.usd! > sum(before));

  const shard = join(root, "shard");
  assert.equal((await runCli(["run", "suite", "--out", shard, "--filter", "suite/quick"], { cwd: root })).code, 0);
  const quick = (await readRunResults(shard))[0]!;
  const merged = join(root, "merged");
  const merge = await runCli(["report", "merge", out, shard, "--out", merged], { cwd: root });
  assert.equal(merge.code, 0, merge.stderr);
  const stats = parseStatsReport(await readFile(join(merged, "stats.json"), "utf8"));
  assert.ok(close(stats.total.cost!.usd!, slow.cost!.usd! + quick.cost!.usd!));
  assert.equal(stats.total.cost!.simulatedTasks, 2);
  assert.ok(merge.stdout.includes(`cost $${(slow.cost!.usd! + quick.cost!.usd!).toFixed(4)} (simulated)`), merge.stdout);
});
