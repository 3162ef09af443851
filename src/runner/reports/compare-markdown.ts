/**
 * A comparison as Markdown: the body of a job summary or a pull-request comment. Regressions
 * first, then improvements, each a table of its own; everything else (unchanged, inconclusive,
 * added, removed) in one collapsed `<details>` table after them. Each figure reads `base → head`.
 */
import { assertNever } from "../../core/errors.js";
import type { CellTotal } from "./compare-cells.js";
import { cellName, rowStatus, type CellFigures, type CompareRow, type Comparison, type RowStatus } from "./compare-rows.js";

/** How the two sides are named in the heading: the run directories as given. */
export interface CompareLabels {
  base: string;
  head: string;
}

/** The order of the collapsed rest. */
const REST_ORDER: readonly RowStatus[] = ["inconclusive", "unchanged", "added", "removed"];

/**
 * What becomes of the rows neither regressed nor improved: a collapsed table (the report, the job
 * summary), or only their counts (the pull-request comment, which lists what changed).
 */
export type RestRows = "table" | "counts";

export function renderCompareMarkdown(comparison: Comparison, labels: CompareLabels, opts: { rest?: RestRows } = {}): string {
  const counts = countStatuses(comparison.rows);
  const lines = ["## rhema report compare", "", `${subject(comparison, labels)}, margin ±${comparison.margin}: ${countLine(counts)}.`];
  const regressed = comparison.rows.filter((row) => rowStatus(row) === "regressed");
  const improved = comparison.rows.filter((row) => rowStatus(row) === "improved");
  const rest = REST_ORDER.flatMap((status) => comparison.rows.filter((row) => rowStatus(row) === status));
  if (comparison.cells !== null) lines.push("", "### Cells (every task)", "", ...cellsTable(comparison.cells));
  if (comparison.rows.length === 0) lines.push("", "No task has a result on either side.");
  if (regressed.length > 0) lines.push("", `### Regressed (${regressed.length})`, "", ...table(regressed, comparison));
  if (improved.length > 0) lines.push("", `### Improved (${improved.length})`, "", ...table(improved, comparison));
  if (rest.length > 0) {
    const summary = REST_ORDER.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`).join(", ");
    if (opts.rest === "counts") lines.push("", `Not listed here: ${summary} (the job summary has every cell).`);
    else lines.push("", `<details><summary>The rest: ${summary}</summary>`, "", ...table(rest, comparison), "", "</details>");
  }
  lines.push("", "The change is head − base of the pass rate with Newcombe's 95 % interval (hybrid score, method 10): " +
    `regressed when it lies below 0, improved above 0, unchanged within ±${comparison.margin}, else inconclusive.`);
  return `${lines.join("\n")}\n`;
}

function subject(comparison: Comparison, labels: CompareLabels): string {
  if (comparison.mode === "cells") return `Cells of ${code(labels.head)} against the cell ${code(cellName(comparison.baseCell))}`;
  return `${code(labels.head)} against the base ${code(labels.base)}`;
}

export type StatusCounts = Record<RowStatus, number>;

export function countStatuses(rows: readonly CompareRow[]): StatusCounts {
  const counts: StatusCounts = { regressed: 0, improved: 0, unchanged: 0, inconclusive: 0, added: 0, removed: 0 };
  for (const row of rows) counts[rowStatus(row)]++;
  return counts;
}

function countLine(counts: StatusCounts): string {
  const regressed = counts.regressed > 0 ? `**${counts.regressed} regressed**` : "0 regressed";
  return [regressed, ...(["improved", "unchanged", "inconclusive", "added", "removed"] as const).map((s) => `${counts[s]} ${s}`)].join(", ");
}

const HEADER = ["task", "status", "pass rate", "change (95 % CI)", "cost / trial", "cost / pass", "tokens / trial", "cache hit rate", "HR*(B)", "steps", "flaky"];

function table(rows: readonly CompareRow[], comparison: Comparison): string[] {
  return [
    `| ${HEADER.join(" | ")} |`,
    `|${HEADER.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${cells(row, comparison).join(" | ")} |`),
  ];
}

function cells(row: CompareRow, comparison: Comparison): string[] {
  const task = `${row.suite}/${row.id}${taskCell(row, comparison)}`;
  const base = row.kind === "added" ? null : row.base;
  const head = row.kind === "removed" ? null : row.head;
  const pair = (show: (side: CellFigures) => string) => `${base ? show(base) : "—"} → ${head ? show(head) : "—"}`;
  return [
    task,
    statusText(row),
    pair((s) => `${s.passes}/${s.trials}`),
    row.kind === "compared" && row.change ? formatChange(row.change.difference, row.change.interval) : "—",
    pair((s) => usd(s.costPerTrialUsd, "unpriced")),
    pair((s) => usd(s.costPerPassUsd, s.costPerTrialUsd === null ? "unpriced" : "no pass")),
    pair((s) => (s.tokensPerTrial === null ? "—" : Math.round(s.tokensPerTrial).toLocaleString("en-US"))),
    pair((s) => rate(s.cacheHitRate)),
    pair((s) => rate(s.limitHitRate)),
    pair((s) => (s.steps === null ? "—" : s.steps.toFixed(1))),
    row.kind === "compared" ? flipText(row.flakyFlip) : "",
  ];
}

/** The cell a row is about: `@cell` when the runs have cells; in `--cells`, which cell against which. */
function taskCell(row: CompareRow, comparison: Comparison): string {
  if (comparison.mode === "cells") return ` @${cellName(row.headCell)}`;
  return row.headCell === null ? "" : ` @${row.headCell}`;
}

const CELLS_HEADER = ["cell", "pass rate", "requests", "flushes", "cache hit rate", "HR*(B)", "billed-eq tokens (worker)", "cost", "cost / pass"];

/** One line per cell over all its tasks: the figures a transcript-settings benchmark reads. */
function cellsTable(totals: readonly CellTotal[]): string[] {
  const whole = (n: number) => Math.round(n).toLocaleString("en-US");
  return [
    `| ${CELLS_HEADER.join(" | ")} |`,
    `|${CELLS_HEADER.map(() => "---").join("|")}|`,
    ...totals.map((t) => `| ${[
      code(cellName(t.cell)),
      `${t.passes}/${t.trials}`,
      String(t.requests),
      String(t.flushes),
      rate4(t.cacheHitRate),
      rate4(t.limitHitRate),
      t.billedEquivalentTokens === null ? "—" : `${whole(t.billedEquivalentTokens)} (${whole(t.workerBilledEquivalentTokens ?? 0)})`,
      usd(t.costUsd, "unpriced"),
      usd(t.costPerPassUsd, t.costUsd === null ? "unpriced" : "no pass"),
    ].join(" | ")} |`),
  ];
}

/** Four places, as `bench replay` prints a hit rate, so the two read alike. */
function rate4(value: number | null): string {
  return value === null ? "—" : value.toFixed(4);
}

function statusText(row: CompareRow): string {
  const status = rowStatus(row);
  switch (status) {
    case "regressed":
      return "**regressed**";
    case "improved":
    case "unchanged":
    case "inconclusive":
      return status;
    case "added":
      return "added (head only)";
    case "removed":
      return "removed (base only)";
    default:
      return assertNever(status);
  }
}

function flipText(flip: Extract<CompareRow, { kind: "compared" }>["flakyFlip"]): string {
  if (flip === null) return "";
  return flip === "became-flaky" ? "stable → flaky" : "flaky → stable";
}

/** `−50.0 pts (−78.1 to −10.2)`: percentage points of pass rate. */
export function formatChange(difference: number, interval: { lower: number; upper: number }): string {
  const pts = (x: number) => `${x < 0 ? "−" : x > 0 ? "+" : ""}${Math.abs(x * 100).toFixed(1)}`;
  return `${pts(difference)} pts (${pts(interval.lower)} to ${pts(interval.upper)})`;
}

function usd(value: number | null, none: string): string {
  return value === null ? none : `$${value.toFixed(4)}`;
}

function rate(value: number | null): string {
  return value === null ? "—" : value.toFixed(3);
}

/** A path in a code span, its backticks dropped (a path's backtick would end the span). */
function code(text: string): string {
  return `\`${text.replace(/`/g, "")}\``;
}
