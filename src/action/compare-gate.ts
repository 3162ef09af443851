/**
 * What a comparison with the baseline becomes on GitHub, decided in pure functions: the outputs
 * `regressed` and `improved`, whether the step fails under `compare-fail-on` (and why), the job
 * summary's section (every cell) and the pull-request comment's (only what regressed or improved),
 * and the note when there was no baseline to compare with (a warning, never a failure: the first
 * run on a branch has none).
 */
import { taskKey } from "../runner/tasks/task-key.js";
import { countStatuses, renderCompareMarkdown, type CompareLabels } from "../runner/reports/compare-markdown.js";
import { rowStatus, type CompareRow, type Comparison } from "../runner/reports/compare-rows.js";
import { failsGate, type FailOn } from "../runner/reports/compare-verdict.js";
import { counted } from "../core/counted.js";
import type { BaselineSource } from "./baseline.js";

/** The comparison after the run, or why there was none. */
export type BaselineComparison =
  | { kind: "compared"; comparison: Comparison; labels: CompareLabels }
  | { kind: "missing"; source: BaselineSource; reason: string };

/** The outputs `regressed` and `improved`: counts of cells; 0 when nothing was compared. */
export function compareOutputs(result: BaselineComparison): { regressed: string; improved: string } {
  if (result.kind === "missing") return { regressed: "0", improved: "0" };
  const counts = countStatuses(result.comparison.rows);
  return { regressed: String(counts.regressed), improved: String(counts.improved) };
}

/** Why the step fails under `compare-fail-on`, or null; a missing baseline never fails it. */
export function compareFailure(result: BaselineComparison, failOn: FailOn): string | null {
  if (result.kind === "missing") return null;
  const rows = result.comparison.rows.filter((row) => row.kind === "compared");
  if (!failsGate(rows.map((row) => row.verdict), failOn)) return null;
  const failing = rows.filter((row) => row.verdict === "regressed" || (failOn === "inconclusive" && row.verdict === "inconclusive"));
  const by = (verdict: string) => failing.filter((row) => rowStatus(row) === verdict).map(cellLabel);
  const parts = [by("regressed"), by("inconclusive")].flatMap((labels, i) =>
    labels.length === 0 ? [] : [`${counted(labels.length, "cell")} ${i === 0 ? "regressed" : "inconclusive"} (${labels.join(", ")})`]);
  return `against the baseline: ${parts.join("; ")} (compare-fail-on: ${failOn})`;
}

/** A row's task and cell as the JUnit names it: `suite/id`, `suite/id [variant]`. */
function cellLabel(row: CompareRow): string {
  return row.headCell === null ? taskKey(row) : `${taskKey(row)} [${row.headCell}]`;
}

/** The job summary's section: the whole comparison. */
export function compareSummary(result: BaselineComparison): string {
  return result.kind === "missing" ? missingNote(result) : renderCompareMarkdown(result.comparison, result.labels);
}

/** The pull-request comment's section: only the regressions and improvements, the rest counted. */
export function compareComment(result: BaselineComparison): string {
  return result.kind === "missing" ? missingNote(result) : renderCompareMarkdown(result.comparison, result.labels, { rest: "counts" });
}

/** The warning's text for a missing baseline. */
export function missingBaselineMessage(result: Extract<BaselineComparison, { kind: "missing" }>): string {
  return `no baseline to compare with: ${result.reason}; the run is not compared (the first run on a branch has no baseline)`;
}

function missingNote(result: Extract<BaselineComparison, { kind: "missing" }>): string {
  return `## rhema report compare\n\nNo baseline to compare with: ${result.reason}. This run is not compared; the first run on a branch has no baseline.\n`;
}
