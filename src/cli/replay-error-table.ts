/**
 * The simulator-error table of `bench replay --strategy recorded`: per session with bills and in
 * total, simulated vs billed cache read, cache write, uncached input and hit rate, and the error
 * (simulated − billed, in percent of the bill; the hit rate in points).
 */
import type { SimulatorError } from "../transcript/replay-recorded.js";
import type { SweepResult, SweepRow } from "../transcript/replay-sweep.js";

/** `n` to `digits` places, never `-0.00`: a value that rounds to zero prints unsigned. */
export function fixedNoNegativeZero(n: number, digits: number): string {
  const text = n.toFixed(digits);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

const pct = (n: number | null) => (n === null ? "-" : `${n >= 0 ? "+" : ""}${fixedNoNegativeZero(n, 1)}%`);

const COLUMNS: Array<[string, (e: SimulatorError) => string]> = [
  ["session", (e) => e.name],
  ["format", (e) => e.format],
  ["billed req", (e) => String(e.billedRequests)],
  ["read sim", (e) => String(e.simulated.cacheReadTokens)],
  ["read billed", (e) => String(e.billed.cacheReadTokens)],
  ["read err", (e) => pct(e.cacheReadErrorPct)],
  ["write sim", (e) => String(e.simulated.cacheWriteTokens)],
  ["write billed", (e) => String(e.billed.cacheWriteTokens)],
  ["write err", (e) => pct(e.cacheWriteErrorPct)],
  ["input sim", (e) => String(e.simulated.inputTokens)],
  ["input billed", (e) => String(e.billed.inputTokens)],
  ["input err", (e) => pct(e.inputErrorPct)],
  ["hit sim", (e) => fixedNoNegativeZero(e.simulated.hitRate, 4)],
  ["hit billed", (e) => fixedNoNegativeZero(e.billed.hitRate, 4)],
  ["hit err pts", (e) => fixedNoNegativeZero(e.hitRateErrorPoints, 2)],
  ["billed-eq sim÷bill", (e) => (e.billedEquivalentRatio === null ? "-" : fixedNoNegativeZero(e.billedEquivalentRatio, 3))],
];

/** The table, or "" when no `recorded` row was replayed. */
export function renderSimulatorErrors(result: SweepResult): string {
  const total = result.total.find((r) => r.strategy === "recorded");
  if (!total) return "";
  const errors = total.sessionErrors ?? [];
  if (errors.length === 0 || !total.error) return "simulator error (recorded vs billed): no request carries a bill — nothing to compare";
  const rows = [...errors, ...(errors.length > 1 ? [total.error] : [])];
  const cells = rows.map((e) => COLUMNS.map(([, cell]) => cell(e)));
  const widths = COLUMNS.map(([head], k) => Math.max(head.length, ...cells.map((c) => c[k]!.length)));
  const line = (values: string[]) => values.map((v, k) => (k < 2 ? v.padEnd(widths[k]!) : v.padStart(widths[k]!))).join("  ");
  return [
    "simulator error (recorded vs billed, over the requests with a bill; err = simulated − billed, in % of the bill, hit rate in points; billed-eq = input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads):",
    line(COLUMNS.map(([head]) => head)),
    ...cells.map(line),
  ].join("\n");
}

/** A `recorded` row's error fields for the JSON output; nothing for other rows. */
export function simulatorErrorsJson(row: SweepRow): { simulatorError?: SimulatorError | null; sessionErrors?: SimulatorError[] } {
  if (row.strategy !== "recorded") return {};
  return { simulatorError: row.error ?? null, sessionErrors: row.sessionErrors ?? [] };
}
