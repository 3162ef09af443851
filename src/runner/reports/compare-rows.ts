/**
 * `rhema report compare`'s row model (issue 22): two sets of trial results — a base run and a head
 * run, or one run's cells — become one row per (task, cell), each side with its counted trials'
 * figures and, where both sides have trials, the change of the pass rate with Newcombe's interval
 * (trials/newcombe.ts) and the verdict it gives (compare-verdict.ts). Both modes build the same
 * rows, so the Markdown, the JSON and the chart read one model. Pure: results in, rows out.
 *
 * A cell is a task's variant (`trial.variant` of its results; null: no variant, shown `default`).
 * Between two runs a row pairs the same task and cell; `--cells` pairs each task's other cells
 * with its base cell in the one run.
 */
import { spentTokens } from "../../core/transcript-types.js";
import { countedStats, sumResultStats } from "../pricing/cost-figures.js";
import { trialKeyOf } from "../run-dir/run-dir.js";
import type { TaskResult } from "../run-dir/task-result.js";
import { compareTasks, compareVariant, taskKey } from "../tasks/task-key.js";
import { newcombeDifference, type RateDifference } from "../trials/newcombe.js";
import { NO_VARIANT_FOLDER } from "../trials/trial-key.js";
import { costPerPass, isFlaky, passRate, spreadOf } from "../trials/trial-figures.js";
import { cellTotals, type CellTotal } from "./compare-cells.js";
import { verdictOf, type CompareVerdict } from "./compare-verdict.js";

/** One side of a row: the figures of a cell's counted trials (every trial with a result). */
export interface CellFigures {
  /** n: trials with a result (errored and stopped ones count as not passed). */
  trials: number;
  /** c: of them, passed. */
  passes: number;
  /** c/n with its Wilson 95 % interval; null without a counted trial. */
  passRate: { rate: number; lower: number; upper: number } | null;
  /** Dollars per trial; null when a trial is unpriced (a partial sum would understate it). */
  costPerTrialUsd: number | null;
  /** Dollars over passes; null when unpriced or when nothing passed. */
  costPerPassUsd: number | null;
  /** Tokens (input, cache, output, worker) per trial with a transcript; null when none has one. */
  tokensPerTrial: number | null;
  /** Tokens over passes; null when nothing passed or no trial has a transcript. */
  tokensPerPass: number | null;
  /** Cache hit rate over the summed transcript stats; null without one. */
  cacheHitRate: number | null;
  /** HR*(B), the best hit rate the budget allows (1 − new ÷ budgeted tokens), over the summed stats; null without one. */
  limitHitRate: number | null;
  /** Mean model steps per trial; null without a counted trial. */
  steps: number | null;
  /** Both passed and failed. */
  flaky: boolean;
}

/** A flaky ↔ stable change between the sides (stable: every trial passed, or none did). */
export type FlakyFlip = "became-flaky" | "became-stable" | null;

/** Where a row's task and cell are found. */
interface RowKey {
  suite: string;
  id: string;
  /** The base side's cell (its variant; null: none). */
  baseCell: string | null;
  /** The head side's cell. */
  headCell: string | null;
}

/** One compared (task, cell): on both sides, only the head's (added) or only the base's (removed). */
export type CompareRow =
  | (RowKey & {
    kind: "compared";
    base: CellFigures;
    head: CellFigures;
    /** head − base of the pass rates with Newcombe's 95 % interval; null when a side has no counted trial. */
    change: RateDifference | null;
    verdict: CompareVerdict;
    flakyFlip: FlakyFlip;
  })
  | (RowKey & { kind: "added"; head: CellFigures })
  | (RowKey & { kind: "removed"; base: CellFigures });

export type RowStatus = CompareVerdict | "added" | "removed";

/** A row's status: its verdict, or added/removed. */
export function rowStatus(row: CompareRow): RowStatus {
  return row.kind === "compared" ? row.verdict : row.kind;
}

/** What a comparison holds: its rows in task order, and how it was made. */
export interface Comparison {
  mode: "runs" | "cells";
  /** The ± band within which a change is unchanged. */
  margin: number;
  /** `--cells`: the cell the others are compared with; null between two runs. */
  baseCell: string | null;
  rows: CompareRow[];
  /** `--cells`: each cell of the run over all its tasks (compare-cells.ts), the base cell first; null between two runs. */
  cells: CellTotal[] | null;
}

/** A cell's name as people read and type it (`--base-cell`): its variant, or `default`. */
export function cellName(cell: string | null): string {
  return cell ?? NO_VARIANT_FOLDER;
}

/** Base run against head run: one row per (task, cell) of either. */
export function compareRuns(base: readonly TaskResult[], head: readonly TaskResult[], margin: number): Comparison {
  const baseCells = groupCells(base);
  const headCells = groupCells(head);
  const keys = new Map<string, { suite: string; id: string; cell: string | null }>();
  for (const group of [...baseCells.values(), ...headCells.values()]) keys.set(cellKey(group), group);
  const rows = [...keys.entries()].map(([key, { suite, id, cell }]) =>
    pairRow({ suite, id, baseCell: cell, headCell: cell }, baseCells.get(key)?.results, headCells.get(key)?.results, margin));
  return { mode: "runs", margin, baseCell: null, rows: sortRows(rows), cells: null };
}

