/**
 * A comparison as JSON (`rhema report compare --json FILE`): the row model (compare-rows.ts) with
 * the two run directories, the margin, the gate and the counts. Its schema is published as
 * `schema/compare.schema.json` (scripts/gen-schemas.mjs), generated from the zod schema here.
 */
import { z } from "zod";
import { cellName, rowStatus, type CellFigures, type CompareRow, type Comparison } from "./compare-rows.js";
import { countStatuses } from "./compare-markdown.js";
import { failsGate, type FailOn } from "./compare-verdict.js";

export const COMPARE_REPORT_VERSION = 1;

const rate = z.number().min(0).max(1);
const count = z.number().int().nonnegative();

const cellFiguresSchema = z.strictObject({
  trials: count.describe("Counted trials: those with a result (errored and stopped ones count as not passed)."),
  passes: count.describe("Of them, passed."),
  passRate: z.strictObject({ rate, lower: rate, upper: rate }).nullable().describe("passes ÷ trials with its Wilson 95 % interval; null without a counted trial."),
  costPerTrialUsd: z.number().nonnegative().nullable().describe("Dollars per trial; null when a trial is unpriced."),
  costPerPassUsd: z.number().nonnegative().nullable().describe("Dollars over passes; null when unpriced or when nothing passed."),
  tokensPerTrial: z.number().nonnegative().nullable().describe("Tokens (input, cache, output, worker) per trial with a transcript; null when none has one."),
  tokensPerPass: z.number().nonnegative().nullable().describe("Tokens over passes; null when nothing passed or no trial has a transcript."),
  cacheHitRate: rate.nullable().describe("Cache hit rate over the summed transcript stats; null without one."),
  limitHitRate: rate.nullable().describe("HR*(B): the best hit rate the budget allows, over the summed transcript stats; null without one."),
  steps: z.number().nonnegative().nullable().describe("Mean model steps per trial; null without a counted trial."),
  flaky: z.boolean().describe("Both passed and failed."),
});

const cellTotalSchema = z.strictObject({
  cell: z.string().nullable().describe("The cell (variant); null: no variant."),
  tasks: count.describe("Tasks with a counted trial in the cell."),
  trials: count.describe("Counted trials over the cell's tasks."),
  passes: count.describe("Of them, passed."),
  passRate: z.strictObject({ rate, lower: rate, upper: rate }).nullable().describe("passes ÷ trials with its Wilson 95 % interval; null without a counted trial."),
  requests: count.describe("Model requests over the trials with a transcript (the compaction worker's apart)."),
  flushes: count.describe("Compaction flushes over those trials."),
  cacheHitRate: rate.nullable().describe("Cache hit rate over the cell's summed transcript stats (as `bench replay` computes it); null without one."),
  limitHitRate: rate.nullable().describe("HR*(B) over the cell's summed transcript stats; null without one."),
  billedEquivalentTokens: z.number().nonnegative().nullable().describe("Input priced as plain input tokens: input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads, the worker's included; null without stats."),
  workerBilledEquivalentTokens: z.number().nonnegative().nullable().describe("Of it, the compaction worker's (0 when the elider summarized); null without stats."),
  costUsd: z.number().nonnegative().nullable().describe("Dollars over the cell's trials; null when a trial is unpriced."),
  costPerPassUsd: z.number().nonnegative().nullable().describe("Dollars over passes; null when unpriced or nothing passed."),
});

const statusSchema = z.enum(["regressed", "improved", "unchanged", "inconclusive", "added", "removed"]);

