/**
 * `rhema report compare BASE HEAD` (or `--cells RUN`): reads the run directories, builds the
 * comparison (runner/reports/compare-rows.ts), prints or writes it as Markdown (`--format md`,
 * the default) or JSON, writes the JSON (`--json FILE`) and the chart (`--chart FILE.svg`), and
 * exits 1 when the comparison fails `--fail-on` (default: anything regressed).
 */
import { resolve } from "node:path";
import type { Argv } from "yargs";
import { RhemaError } from "../core/errors.js";
import { guardOutput } from "../runner/run-dir/output-guard.js";
import { buildCompareReport, comparisonFails } from "../runner/reports/compare-json.js";
import { renderCompareMarkdown, countStatuses } from "../runner/reports/compare-markdown.js";
import { readCompareRuns } from "../runner/reports/compare-read.js";
import { cellName, cellsOf, compareCells, compareRuns, type Comparison } from "../runner/reports/compare-rows.js";
import { DEFAULT_MARGIN, FAIL_ON_CHOICES, type FailOn } from "../runner/reports/compare-verdict.js";
import { NO_VARIANT_FOLDER } from "../runner/trials/trial-key.js";
import { EXIT_OK, EXIT_TASK_FAILED, type ExitCode } from "./exit-codes.js";
import { withExamples } from "./help-format.js";
import { print, type CliIo } from "./io.js";
import { counted } from "../core/counted.js";
import { renderCompareChart } from "./compare-chart.js";
import { writeOutputFile } from "./output-file.js";

/** The options of `report compare`, declared once. */
export function reportCompareOptions<T>(y: Argv<T>) {
  return withExamples(y, [
    ["$0 report compare base-run head-run --out compare.md", "did head regress against base? exit 1 if any task did"],
    ["$0 report compare run --cells --base-cell model=sonnet --chart cells.svg", "one matrix run's cells against one of them"],
  ])
    .positional("dirs", { type: "string", array: true, demandOption: true, default: undefined, describe: "BASE and HEAD run directories (one run directory with --cells)" })
    .option("cells", { type: "boolean", default: false, describe: "compare one run's cells (variants) with its base cell instead of two runs" })
    .option("base-cell", { type: "string", describe: "with --cells, the cell the others are compared with (default: the first; `default` is no variant)" })
    .option("margin", { type: "string", default: String(DEFAULT_MARGIN), describe: "a change whose 95 % interval lies within ±margin is unchanged (0 to below 1)" })
    .option("fail-on", { type: "string", default: "regressed", choices: FAIL_ON_CHOICES, describe: "exit 1 when a cell regressed, when one regressed or is inconclusive, or never" })
    .option("format", { type: "string", default: "md", choices: ["md", "json"], describe: "what is printed (or written to --out): Markdown or JSON" })
    .option("out", { type: "string", describe: "write the comparison to this file instead of stdout" })
    .option("json", { type: "string", describe: "also write the comparison as JSON (schema/compare.schema.json) to this file" })
    .option("chart", { type: "string", describe: "write an SVG chart of pass rate (with its interval) against cost per cell, and its Vega-Lite spec beside it (.vl.json)" });
}

export interface ReportCompareArgs {
  dirs: string[];
  cells: boolean;
  baseCell?: string | undefined;
  margin: string | number;
  failOn: string;
  format: string;
  out?: string | undefined;
  json?: string | undefined;
  chart?: string | undefined;
}

export async function reportCompareCommand(args: ReportCompareArgs, io: CliIo): Promise<ExitCode> {
  const margin = parseMargin(args.margin);
  const failOn = args.failOn as FailOn;
  checkDirCount(args);
  if (args.baseCell !== undefined && !args.cells) throw new RhemaError("usage", "--base-cell names the base of --cells: pass --cells too (two run directories are compared cell by cell)");
  const dirs = args.dirs.map((dir) => resolve(io.cwd, dir));
  const runs = await readCompareRuns(dirs);
  const comparison = args.cells ? compareOwnCells(runs[0]!, args.baseCell, margin, args.dirs[0]!) : compareRuns(runs[0]!, runs[1]!, margin);
  const labels = { base: args.dirs[0]!, head: args.dirs[args.cells ? 0 : 1]! };
  const report = buildCompareReport(comparison, labels, failOn);
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const text = args.format === "json" ? json : renderCompareMarkdown(comparison, labels);
  if (args.out !== undefined) {
    const out = resolve(io.cwd, args.out);
    await guardOutput(out, "write", () => writeOutputFile(out, text));
  } else {
    io.stdout.write(text);
  }
  if (args.json !== undefined) {
    const path = resolve(io.cwd, args.json);
    await guardOutput(path, "write", () => writeOutputFile(path, json));
  }
  if (args.chart !== undefined) {
    const path = resolve(io.cwd, args.chart);
    await guardOutput(path, "write", () => renderCompareChart(comparison, labels, path));
  }
  const counts = countStatuses(comparison.rows);
  if (args.out !== undefined) {
    print(io.stderr, `rhema: compared ${counted(comparison.rows.length, "cell")}: ${counts.regressed} regressed, ${counts.improved} improved, ${counts.unchanged} unchanged, ${counts.inconclusive} inconclusive, ${counts.added} added, ${counts.removed} removed`);
  }
  return comparisonFails(comparison, failOn) ? EXIT_TASK_FAILED : EXIT_OK;
}

/** `--margin`: a number from 0 to below 1, or exit 2 quoting what was given. */
export function parseMargin(value: string | number): number {
  const text = String(value).trim();
  const n = /^(?:0|[1-9]\d*)?(?:\.\d+)?$/.test(text) && text !== "" && text !== "." ? Number(text) : NaN;
  if (!Number.isFinite(n) || n < 0 || n >= 1) throw new RhemaError("usage", `--margin takes a pass-rate change from 0 to below 1 (e.g. 0.1 for 10 points), got ${JSON.stringify(String(value))}`);
  return n;
}

function checkDirCount(args: ReportCompareArgs): void {
  const want = args.cells ? 1 : 2;
  if (args.dirs.length === want) return;
  const given = `got ${args.dirs.length}: ${args.dirs.join(" ")}`;
  throw new RhemaError("usage", args.cells
    ? `--cells compares the cells of one run directory: give one, ${given}`
    : `Expected two run directories, BASE and HEAD (or one with --cells), ${given}`);
}

/** `--cells`: the run's cells against `--base-cell` (by name; `default` is no variant), else its first cell. */
function compareOwnCells(results: Parameters<typeof cellsOf>[0], baseCellName: string | undefined, margin: number, dir: string): Comparison {
  const cells = cellsOf(results);
  if (cells.length < 2) {
    throw new RhemaError("usage", `The run directory ${dir} has ${cells.length === 1 ? `one cell (${cellName(cells[0] ?? null)})` : "no cell"}: --cells needs a run with several variants (a matrix); compare two runs as BASE HEAD instead`);
  }
  if (baseCellName === undefined) return compareCells(results, cells[0]!, margin);
  const baseCell = baseCellName === NO_VARIANT_FOLDER ? null : baseCellName;
  if (!cells.includes(baseCell)) {
    throw new RhemaError("usage", `--base-cell ${JSON.stringify(baseCellName)} is not a cell of ${dir}; its cells are ${cells.map(cellName).join(", ")}`);
  }
  return compareCells(results, baseCell, margin);
}