/** The cells of one run, each set against `baseCell`: a row per task and other cell. */
export function compareCells(results: readonly TaskResult[], baseCell: string | null, margin: number): Comparison {
  const cells = groupCells(results);
  const tasks = new Map<string, { suite: string; id: string; cells: Set<string | null> }>();
  for (const group of cells.values()) {
    const key = taskKey(group);
    const task = tasks.get(key) ?? { suite: group.suite, id: group.id, cells: new Set<string | null>() };
    task.cells.add(group.cell);
    tasks.set(key, task);
  }
  const others = [...new Set([...cells.values()].map((g) => g.cell))].filter((cell) => cell !== baseCell);
  const rows: CompareRow[] = [];
  for (const task of tasks.values()) {
    const baseResults = cells.get(cellKey({ ...task, cell: baseCell }))?.results;
    for (const cell of others) {
      const headResults = cells.get(cellKey({ ...task, cell }))?.results;
      if (baseResults === undefined && headResults === undefined) continue;
      rows.push(pairRow({ suite: task.suite, id: task.id, baseCell, headCell: cell }, baseResults, headResults, margin));
    }
  }
  const order = [baseCell, ...cellsOf(results).filter((cell) => cell !== baseCell)];
  return { mode: "cells", margin, baseCell, rows: sortRows(rows), cells: cellTotals(results, order) };
}

/** Every cell of the results, in the one order of cells (no variant first, then by name). */
export function cellsOf(results: readonly TaskResult[]): (string | null)[] {
  const cells = [...new Set(results.map((r) => trialKeyOf(r).variant))];
  return cells.sort(compareVariant);
}

function pairRow(key: RowKey, base: readonly TaskResult[] | undefined, head: readonly TaskResult[] | undefined, margin: number): CompareRow {
  if (base === undefined) return { ...key, kind: "added", head: cellFigures(head ?? []) };
  if (head === undefined) return { ...key, kind: "removed", base: cellFigures(base) };
  const b = cellFigures(base);
  const h = cellFigures(head);
  const change = b.trials > 0 && h.trials > 0
    ? newcombeDifference({ passes: h.passes, trials: h.trials }, { passes: b.passes, trials: b.trials })
    : null;
  return { ...key, kind: "compared", base: b, head: h, change, verdict: verdictOf(change, margin), flakyFlip: flakyFlip(b.flaky, h.flaky) };
}

function flakyFlip(base: boolean, head: boolean): FlakyFlip {
  if (base === head) return null;
  return head ? "became-flaky" : "became-stable";
}

/** The figures of a cell's counted trials. */
export function cellFigures(results: readonly TaskResult[]): CellFigures {
  const n = results.length;
  const c = results.filter((r) => r.status === "passed").length;
  const rate = passRate(c, n);
  const costs = results.map((r) => r.cost?.usd ?? null);
  const perPass = costPerPass(costs, c);
  const priced = costs.every((usd) => usd !== null);
  const withStats = results.flatMap((r) => (r.stats === null ? [] : [r.stats]));
  const tokens = withStats.reduce((sum, s) => sum + spentTokens(countedStats(s)), 0);
  const summed = sumResultStats(withStats);
  return {
    trials: n,
    passes: c,
    passRate: rate === null ? null : { rate: rate.rate, lower: rate.interval.lower, upper: rate.interval.upper },
    costPerTrialUsd: priced && n > 0 ? (costs as number[]).reduce((sum, usd) => sum + usd, 0) / n : null,
    costPerPassUsd: perPass.kind === "usd" ? perPass.usd : null,
    tokensPerTrial: withStats.length === 0 ? null : tokens / withStats.length,
    tokensPerPass: withStats.length === 0 || c === 0 ? null : tokens / c,
    cacheHitRate: summed?.cacheHitRate ?? null,
    limitHitRate: summed?.limitHitRate ?? null,
    steps: spreadOf(results.map((r) => r.steps))?.mean ?? null,
    flaky: isFlaky(c, n),
  };
}

interface CellGroup {
  suite: string;
  id: string;
  cell: string | null;
  results: TaskResult[];
}

/** `suite/id` or `suite/id@cell`: the pair's task key. */
function cellKey(group: { suite: string; id: string; cell: string | null }): string {
  return taskKey({ suite: group.suite, id: group.id, variant: group.cell });
}

function groupCells(results: readonly TaskResult[]): Map<string, CellGroup> {
  const groups = new Map<string, CellGroup>();
  for (const result of results) {
    const cell = trialKeyOf(result).variant;
    const key = cellKey({ suite: result.suite, id: result.id, cell });
    const group = groups.get(key) ?? { suite: result.suite, id: result.id, cell, results: [] };
    group.results.push(result);
    groups.set(key, group);
  }
  return groups;
}

/** Task order, then the head's cell (no variant first). */
function sortRows(rows: CompareRow[]): CompareRow[] {
  return rows.sort((a, b) => compareTasks({ ...a, variant: a.headCell }, { ...b, variant: b.headCell }));
}
