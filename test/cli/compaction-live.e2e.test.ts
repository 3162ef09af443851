/**
 * Benchmarking compaction live (issue 22): the example suite bench/compaction-live run as its
 * matrix over transcript budgets through the built CLI; `report compare --cells` gives each cell's
 * figures, and `bench replay` of the same run directory — one input per cell — at each cell's own
 * budget gives the same requests, flushes, hit rate, HR*(B) and billed-equivalent input: the live
 * run and the replay drive the same transcript mirror through the same prompt-cache simulator.
 * The one difference is the compaction worker: a scripted task's elider sends no request, the
 * replay models one for every strategy alike, so the replay's worker part is set apart. The
 * README's figures are what such a run gives.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { repoRoot } from "../support/paths.js";
import { tempDir } from "../support/temp-dir.js";

const SUITE = join(repoRoot, "bench", "compaction-live");

interface CellTotal { cell: string; trials: number; passes: number; requests: number; flushes: number; cacheHitRate: number; limitHitRate: number; billedEquivalentTokens: number; workerBilledEquivalentTokens: number; costUsd: number | null }
interface ReplayRow { input: string; budget: number; requests: number; flushes: number; hitRate: number; limit: number; billedEquivalent: number; workerBilledEquivalent: number }

/** Each cell's budget as the matrix file sets it (`{ id: 6k, budgetTokens: 6000 }` → `transcript=6k`: 6000). */
async function cellBudgets(): Promise<Map<string, number>> {
  const text = await readFile(join(SUITE, "matrix.yaml"), "utf8");
  return new Map([...text.matchAll(/\{ id: ([\w.-]+), budgetTokens: (\d+) \}/g)].map((m) => [`transcript=${m[1]}`, Number(m[2])]));
}

test("the live figures of each matrix cell are what `bench replay` of the same run directory gives at the cell's budget", async (t) => {
  const dir = await tempDir(t);
  const budgets = await cellBudgets();
  assert.deepEqual([...budgets.keys()], ["transcript=6k", "transcript=12k", "transcript=64k"]);
  const out = join(dir, "live");
  const run = await runCli(["run", SUITE, "--matrix", join(SUITE, "matrix.yaml"), "--out", out], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);

  const compare = await runCli(["report", "compare", out, "--cells", "--base-cell", "transcript=64k", "--format", "json"], { cwd: dir });
  assert.equal(compare.code, 0, compare.stderr);
  const cells = (JSON.parse(compare.stdout) as { cells: CellTotal[] }).cells;
  assert.deepEqual(cells.map((c) => c.cell), ["transcript=64k", "transcript=12k", "transcript=6k"]);
  const flushes = Object.fromEntries(cells.map((c) => [c.cell, c.flushes]));
  assert.ok(flushes["transcript=6k"]! > flushes["transcript=12k"]! && flushes["transcript=12k"]! > 0 && flushes["transcript=64k"] === 0, `flushes per cell: ${JSON.stringify(flushes)}`);

  const replay = await runCli(["bench", "replay", out, "--strategy", "sections", ...[...budgets.values()].flatMap((b) => ["--budget", String(b)]), "--json"], { cwd: dir });
  assert.equal(replay.code, 0, replay.stderr);
  const rows = (JSON.parse(replay.stdout) as { suites: ReplayRow[] }).suites;
  assert.deepEqual([...new Set(rows.map((r) => r.input))], [...budgets.keys()].map((cell) => `triage@${cell}`), "one replay input per cell, in the matrix's order");

  for (const cell of cells) {
    const row = rows.find((r) => r.input === `triage@${cell.cell}` && r.budget === budgets.get(cell.cell));
    assert.ok(row, `a replay row for ${cell.cell}`);
    t.diagnostic(`${cell.cell}: live hit rate ${cell.cacheHitRate.toFixed(4)}, HR* ${cell.limitHitRate.toFixed(4)}, billed-eq ${cell.billedEquivalentTokens}; replay ${row.hitRate.toFixed(4)}, ${row.limit.toFixed(4)}, ${row.billedEquivalent - row.workerBilledEquivalent}`);
    assert.equal(cell.trials, 2);
    assert.equal(cell.passes, 2);
    assert.equal(cell.workerBilledEquivalentTokens, 0, "the elider summarizes a scripted task's flushes: no worker request");
    // The same integers summed by the same formulas: equal to the last bit.
    assert.deepEqual(
      { requests: row.requests, flushes: row.flushes, hitRate: row.hitRate, limit: row.limit },
      { requests: cell.requests, flushes: cell.flushes, hitRate: cell.cacheHitRate, limit: cell.limitHitRate },
      cell.cell,
    );
    // The replay's billed-equivalent less its modelled worker: a subtraction of floats, so to a millionth of a token.
    assert.ok(Math.abs(row.billedEquivalent - row.workerBilledEquivalent - cell.billedEquivalentTokens) < 1e-6, `${cell.cell}: replay ${row.billedEquivalent} − ${row.workerBilledEquivalent} vs live ${cell.billedEquivalentTokens}`);
  }

  // The README shows such a run: its cells table has these requests and flushes, and these hit
  // rates and HR*(B) but for the last place (the system prompt names the workspace, whose path —
  // under the run directory — changes the token estimates a little from one place to another).
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  for (const cell of cells) {
    const line = readme.split("\n").find((l) => l.startsWith(`| \`${cell.cell}\` |`));
    assert.ok(line, `README.md shows the cell ${cell.cell}`);
    const [, , passes, requests, flushed, hit, limit] = line.split("|").map((s) => s.trim());
    assert.deepEqual([passes, requests, flushed], ["2/2", String(cell.requests), String(cell.flushes)], `README.md's row of ${cell.cell} is stale`);
    assert.ok(Math.abs(Number(hit) - cell.cacheHitRate) < 0.001 && Math.abs(Number(limit) - cell.limitHitRate) < 0.001,
      `README.md's row of ${cell.cell} is stale: ${hit} ${limit}, the run gives ${cell.cacheHitRate.toFixed(4)} ${cell.limitHitRate.toFixed(4)}`);
  }
});