const rowSchema = z.strictObject({
  suite: z.string(),
  id: z.string(),
  baseCell: z.string().nullable().describe("The base side's cell (variant); null: no variant."),
  headCell: z.string().nullable().describe("The head side's cell (variant); null: no variant."),
  status: statusSchema.describe("The verdict from the interval on the change, or added (head only) / removed (base only)."),
  base: cellFiguresSchema.nullable().describe("The base side's figures; null when added."),
  head: cellFiguresSchema.nullable().describe("The head side's figures; null when removed."),
  change: z.strictObject({
    difference: z.number().min(-1).max(1),
    lower: z.number().min(-1).max(1),
    upper: z.number().min(-1).max(1),
  }).nullable().describe("head − base of the pass rates with Newcombe's 95 % interval (hybrid score, method 10); null when added, removed, or a side has no counted trial."),
  flakyFlip: z.enum(["became-flaky", "became-stable"]).nullable().describe("A flaky ↔ stable change; null when none."),
});

export const compareReportSchema = z.strictObject({
  version: z.literal(COMPARE_REPORT_VERSION),
  mode: z.enum(["runs", "cells"]).describe("runs: BASE against HEAD; cells: one run's cells against its base cell (--cells)."),
  base: z.string().describe("The base run directory as given (with --cells, the run's)."),
  head: z.string().describe("The head run directory as given (with --cells, the run's)."),
  baseCell: z.string().nullable().describe("With --cells, the cell the others are compared with (`default`: no variant); null between two runs."),
  margin: z.number().min(0).max(1).describe("The ± band within which a change is unchanged (--margin)."),
  failOn: z.enum(["regressed", "inconclusive", "never"]).describe("What fails the comparison (--fail-on)."),
  failed: z.boolean().describe("Whether the comparison failed its gate (exit code 1)."),
  counts: z.strictObject({
    regressed: count, improved: count, unchanged: count, inconclusive: count, added: count, removed: count,
  }).describe("Rows by status."),
  rows: z.array(rowSchema).describe("One row per task and cell, by suite, id, then cell."),
  cells: z.array(cellTotalSchema).nullable().describe("With --cells, each cell of the run over all its tasks, the base cell first; null between two runs."),
}).meta({ title: "rhema report compare", description: "The JSON of `rhema report compare`: pass-rate changes with confidence intervals, verdicts, cost, tokens and cache per task and cell." });

export type CompareReport = z.infer<typeof compareReportSchema>;

/** The published JSON Schema (`schema/compare.schema.json`). */
export function compareJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(compareReportSchema) as Record<string, unknown>;
}

/** The report of `comparison` between the directories `base` and `head` under the gate `failOn`. */
export function buildCompareReport(comparison: Comparison, dirs: { base: string; head: string }, failOn: FailOn): CompareReport {
  return {
    version: COMPARE_REPORT_VERSION,
    mode: comparison.mode,
    base: dirs.base,
    head: dirs.head,
    baseCell: comparison.mode === "cells" ? cellName(comparison.baseCell) : null,
    margin: comparison.margin,
    failOn,
    failed: comparisonFails(comparison, failOn),
    counts: countStatuses(comparison.rows),
    rows: comparison.rows.map(rowJson),
    cells: comparison.cells === null ? null : comparison.cells.map((total) => ({ ...total, passRate: total.passRate === null ? null : { ...total.passRate } })),
  };
}

/** Whether the comparison fails `failOn` (the command's exit code 1). */
export function comparisonFails(comparison: Comparison, failOn: FailOn): boolean {
  return failsGate(comparison.rows.flatMap((row) => (row.kind === "compared" ? [row.verdict] : [])), failOn);
}

function rowJson(row: CompareRow): CompareReport["rows"][number] {
  const base = row.kind === "added" ? null : figuresJson(row.base);
  const head = row.kind === "removed" ? null : figuresJson(row.head);
  const change = row.kind === "compared" && row.change !== null
    ? { difference: row.change.difference, lower: row.change.interval.lower, upper: row.change.interval.upper }
    : null;
  return {
    suite: row.suite, id: row.id, baseCell: row.baseCell, headCell: row.headCell, status: rowStatus(row),
    base, head, change, flakyFlip: row.kind === "compared" ? row.flakyFlip : null,
  };
}

function figuresJson(figures: CellFigures): CellFigures {
  return { ...figures, passRate: figures.passRate === null ? null : { ...figures.passRate } };
}
