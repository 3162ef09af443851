/**
 * `rhema report trend`'s outputs from a `Trend` (trend-figures.ts), each a pure function: the
 * Markdown page (stdout or `--out`), the JSON document (`--json`, `version: 1`), and the proposed
 * quarantine entries (`--propose-quarantine`, written as a quarantine file).
 */
import { assertNever } from "../../core/errors.js";
import { taskKey } from "../tasks/task-key.js";
import type { QuarantineEntry } from "../tasks/quarantine-file.js";
import { formatCostPerPass, formatRate } from "./task-trials.js";
import type { TaskTrend, Trend, TrendPoint } from "./trend-figures.js";

const TREND_JSON_VERSION = 1;

/** The proposed quarantine, by suite then id, each with its reason. */
export function proposedQuarantine(trend: Trend): QuarantineEntry[] {
  return trend.tasks.flatMap((t) => (t.proposed === null ? [] : [{ suite: t.suite, id: t.id, reason: t.proposed }]));
}

/** The rule as a sentence: `flaky in ≥ 2 of the last 10 runs, or ≥ 3 flips`. */
export function describeRule(trend: Trend): string {
  return `flaky in at least ${trend.rule.flakyIn} of the last ${trend.rule.last} runs, or at least ${trend.rule.flips} flips of its verdict among them`;
}

/** The Markdown page. */
export function renderTrendMarkdown(trend: Trend): string {
  const first = trend.runs[0];
  const last = trend.runs.at(-1);
  const span = first && last ? ` (${first.startedAt} \`${first.runId}\` → ${last.startedAt} \`${last.runId}\`)` : "";
  const lines = [
    `## rhema trend: ${trend.tasks.length} ${trend.tasks.length === 1 ? "task" : "tasks"} over the last ${trend.runs.length} of ${trend.given} ${trend.given === 1 ? "run" : "runs"}${span}`,
    "",
    "History oldest → newest: ✅ passed, ⚠️ passed with failed trials (flaky), ❌ failed, 💥 errored, 🛑 stopped, · not in that run.",
    "",
    "| task | history | runs passed | pass rate (trials) | flaky in | flips | cost / trial | cost / pass | |",
    "|---|---|---|---|---|---|---|---|---|",
    ...trend.tasks.map(taskRow),
  ];
  const proposed = trend.tasks.filter((t) => t.proposed !== null);
  lines.push("", "### Proposed quarantine", "", `Rule: ${describeRule(trend)}.`, "");
  if (proposed.length === 0) lines.push("None.");
  for (const t of proposed) lines.push(`- \`${taskKey(t)}\` — ${t.proposed}${t.quarantined ? " (quarantined already)" : ""}`);
  const leave = trend.tasks.filter((t) => t.couldLeave);
  if (leave.length > 0) {
    lines.push("", "### Could leave quarantine", "");
    for (const t of leave) lines.push(`- \`${taskKey(t)}\` — passed all ${t.runs} runs`);
  }
  return `${lines.join("\n")}\n`;
}

function taskRow(t: TaskTrend): string {
  const rate = t.passRate === null ? "—"
    : `${formatRate(t.passRate.rate)} (${t.passes}/${t.trials}) [${formatRate(t.passRate.interval.lower)}, ${formatRate(t.passRate.interval.upper)}]`;
  const cost = t.costPerTrial === null ? "unpriced"
    : `$${t.costPerTrial.firstUsd.toFixed(4)} → $${t.costPerTrial.lastUsd.toFixed(4)}${t.costPerTrial.change === null ? "" : ` (${signedPercent(t.costPerTrial.change)})`}`;
  const marks = [...(t.quarantined ? ["🔒 quarantined"] : []), ...(t.proposed !== null ? ["proposed"] : []), ...(t.couldLeave ? ["could leave"] : [])];
  return `| \`${cell(taskKey(t))}\` | ${t.history.map(symbol).join("")} | ${t.runsPassed} of ${t.runs} | ${rate} | ${t.flakyRuns} of ${t.runs} | ${t.flips} | ${cost} | ${formatCostPerPass(t.costPerPass)} | ${marks.join(", ")} |`;
}

function symbol(point: TrendPoint): string {
  switch (point.status) {
    case null:
      return "·";
    case "passed":
      return point.flaky ? "⚠️" : "✅";
    case "failed":
      return "❌";
    case "errored":
      return "💥";
    case "stopped":
      return "🛑";
    case "unfinished":
      return "·";
    default:
      return assertNever(point.status);
  }
}

function signedPercent(change: number): string {
  const percent = (change * 100).toFixed(1);
  return `${change > 0 ? "+" : ""}${percent}%`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

/** The JSON document (`--json`): the window, the rule, each task's trend and the proposals. */
export function renderTrendJson(trend: Trend): string {
  const doc = {
    version: TREND_JSON_VERSION,
    rule: trend.rule,
    given: trend.given,
    runs: trend.runs,
    tasks: trend.tasks.map((t) => ({
      suite: t.suite, id: t.id, runs: t.runs, runsPassed: t.runsPassed, trials: t.trials, passes: t.passes,
      passRate: t.passRate === null ? null : { rate: t.passRate.rate, lower: t.passRate.interval.lower, upper: t.passRate.interval.upper },
      flakyRuns: t.flakyRuns, flips: t.flips, costPerTrial: t.costPerTrial, costPerPass: t.costPerPass,
      quarantined: t.quarantined, proposed: t.proposed, couldLeave: t.couldLeave,
      history: t.history,
    })),
    proposedQuarantine: proposedQuarantine(trend),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
