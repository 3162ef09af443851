/**
 * `report compare --chart FILE.svg`: each cell's pass rate (with its Wilson 95 % interval as a
 * bar) against what a trial cost, one point per task and side — base and head, or each cell with
 * `--cells` — coloured by side. Dollars per trial when every point is priced, else tokens per
 * trial, else steps (a scripted suite without `priceAs` has no dollars): the axis says which.
 * The Vega-Lite spec is written beside the SVG (`FILE.vl.json`), for a viewer or a notebook.
 */
import type { TopLevelSpec } from "vega-lite";
import { cellName, type CellFigures, type Comparison } from "../runner/reports/compare-rows.js";
import type { CompareLabels } from "../runner/reports/compare-markdown.js";
import { reportDestination } from "../runner/reports/report-destination.js";
import { writeOutputFile } from "./output-file.js";
import { renderVegaLiteSvg } from "./vega-chart.js";

interface ChartPoint {
  task: string;
  side: string;
  figures: CellFigures;
}

/** The measures the x axis can show, in the order tried: the first every point has. */
const X_MEASURES = [
  { field: "costPerTrialUsd", title: "cost per trial (USD)", format: "$.4f" },
  { field: "tokensPerTrial", title: "tokens per trial", format: ",.0f" },
  { field: "steps", title: "steps per trial (mean)", format: ".1f" },
] as const;

export function compareChartSpec(comparison: Comparison, labels: CompareLabels): TopLevelSpec {
  const points = chartPoints(comparison, labels);
  const measure = X_MEASURES.find((m) => points.every((p) => p.figures[m.field] !== null)) ?? X_MEASURES[2];
  const values = points.flatMap((p) => {
    const x = p.figures[measure.field];
    if (p.figures.passRate === null || x === null) return [];
    const { rate, lower, upper } = p.figures.passRate;
    return [{ task: p.task, side: p.side, x: round(x), rate: round(rate), lower: round(lower), upper: round(upper), trials: p.figures.trials }];
  });
  const x = { field: "x", type: "quantitative", title: measure.title, axis: { format: measure.format } } as const;
  const color = { field: "side", type: "nominal", title: comparison.mode === "cells" ? "cell" : "run" } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "Pass rate (Wilson 95 % interval) against cost per cell",
    width: 420, height: 300,
    data: { values },
    layer: [
      { mark: { type: "rule", opacity: 0.6 }, encoding: { x, y: { field: "lower", type: "quantitative" }, y2: { field: "upper" }, color } },
      {
        mark: { type: "point", filled: true, size: 60 },
        encoding: {
          x,
          y: { field: "rate", type: "quantitative", title: "pass rate", scale: { domain: [0, 1] }, axis: { format: ".0%" } },
          color,
          tooltip: [{ field: "task" }, { field: "side" }, { field: "rate", format: ".3f" }, { field: "lower", format: ".3f" }, { field: "upper", format: ".3f" }, { field: "trials" }],
        },
      },
    ],
  };
}

function chartPoints(comparison: Comparison, labels: CompareLabels): ChartPoint[] {
  const points: ChartPoint[] = [];
  const seen = new Set<string>();
  for (const row of comparison.rows) {
    const task = `${row.suite}/${row.id}`;
    const sides: [string, CellFigures | null][] = comparison.mode === "cells"
      ? [[cellName(row.baseCell), row.kind === "added" ? null : row.base], [cellName(row.headCell), row.kind === "removed" ? null : row.head]]
      : [[`base ${labels.base}`, row.kind === "added" ? null : row.base], [`head ${labels.head}`, row.kind === "removed" ? null : row.head]];
    for (const [side, figures] of sides) {
      const cell = comparison.mode === "runs" && row.headCell !== null ? `${task}@${row.headCell}` : task;
      // With --cells the base cell is on every row of its task: one point for it.
      const key = `${cell}\0${side}`;
      if (figures === null || seen.has(key)) continue;
      seen.add(key);
      points.push({ task: cell, side, figures });
    }
  }
  return points;
}

const round = (x: number): number => Number(x.toFixed(6));

/** The spec's path beside the SVG's: `chart.svg` → `chart.vl.json`. */
export function chartSpecPath(svgPath: string): string {
  return `${svgPath.replace(/\.svg$/i, "")}.vl.json`;
}

/**
 * Writes the chart's SVG at `path` and its spec beside it; returns the spec's path. A chart written
 * into a device, FIFO or link (`/dev/stdout`) has no "beside": its spec is not written (null).
 */
export async function renderCompareChart(comparison: Comparison, labels: CompareLabels, path: string): Promise<string | null> {
  const spec = compareChartSpec(comparison, labels);
  const beside = (await reportDestination(path)) === "replace";
  await renderVegaLiteSvg(spec, path);
  if (!beside) return null;
  const specPath = chartSpecPath(path);
  await writeOutputFile(specPath, `${JSON.stringify(spec, null, 2)}\n`);
  return specPath;
}
