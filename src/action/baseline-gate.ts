/**
 * The comparison after the run (the `baseline` input): finds the baseline run directory — the
 * path as given, or the newest cache entry of the name restored to BASELINE_DIR — and compares
 * this run with it as `rhema report compare BASELINE RUN` does (the default margin). A baseline
 * that is not there (a cache miss, a path that does not exist, a run that holds no result yet) is
 * `missing`: a warning, no comparison. One that is there but is no readable run directory throws.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { RhemaError } from "../core/errors.js";
import { readShardRun } from "../runner/reports/report-merge.js";
import { compareRuns } from "../runner/reports/compare-rows.js";
import { DEFAULT_MARGIN } from "../runner/reports/compare-verdict.js";
import { canonicalPath } from "../runner/tasks/canonical-path.js";
import { BASELINE_DIR, baselineRestoreKeys, type BaselineSource } from "./baseline.js";
import type { BaselineComparison } from "./compare-gate.js";
import type { RunDirCache } from "./run-cache.js";

export interface BaselineContext {
  cache: RunDirCache;
  workspace: string;
  /** This run's directory (absolute): the head of the comparison. */
  runDir: string;
  /** This job's shard: a cache name restores the baseline of the same shard. */
  shard: string | null;
  log: (line: string) => void;
}

export async function compareWithBaseline(source: BaselineSource, ctx: BaselineContext): Promise<BaselineComparison> {
  const found = await findBaseline(source, ctx);
  if (found.kind === "missing") return { kind: "missing", source, reason: found.reason };
  if (existsSync(ctx.runDir) && (await canonicalPath(found.dir)) === (await canonicalPath(ctx.runDir))) {
    throw new RhemaError("usage", `${found.dir} is this run's own directory (the \`out\` input): name the base run's directory`);
  }
  const base = await readShardRun(found.dir);
  if (base.results.length === 0) return { kind: "missing", source, reason: `${found.label} holds no trial result` };
  const head = await readShardRun(ctx.runDir);
  const comparison = compareRuns(base.results, head.results, DEFAULT_MARGIN);
  return { kind: "compared", comparison, labels: { base: found.label, head: "this run" } };
}

type Found = { kind: "found"; dir: string; label: string } | { kind: "missing"; reason: string };

async function findBaseline(source: BaselineSource, ctx: BaselineContext): Promise<Found> {
  if (source.kind === "path") {
    const dir = resolve(ctx.workspace, source.path);
    return existsSync(dir) ? { kind: "found", dir, label: source.path } : { kind: "missing", reason: `the run directory ${source.path} does not exist` };
  }
  const dir = resolve(ctx.workspace, BASELINE_DIR);
  if (dir === ctx.runDir) throw new RhemaError("usage", `a cached baseline is restored to ${BASELINE_DIR}, which is this run's directory (the \`out\` input): give the run another \`out\``);
  const keys = baselineRestoreKeys(source.name, ctx.shard);
  // A folder left by an earlier step must not pass for the restored baseline.
  await rm(dir, { recursive: true, force: true });
  let hit: string | undefined;
  try {
    hit = await ctx.cache.restore(dir, keys);
  } catch (err) {
    return { kind: "missing", reason: `the ${ctx.cache.name} could not restore ${keys.restoreKeys[0]}…: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (hit === undefined || !existsSync(dir)) return { kind: "missing", reason: `the ${ctx.cache.name} has no entry ${keys.restoreKeys[0]}… (no base run saved one with save-baseline yet)` };
  ctx.log(`restored the baseline ${hit} from the ${ctx.cache.name} to ${BASELINE_DIR}`);
  return { kind: "found", dir, label: hit };
}
