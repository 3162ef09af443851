/**
 * The replay's chart: billed-equivalent input against retained context (the cost/context
 * frontier, one line per strategy across the budgets, each point labelled with its budget) beside
 * the hit rate against the budget; tick labels rounded.
 * Rendered to SVG by vega-chart.ts.
 */
import type { TopLevelSpec } from "vega-lite";
import type { SweepRow } from "../transcript/replay-sweep.js";
import { renderVegaLiteSvg } from "./vega-chart.js";

/**
 * Tick labels (d3-format): shares to at most three places with trailing zeros dropped (`0.3`,
 * never `0.30000000000000004` or `1.000000`), token counts whole with thousands separators.
 */
const SHARE_FORMAT = ".3~f";
const TOKENS_FORMAT = ",.0f";

export function replayChartSpec(rows: readonly SweepRow[]): TopLevelSpec {
  // `recorded` has no budget of its own: it is not a point on these axes.
  const values = rows.flatMap((r) => (r.budget === null ? [] : [{ ...r, budget: r.budget }])).map((r) => ({
    strategy: r.strategy,
    budget: r.budget,
    budgetLabel: `${r.budget / 1000}k`,
    retained: Number(r.figures.retainedContext.toFixed(4)),
    billed: Math.round(r.figures.billedEquivalent),
    hitRate: Number(r.figures.hitRate.toFixed(4)),
  }));
  const color = { field: "strategy", type: "nominal", title: "strategy" } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    data: { values },
    hconcat: [
      {
        title: "Cost against retained context (compacting strategies)",
        width: 360, height: 260,
        transform: [{ filter: "datum.strategy !== 'none'" }],
        encoding: {
          x: { field: "retained", type: "quantitative", title: "retained context (Σ sent ÷ Σ min(uncompacted, B))", scale: { zero: false }, axis: { format: SHARE_FORMAT } },
          y: { field: "billed", type: "quantitative", title: "billed-equivalent input tokens", scale: { zero: false }, axis: { format: TOKENS_FORMAT } },
          color,
        },
        layer: [
          {
            mark: { type: "line", point: true },
            encoding: { order: { field: "budget", type: "quantitative" }, tooltip: [{ field: "strategy" }, { field: "budgetLabel", title: "budget" }] },
          },
          // Each point says which budget it is: the line runs across the budgets.
          { mark: { type: "text", align: "left", dx: 5, dy: -7, fontSize: 10 }, encoding: { text: { field: "budgetLabel" } } },
        ],
      },
      {
        title: "Cache hit rate against budget",
        width: 300, height: 260,
        mark: { type: "line", point: true },
        encoding: {
          x: { field: "budgetLabel", type: "ordinal", title: "budget (tokens)", sort: { field: "budget" } },
          y: { field: "hitRate", type: "quantitative", title: "cache hit rate", scale: { zero: false }, axis: { format: SHARE_FORMAT } },
          color,
        },
      },
    ],
  };
}

export async function renderReplayChart(rows: readonly SweepRow[], path: string): Promise<void> {
  await renderVegaLiteSvg(replayChartSpec(rows), path);
}
