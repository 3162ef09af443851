import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { EXTRA_CORPUS_DIR, corpusDir, optionalExtra, repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";

const two = [join(corpusDir, "ledger-totals.jsonl"), join(corpusDir, "inventory-parse.jsonl")];

test("bench replay prints a row per (file, strategy, budget), a total, and the token counter", async (t) => {
  const dir = await tempDir(t);
  const r = await runCli(["bench", "replay", ...two, "--budget", "8000", "--strategy", "sections", "--strategy", "keep-recent"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /token counter: estimate, 4 characters a token/);
  const rows = r.stdout.split("\n").filter((l) => /\b8k\b/.test(l));
  assert.equal(rows.length, 2 * 2 + 2, r.stdout);
  assert.equal(rows.filter((l) => l.startsWith("total")).length, 2);
});

test("bench replay --json --chain gives total and suites in camelCase, and --chart writes an SVG", async (t) => {
  const dir = await tempDir(t);
  const chart = join(dir, "c.svg");
  const r = await runCli(["bench", "replay", ...two, "--chain", "--budget", "8000", "--json", "--chart", chart], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { total: Array<Record<string, unknown>>; suites: unknown[] };
  assert.equal(out.total.length, 4);
  for (const key of ["hitRate", "limit", "billedEquivalent", "retainedContext", "costPerRetained", "rewriteWaste", "minRawTailShare", "flushes", "peakRequestTokens", "workerTokens"]) {
    assert.ok(key in out.total[0]!, `has ${key}`);
  }
  assert.equal(out.suites.length, 4);
  assert.match(await readFile(chart, "utf8"), /^<svg/);
});

test("bench replay refuses an unknown strategy, a tiny budget and a missing input with exit 2", async (t) => {
  const dir = await tempDir(t);
  const strategy = await runCli(["bench", "replay", two[0]!, "--strategy", "magic"], { cwd: dir });
  assert.equal(strategy.code, 2);
  assert.match(strategy.stderr, /--strategy takes sections, summarize-all, keep-recent, none, recorded; got "magic"/);
  const budget = await runCli(["bench", "replay", two[0]!, "--budget", "10"], { cwd: dir });
  assert.equal(budget.code, 2);
  assert.match(budget.stderr, /--budget takes a whole number of tokens from 1000 up, got "10"/);
  const missing = await runCli(["bench", "replay", join(dir, "nope.jsonl")], { cwd: dir });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.jsonl: cannot read \(ENOENT\)/);
});

test("bench replay --model prices each request in dollars, and refuses a model with no price", async (t) => {
  const dir = await tempDir(t);
  const r = await runCli(["bench", "replay", two[0]!, "--budget", "8000", "--strategy", "sections", "--model", "claude-sonnet-4-5", "--json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const row = (JSON.parse(r.stdout) as { total: Array<{ costUsd: number | null; billedEquivalent: number }> }).total[0]!;
  assert.ok(row.costUsd !== null && row.costUsd > 0);
  // Input at $3 / MTok at most and at least the cached share at $0.30: the dollars bracket the input side.
  assert.ok(row.costUsd >= (row.billedEquivalent * 3) / 1e6 * 0.99, `${row.costUsd} for ${row.billedEquivalent} billed-equivalent tokens`);
  const bad = await runCli(["bench", "replay", two[0]!, "--model", "no-such-model"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /no price is known for it/);
});

test("bench replay --pricing prices a model the table lacks, by the same rules as a run; a bad pricing file is exit 2 located", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "pricing.yaml"), "version: 1\nmodels:\n  - { provider: anthropic, model: house-model, inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 }\n");
  const args = [two[0]!, "--budget", "8000", "--strategy", "sections", "--json"];
  const house = await runCli(["bench", "replay", ...args, "--model", "house-model", "--pricing", "pricing.yaml"], { cwd: dir });
  assert.equal(house.code, 0, house.stderr);
  const sonnet = await runCli(["bench", "replay", ...args, "--model", "claude-sonnet-4-5"], { cwd: dir });
  const cost = (text: string) => (JSON.parse(text) as { total: Array<{ costUsd: number | null }> }).total[0]!.costUsd!;
  // Sonnet 4.5's published prices below its 200k tier, written out: the same dollars.
  assert.ok(Math.abs(cost(house.stdout) - cost(sonnet.stdout)) < 1e-9, `${cost(house.stdout)} vs ${cost(sonnet.stdout)}`);
  const unknown = await runCli(["bench", "replay", ...args, "--model", "house-model"], { cwd: dir });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /add it to a pricing file \(--pricing\)/);
  const alone = await runCli(["bench", "replay", ...args, "--pricing", "pricing.yaml"], { cwd: dir });
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /--pricing prices --model's requests/);
  await writeFile(join(dir, "bad.yaml"), "version: 1\nmodels:\n  - { provider: anthropic, model: m, inputPerMTok: 3 }\n");
  const bad = await runCli(["bench", "replay", ...args, "--model", "m", "--pricing", "bad.yaml"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /bad\.yaml:3:5: models\.0: missing key `outputPerMTok`/);
});

test("bench replay reads the third-party corpus beside the checkout too, when it is there (an optional extra)", async (t) => {
  const extra = optionalExtra(EXTRA_CORPUS_DIR);
  if ("skip" in extra) {
    t.skip(extra.skip);
    return;
  }
  const dir = await tempDir(t);
  const r = await runCli(["bench", "replay", extra.path, "--chain", "--budget", "32000", "--strategy", "sections", "--json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const row = (JSON.parse(r.stdout) as { total: Array<{ requests: number; flushes: number }> }).total[0]!;
  assert.ok(row.requests > 100 && row.flushes > 0, JSON.stringify(row));
});

test("the replay table in docs/compaction.md is what the chained corpus gives today (`npm run bench:replay`)", async () => {
  const r = await runCli(["bench", "replay", corpusDir, "--chain", "--budget", "8000", "--budget", "16000", "--budget", "32000",
    "--strategy", "sections", "--strategy", "keep-recent", "--strategy", "summarize-all", "--json"], { cwd: repoRoot });
  assert.equal(r.code, 0, r.stderr);
  type Row = { budget: number; strategy: string; hitRate: number; limit: number; retainedContext: number; billedEquivalent: number; costPerRetained: number; minRawTailShare: number | null };
  const whole = (x: number) => Math.round(x).toLocaleString("en-US");
  const tail = (x: number | null) => (x === null ? "-" : x === 0 ? "0" : x.toFixed(3));
  const expected = (JSON.parse(r.stdout) as { total: Row[] }).total
    .sort((a, b) => a.budget - b.budget)
    .map((t) => `| ${t.budget / 1000}k | ${t.strategy} | ${t.hitRate.toFixed(4)} | ${t.limit.toFixed(4)} | ${t.retainedContext.toFixed(3)} | ${whole(t.billedEquivalent)} | ${whole(t.costPerRetained)} | ${tail(t.minRawTailShare)} |`);
  const doc = await readFile(join(repoRoot, "docs", "compaction.md"), "utf8");
  const header = "| budget | strategy | hit rate | HR*(B) | retained | billed-eq | cost/retained | min raw tail |";
  const start = doc.indexOf(header);
  assert.ok(start >= 0, "docs/compaction.md has the replay table");
  const after = doc.slice(start).split("\n").slice(2);
  const table = after.slice(0, after.findIndex((l) => !l.startsWith("|")));
  assert.deepEqual(table, expected, `the replay table in docs/compaction.md is stale; the rows today:\n${expected.join("\n")}`);
});

test("bench replay --ttl auto prints the oracle apart, with each side's 1-hour requests and TTL choices judged", async (t) => {
  const dir = await tempDir(t);
  const file = join(corpusDir, "inventory-parse.jsonl"); // one 7-minute pause
  const table = await runCli(["bench", "replay", file, "--strategy", "none", "--budget", "200000", "--ttl", "auto"], { cwd: dir });
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /TTL: auto;/);
  assert.match(table.stdout, /\noracle: the TTL that knows each next gap/);
  assert.match(table.stdout, /1h requests\s+TTL right/);
  const r = await runCli(["bench", "replay", file, "--strategy", "none", "--budget", "200000", "--ttl", "auto", "--json"], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  type Row = { billedEquivalent: number; oneHourRequests: number; ttlChoicesRight: number; ttlChoicesWrong: number; requests: number };
  const out = JSON.parse(r.stdout) as { ttl: string; total: Row[]; oracle: { total: Row[] } };
  assert.equal(out.ttl, "auto");
  const [auto, oracle] = [out.total[0]!, out.oracle.total[0]!];
  assert.deepEqual([oracle.oneHourRequests, oracle.ttlChoicesRight, oracle.ttlChoicesWrong], [1, auto.requests - 1, 0]);
  assert.ok(oracle.billedEquivalent < auto.billedEquivalent, "the oracle bridges the pause auto could not foresee");
  assert.equal(auto.ttlChoicesRight + auto.ttlChoicesWrong, auto.requests - 1);
});

test("bench replay refuses an unknown --ttl, and a TTL other than 5m under OpenAI's rules, with exit 2", async (t) => {
  const dir = await tempDir(t);
  const bad = await runCli(["bench", "replay", two[0]!, "--ttl", "2h"], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--ttl takes 5m, 1h, auto, oracle; got "2h"/);
  const openai = await runCli(["bench", "replay", two[0]!, "--cache", "openai", "--ttl", "1h"], { cwd: dir });
  assert.equal(openai.code, 2);
  assert.match(openai.stderr, /--ttl 1h is for Anthropic's cache marks/);
});
