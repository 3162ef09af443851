/**
 * `summary.md`: the run as a short markdown page fit for `$GITHUB_STEP_SUMMARY` — a totals
 * line, a table with a row per task (status, time, steps, cache hit rate, policy denials), then
 * the failures with the check that failed and its output tail, or the agent's error.
 * A pure function of results + meta; sizes are capped so a large run stays well under GitHub's
 * 1 MiB summary limit.
 */
import { formatDurationMs } from "../tasks/duration.js";
import { buildStatsReport } from "./stats-report.js";
import { compareTasks, taskKey, type ReportMeta, type TaskResult, type TaskStatus } from "../run-dir/task-result.js";

const STATUS_EMOJI: Record<TaskStatus | "skipped", string> = {
  passed: "✅",
  failed: "❌",
  errored: "💥",
  skipped: "⏭️",
};
const MAX_DETAILED_FAILURES = 50;
const TAIL_LINES = 30;
const TAIL_CHARS = 3_000;

/** The markdown summary of a run; results in any order, listed by suite then id. */
export function renderSummaryReport(results: readonly TaskResult[], meta: ReportMeta): string {
  const ordered = [...results].sort(compareTasks);
  const stats = buildStatsReport(ordered, meta);
  const sections = [totalsSection(stats), taskTable(ordered, meta), failuresSection(ordered)];
  return sections.filter((section) => section !== "").join("\n\n") + "\n";
}

function totalsSection(stats: ReturnType<typeof buildStatsReport>): string {
  const { counts } = stats.total;
  const parts = [
    `${STATUS_EMOJI.passed} ${counts.passed} passed`,
    `${STATUS_EMOJI.failed} ${counts.failed} failed`,
    `${STATUS_EMOJI.errored} ${counts.errored} errored`,
  ];
  if (counts.skipped > 0) parts.push(`${STATUS_EMOJI.skipped} ${counts.skipped} skipped`);
  const figures = [
    `${formatDurationMs(stats.wallTimeMs)} wall`,
    `${formatDurationMs(stats.total.durationMs)} task time`,
    `${stats.total.steps} steps`,
    `cache hit ${percent(stats.total.stats?.cacheHitRate)}`,
    `${stats.total.policyDenials} policy denials`,
  ];
  return [
    `### rhema run \`${stats.runId}\`: ${counts.passed} of ${counts.tasks} tasks passed`,
    "",
    `${parts.join(" · ")} — ${figures.join(" · ")}`,
  ].join("\n");
}

function taskTable(results: readonly TaskResult[], meta: ReportMeta): string {
  const rows = results.map((r) => ({ suite: r.suite, id: r.id, cells: [
    STATUS_EMOJI[r.status],
    code(taskKey(r)),
    formatDurationMs(r.durationMs),
    String(r.steps),
    percent(r.stats?.cacheHitRate),
    String(r.policyDenials.count),
  ] }));
  for (const task of meta.skipped ?? []) {
    rows.push({ suite: task.suite, id: task.id, cells: [STATUS_EMOJI.skipped, code(taskKey(task)), "—", "—", "—", "—"] });
  }
  if (rows.length === 0) return "_No tasks ran._";
  return [
    "| | Task | Time | Steps | Cache hit | Denials |",
    "|:-:|:--|--:|--:|--:|--:|",
    ...rows.sort(compareTasks).map((row) => `| ${row.cells.map(tableCell).join(" | ")} |`),
  ].join("\n");
}

function failuresSection(results: readonly TaskResult[]): string {
  const failures = results.filter((r) => r.status !== "passed");
  if (failures.length === 0) return "";
  const shown = failures.slice(0, MAX_DETAILED_FAILURES).map(failureEntry);
  const more = failures.length - shown.length;
  if (more > 0) shown.push(`…and ${more} more: see junit.xml and stats.json.`);
  return ["#### Failures", "", shown.join("\n\n")].join("\n");
}

function failureEntry(result: TaskResult): string {
  const title = `${STATUS_EMOJI[result.status]} **${escapeMarkdown(taskKey(result))}**`;
  if (result.status === "errored") {
    const error = result.error ?? { code: "unknown", message: "the agent failed" };
    return `${title} — agent error ${code(error.code)}: ${escapeMarkdown(firstLine(error.message))}`;
  }
  return result.checks
    .filter((check) => !check.passed)
    .map((check) => {
      const outcome = check.timedOut ? "timed out" : check.exitCode === null ? "was killed" : `failed (exit ${check.exitCode})`;
      return [
        `${title} — check ${code(check.name)} ${outcome}`,
        "",
        fenced(tailOf(check.outputTail)),
      ].join("\n");
    })
    .join("\n\n");
}

function percent(rate: number | undefined): string {
  return rate === undefined ? "—" : `${(rate * 100).toFixed(1)}%`;
}

/** Inline code whose fence is longer than any backtick run inside it. */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** A fenced block whose fence is longer than any backtick run inside it. */
function fenced(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}text\n${text === "" ? "(no output)" : text}\n${fence}`;
}

function tableCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>|#]/g, (ch) => `\\${ch}`);
}

function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

function tailOf(text: string): string {
  const lines = text.replace(/\s+$/, "").split(/\r?\n/).slice(-TAIL_LINES).join("\n");
  return lines.length <= TAIL_CHARS ? lines : `…${lines.slice(-TAIL_CHARS)}`;
}
