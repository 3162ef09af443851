/**
 * `summary.md`: the run as a short markdown page fit for `$GITHUB_STEP_SUMMARY` — a totals
 * line and the sandbox (a warning when commands ran unsandboxed), where the run's report.html is, a table with a row per task of the run (status, time, steps, cache hit rate, cost, policy
 * denials; interrupted and not-started tasks too), then the failures: the check that failed
 * with its output's first error line and tail, or the agent's error, and the policy's denials;
 * last, the tasks this run removed (the suite no longer defines them). With repeated tasks the
 * heading counts tasks by their gate, the table has a row per trial (`suite/id#3`) and a Trials
 * table gives each task's pass rate with its interval, pass@k, pass^k, a flaky marker and the
 * cost per pass (task-trials.ts); a run whose tasks have one trial each reads as before.
 * A pure function of results + meta; sizes are capped so a large run stays well under GitHub's
 * 1 MiB summary limit.
 */
import { formatDurationMs } from "../tasks/duration.js";
import { buildStatsReport, type StatsAggregate, type StatsReport } from "./stats-report.js";
import { spentTokens } from "../../core/transcript-types.js";
import { countedStats, formatCostTotal, formatTaskCost, type CostTotal } from "../pricing/cost-figures.js";
import { findErrorLine } from "./first-error-line.js";
import { assertNever } from "../../core/errors.js";
import { failureLabel, failureOf } from "./failure-model.js";
import { type CheckOutcome, type PolicyDenial, type TaskResult, type TaskStatus } from "../run-dir/task-result.js";
import { compareTasks, taskKey } from "../tasks/task-key.js";
import { type ReportMeta } from "./report-meta.js";
import { refusalSection } from "./refusal-text.js";
import { counted } from "../../core/counted.js";
import { cellKeyOf, formatAtK, formatCostPerPass, formatGate, groupTaskTrials, hasRepeatedTasks, trialKeyOf, trialLabelOf, type TaskTrials } from "./task-trials.js";
import { compareTrials } from "../trials/trial-key.js";
import { quarantineSection } from "./summary-quarantine.js";
import { diffStat } from "./changes-text.js";
import { RUN_FILES } from "../run-dir/run-dir.js";

const STATUS_EMOJI: Record<TaskStatus | "skipped" | "interrupted" | "notStarted", string> = {
  passed: "✅",
  failed: "❌",
  errored: "💥",
  stopped: "🛑",
  skipped: "⏭️",
  interrupted: "⏸️",
  notStarted: "⏳",
};
const MAX_DETAILED_FAILURES = 50;
const TAIL_LINES = 30;
const TAIL_CHARS = 3_000;
/** The error line the excerpt leads with: whole unless longer than this. */
const LEAD_CHARS = 1_000;

/** The markdown summary of a run; results in any order, listed by suite then id. */
export function renderSummaryReport(results: readonly TaskResult[], meta: ReportMeta): string {
  const ordered = [...results].sort((a, b) => compareTrials(trialKeyOf(a), trialKeyOf(b)));
  const stats = buildStatsReport(ordered, meta);
  const tasks = groupTaskTrials(ordered, meta);
  const repeated = hasRepeatedTasks(tasks);
  const labelOf = labeller(tasks);
  const sections = [
    totalsSection(stats, repeated), viewerNote(meta), shardNote(stats), taskTable(ordered, meta, labelOf), costNote(stats.total.cost),
    repeated ? trialsSection(tasks, meta.passAt ?? []) : "", quarantineSection(tasks), failuresSection(ordered, labelOf), changesSection(ordered, labelOf),
    refusalSection(meta.refusals ?? [], meta.unfinished ?? []), unfinishedNote(meta), removedNote(meta),
  ];
  return sections.filter((section) => section !== "").join("\n\n") + "\n";
}

/** Where the run's report.html is (relative to the repository root), when reports know the run directory's place. */
function viewerNote(meta: ReportMeta): string {
  return meta.runDirShown === undefined ? "" : `Every trial's conversation, tool calls, checks and changes: ${code(`${meta.runDirShown}/${RUN_FILES.html}`)}`;
}

function totalsSection(stats: ReturnType<typeof buildStatsReport>, repeated: boolean): string {
  const { counts } = stats.total;
  const parts = [
    `${STATUS_EMOJI.passed} ${counts.passed} passed`,
    `${STATUS_EMOJI.failed} ${counts.failed} failed`,
    `${STATUS_EMOJI.errored} ${counts.errored} errored`,
  ];
  if (counts.stopped > 0) parts.push(`${STATUS_EMOJI.stopped} ${counts.stopped} stopped on a budget`);
  if (counts.interrupted > 0) parts.push(`${STATUS_EMOJI.interrupted} ${counts.interrupted} interrupted`);
  if (counts.notStarted > 0) parts.push(`${STATUS_EMOJI.notStarted} ${counts.notStarted} not started`);
  if (counts.skipped > 0) parts.push(`${STATUS_EMOJI.skipped} ${counts.skipped} skipped`);
  const figures = [
    `${formatDurationMs(stats.wallTimeMs)} wall`,
    `${formatDurationMs(stats.total.durationMs)} task time`,
    counted(stats.total.steps, "step"),
    ...tokenFigure(stats.total.stats),
    `cache hit ${percent(stats.total.stats?.cacheHitRate)}`,
    ...costFigure(stats.total.cost),
    ...compactionFigures(stats.total.stats),
    counted(stats.total.policyDenials, "policy denial"),
    ...workspaceFigure(stats.total.workspaceDisk, repeated ? "trial" : "task"),
  ];
  return [
    repeated ? repeatedHeading(stats) : `### rhema run \`${stats.runId}\`${shardLabel(stats)}: ${counts.passed} of ${counted(counts.tasks + counts.interrupted + counts.notStarted, "task")} passed`,
    "",
    `${repeated ? "Trials: " : ""}${parts.join(" · ")} — ${figures.join(" · ")}`,
    ...sandboxLines(stats.total.sandbox, stats.tasks, repeated ? "trial" : "task"),
  ].join("\n");
}

/**
 * How the workspaces were made and the disk they hold: "workspaces 4 overlay layers, 1.2 MB" (a
 * layer's disk is what its trial wrote), "workspaces 2 copies, 468 MB (no layers: …)".
 */
function workspaceFigure(disk: StatsReport["total"]["workspaceDisk"], unit: "task" | "trial"): string[] {
  if (disk === null) return [];
  const kinds = disk.mechanisms ?? { copy: disk.tasks, overlay: 0, "fuse-overlayfs": 0 };
  const parts = [
    ...(kinds.overlay > 0 ? [`${kinds.overlay} overlay layer${kinds.overlay === 1 ? "" : "s"}`] : []),
    ...(kinds["fuse-overlayfs"] > 0 ? [`${kinds["fuse-overlayfs"]} fuse-overlayfs layer${kinds["fuse-overlayfs"] === 1 ? "" : "s"}`] : []),
    ...(kinds.copy > 0 ? [`${kinds.copy} cop${kinds.copy === 1 ? "y" : "ies"}`] : []),
  ];
  const why = disk.copyReason ? ` (no layers: ${escapeMarkdown(disk.copyReason)})` : "";
  return [`workspaces ${parts.join(", ") || counted(disk.tasks, unit)}, ${formatBytes(disk.bytes)}${why}`];
}

/** Bytes as people read them: 512 B, 12.3 KB, 4.5 MB, 1.2 GB (powers of 1000, as du -h --si). */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

/** With repeated tasks: tasks passed by their gate, then trials passed of those counted. */
function repeatedHeading(stats: StatsReport): string {
  const trials = stats.total.trials;
  const tasks = stats.taskTrials.length;
  const passedTasks = trials?.tasks.passed ?? 0;
  const trialPart = trials ? ` (${trials.passes} of ${counted(trials.counted, "trial")} passed)` : "";
  return `### rhema run \`${stats.runId}\`${shardLabel(stats)}: ${passedTasks} of ${counted(tasks, "task")} passed${trialPart}`;
}

/** After the run id: ` (shard 2/3)` for a shard, ` (3 shards merged)` / ` (2 of 3 shards merged)` for a merge. */
function shardLabel(stats: StatsReport): string {
  if (stats.shard !== null) return ` (shard ${stats.shard})`;
  if (stats.shards === null) return "";
  const { count, merged } = stats.shards;
  return merged.length === count ? ` (${count} shard${count === 1 ? "" : "s"} merged)` : ` (${merged.length} of ${count} shards merged)`;
}

/** A shard that selected nothing says so (its reports are empty on purpose); a partial merge names the missing shards. */
function shardNote(stats: StatsReport): string {
  const { counts } = stats.total;
  if (stats.shard !== null && counts.tasks + counts.interrupted + counts.notStarted === 0) {
    return `_Shard ${stats.shard} selected no task to run: the selected tasks are all in the other shards. ` +
      "These reports are empty on purpose, for `rhema report merge`._";
  }
  if (stats.shards === null || stats.shards.missing.length === 0) return "";
  const { missing, count } = stats.shards;
  return ["> [!WARNING]", `> **Partial merge:** shard${missing.length === 1 ? "" : "s"} ${missing.join(", ")} of ${count} ` +
    `${missing.length === 1 ? "is" : "are"} missing (merged with --allow-partial): ${missing.length === 1 ? "its" : "their"} tasks are not in these reports.`].join("\n");
}

/**
 * The sandbox the commands ran in: a warning block when some ran unsandboxed by fallback. The
 * counts are of results, so a run with repeated tasks counts trials.
 */
function sandboxLines(sandbox: StatsAggregate["sandbox"], tasks: StatsReport["tasks"], unit: "task" | "trial"): string[] {
  if (sandbox === null) return [];
  const { bwrap, none, off } = sandbox.tasks;
  if (sandbox.mode === "none") {
    // The reason quotes bwrap and is escaped; the fix is rhema's own text, written with inline code.
    return ["", "> [!WARNING]", `> **No sandbox:** the commands of ${counted(none, unit)} ran unsandboxed (\`sandbox: auto\`, bwrap unusable): ` +
      `${escapeMarkdown(sandbox.reason ?? "bwrap could not run")}.` + (sandbox.fix ? ` To sandbox them: ${sandbox.fix}.` : "")];
  }
  const networks = [...new Set(tasks.flatMap((t) => (t.sandbox?.mode === "bwrap" ? [t.sandbox.network] : [])))];
  const network = networks.length === 1 ? `network ${networks[0]} for shell and checks` : "network per policy";
  const parts = [bwrap > 0 ? `bwrap for ${counted(bwrap, unit)} (${network})` : null, off > 0 ? `off for ${counted(off, unit)} (as asked)` : null];
  return ["", `Sandbox: ${parts.filter((p) => p !== null).join("; ")}.`];
}

/**
 * Every token sent and written (the worker's included), when the run has stats: `12345 tokens`;
 * when the model reasoned, the output and its reasoning part: `12345 tokens (3000 output, 2400 of them reasoning)`.
 */
function tokenFigure(total: StatsAggregate["stats"]): string[] {
  if (total === null) return [];
  const all = counted(spentTokens(countedStats(total)), "token");
  return [total.reasoningTokens > 0 ? `${all} (${total.outputTokens} output, ${total.reasoningTokens} of them reasoning)` : all];
}

/** The run's cost, when its results have one: `cost $0.0123`, `cost unpriced`. */
function costFigure(total: CostTotal | null): string[] {
  return total === null ? [] : [`cost ${dollars(formatCostTotal(total))}`];
}

/** Said only when the run compacted: flushes (free ones apart), merges, the peak request. */
function compactionFigures(t: { flushes: number; freeFlushes: number; summaryMerges: number; peakRequestTokens: number } | null | undefined): string[] {
  if (!t || t.flushes === 0) return [];
  const merges = t.summaryMerges > 0 ? `, ${counted(t.summaryMerges, "merge")}` : "";
  return [`${counted(t.flushes, "compaction flush", "compaction flushes")} (${t.freeFlushes} free${merges}), peak request ${counted(t.peakRequestTokens, "token")}`];
}

/** A trial's label (`suite/id`, `suite/id#3` for one of several), by its task's planned trials. */
type LabelOf = (entry: Parameters<typeof trialKeyOf>[0]) => string;

function labeller(tasks: readonly TaskTrials[]): LabelOf {
  const planned = new Map(tasks.map((t) => [taskKey(t), t.planned]));
  return (entry) => trialLabelOf(entry, { planned: planned.get(cellKeyOf(entry)) ?? 1 });
}

function taskTable(results: readonly TaskResult[], meta: ReportMeta, labelOf: LabelOf): string {
  const rows = results.map((r) => ({ suite: r.suite, id: r.id, variant: trialKeyOf(r).variant, repeat: trialKeyOf(r).repeat, cells: [
    STATUS_EMOJI[r.status],
    code(labelOf(r)),
    formatDurationMs(r.durationMs),
    String(r.steps),
    percent(r.stats?.cacheHitRate),
    dollars(formatTaskCost(r.cost)),
    String(r.policyDenials.count),
  ] }));
  for (const task of meta.unfinished ?? []) {
    // What it spent so far, read from its checkpoint: an interrupted task's time and tokens were
    // spent (this run's interrupt, or an earlier run's for a task this run left alone).
    const spent = task.spent ?? null;
    const emoji = task.state === "gate_decided" ? STATUS_EMOJI.skipped
      : task.state === "interrupted" || spent !== null ? STATUS_EMOJI.interrupted : STATUS_EMOJI.notStarted;
    const figures = spent === null
      ? ["—", "—", "—", "—"]
      : [formatDurationMs(spent.durationMs), String(spent.steps), percent(spent.stats?.cacheHitRate), dollars(formatTaskCost(spent.cost ?? undefined))];
    rows.push({ suite: task.suite, id: task.id, variant: trialKeyOf(task).variant, repeat: trialKeyOf(task).repeat, cells: [emoji, code(labelOf(task)), ...figures, "—"] });
  }
  for (const task of meta.skipped ?? []) {
    rows.push({ suite: task.suite, id: task.id, variant: null, repeat: 0, cells: [STATUS_EMOJI.skipped, code(taskKey(task)), "—", "—", "—", "—", "—"] });
  }
  if (rows.length === 0) return "_No tasks ran._";
  return [
    "| | Task | Time | Steps | Cache hit | Cost | Denials |",
    "|:-:|:--|--:|--:|--:|--:|--:|",
    ...rows.sort((a, b) => compareTasks(a, b) || a.repeat - b.repeat).map((row) => `| ${row.cells.map(tableCell).join(" | ")} |`),
  ].join("\n");
}

function failuresSection(results: readonly TaskResult[], labelOf: LabelOf): string {
  const failures = results.filter((r) => r.status !== "passed");
  if (failures.length === 0) return "";
  const shown = failures.slice(0, MAX_DETAILED_FAILURES).map((r) => failureEntry(r, labelOf(r)));
  const more = failures.length - shown.length;
  if (more > 0) shown.push(`…and ${more} more: see junit.xml and stats.json.`);
  return ["#### Failures", "", shown.join("\n\n")].join("\n");
}

/** A task's failure (failure-model.ts): the label and full reason, the checks that failed with their output's excerpt. */
function failureEntry(result: TaskResult, label: string): string {
  const title = `${STATUS_EMOJI[result.status]} **${escapeMarkdown(label)}**`;
  const denials = denialLines(result.policyDenials);
  const failure = failureOf(result);
  if (failure === null) return "";
  switch (failure.kind) {
    case "checks":
      return checkEntries(title, failure.failed, denials);
    case "setup":
      // The setup's output (the command's tail) under its reason: no agent ran.
      return [`${title} — ${failureLabel(failure)}: ${escapeMarkdown(failure.reason)}`, ...denials, "", fenced(excerptOf(afterFirstLine(failure.message)))].join("\n");
    case "timeout": {
      const head = [`${title} — ${failureLabel(failure)}: ${escapeMarkdown(failure.reason)}`, ...denials].join("\n");
      return failure.failed.length === 0 ? head : `${head}\n\n${checkEntries(title, failure.failed, [])}`;
    }
    case "stopped":
      return [`${title} — stopped: ${escapeMarkdown(failure.reason)}`, ...denials].join("\n");
    case "agent":
      return [`${title} — agent error ${code(failure.code)}: ${escapeMarkdown(failure.reason)}`, ...denials].join("\n");
    default:
      return assertNever(failure);
  }
}

/** Each failed check with its verdict and its output's excerpt; a check that did not run says why. */
function checkEntries(title: string, failed: readonly CheckOutcome[], denials: readonly string[]): string {
  return failed
    .map((check, index) => {
      const lead = index === 0 ? denials : [];
      if (check.notRun !== undefined) return [`${title} — check ${code(check.name)} ${escapeMarkdown(check.notRun)}`, ...lead].join("\n");
      const outcome = check.timedOut ? "timed out" : check.exitCode === null ? "was killed" : `failed (exit ${check.exitCode})`;
      return [`${title} — check ${code(check.name)} ${outcome}`, ...lead, "", fenced(excerptOf(check.outputTail))].join("\n");
    })
    .join("\n\n");
}

/** Trials listed in the changes section; the rest are counted. */
const MAX_CHANGES_LINES = 50;

/**
 * Each trial's changes.patch: its diff stat and path (relative to the run directory), or why it
 * has none — so "passed without changing anything" shows at a glance.
 */
function changesSection(results: readonly TaskResult[], labelOf: LabelOf): string {
  const withChanges = results.filter((r) => r.changes !== undefined);
  if (withChanges.length === 0) return "";
  const line = (r: TaskResult) => {
    const changes = r.changes!;
    const what = changes.path === null ? `no patch: ${escapeMarkdown(changes.reason)}`
      : `${changes.files === 0 ? "no changes" : diffStat(changes)}${changes.truncated ? ` (cut at the size cap: ${changes.leftOut} left out)` : ""} — ${code(changes.path)}`;
    return `- ${STATUS_EMOJI[r.status]} ${code(labelOf(r))}: ${what}`;
  };
  const more = withChanges.length - MAX_CHANGES_LINES;
  return ["#### Changes", "", ...withChanges.slice(0, MAX_CHANGES_LINES).map(line), ...(more > 0 ? [`- …and ${more} more: see each result.json`] : [])].join("\n");
}

/** A message's lines after its first (a setup error's output tail). */
function afterFirstLine(message: string): string {
  const at = message.indexOf("\n");
  return at < 0 ? "" : message.slice(at + 1);
}

/** The policy's denials of a task, as list lines under its failure (a task the policy stopped shows why). */
function denialLines(denials: TaskResult["policyDenials"]): string[] {
  if (denials.count === 0) return [];
  const line = (d: PolicyDenial) => `- ${code(d.tool)} denied by ${d.rule === null ? "the default" : code(d.rule)}: ${escapeMarkdown(firstLine(d.reason))}`;
  const more = denials.count - denials.examples.length;
  return [
    "",
    `Policy denied ${counted(denials.count, "tool call")}:`,
    ...denials.examples.map(line),
    ...(more > 0 ? [`- …and ${more} more (see the transcript)`] : []),
  ];
}

/**
 * With repeated tasks: a row per task over its counted trials — its verdict by its gate, passes of
 * counted trials (gate-decided and pending ones apart), the pass rate with its Wilson 95 %
 * interval, pass@k and pass^k for the asked k's (`n<k` when k exceeds the counted trials), a flaky
 * marker and the cost per pass (`no pass` when nothing passed).
 */
function trialsSection(tasks: readonly TaskTrials[], ks: readonly number[]): string {
  const header = ["", "Task", "Passed", "Pass rate (95% CI)", ...ks.flatMap((k) => [`pass@${k}`, `pass^${k}`]), "Flaky", "Cost per pass", "Gate"];
  const rows = tasks.map((task) => {
    const f = task.figures;
    const skipped = task.unfinished.filter((u) => u.state === "gate_decided").length;
    const pending = task.unfinished.length - skipped;
    const extra = [skipped > 0 ? `${skipped} skipped (gate decided)` : "", pending > 0 ? `${pending} pending` : ""].filter((x) => x !== "");
    const rate = f.passRate === null ? "—"
      : `${percent(f.passRate.rate)} (${percent(f.passRate.interval.lower)}–${percent(f.passRate.interval.upper)})`;
    return [
      task.status === "unfinished" ? STATUS_EMOJI.notStarted : STATUS_EMOJI[task.status],
      code(taskKey(task)),
      `${f.passes}/${f.trials}${extra.length > 0 ? ` (+${extra.join(", ")})` : ""}`,
      rate,
      ...f.passAt.flatMap((at, i) => [formatAtK(at), formatAtK(f.passPower[i]!)]),
      f.flaky ? "⚠️ flaky" : "",
      dollars(formatCostPerPass(f.costPerPass)),
      formatGate(task.gate),
    ];
  });
  return [
    "#### Trials",
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? ":-:" : i === 1 ? ":--" : "--:")).join("|")}|`,
    ...rows.map((cells) => `| ${cells.map(tableCell).join(" | ")} |`),
    "",
    "_Errored and stopped trials count as not passed; interrupted, unstarted and gate-decided ones are left out. " +
      "pass@k: the chance that at least one of k trials passes; pass^k: that all k pass (unbiased estimates; `n<k`: fewer trials than k). " +
      "Flaky: both passed and failed._",
  ].join("\n");
}

/** Under the table: what "simulated" and "unpriced" mean, when a cost reads so. */
function costNote(total: CostTotal | null): string {
  if (total === null) return "";
  const notes: string[] = [];
  if (total.simulatedTasks > 0) notes.push("simulated: usage from the prompt-cache simulator (scripted tasks priced as a real model with `priceAs`, or a replay with `--cassette-usage simulate`), not money spent");
  if (total.replayedTasks > 0) notes.push("replayed: answered from cassettes (`--cassette`), the recorded usage priced, not money spent by this run");
  if (total.unpricedTasks > 0 || total.unpricedRequests > 0) notes.push("unpriced: a model with no known price (add it to a pricing file, `--pricing`), not $0");
  return notes.length === 0 ? "" : dollars(`_Cost — ${notes.join("; ")}._`);
}

/** The note under the table when tasks have no result: the same command continues them. */
function unfinishedNote(meta: ReportMeta): string {
  // Trials a provider's refusal left are said by its block (refusalSection).
  const unfinished = (meta.unfinished ?? []).filter((task) => task.state !== "gate_decided" && !task.refusedBy);
  if (unfinished.length === 0) return "";
  const interrupted = unfinished.some((task) => task.state !== "not_selected");
  return interrupted
    ? `_The run was interrupted: ${counted(unfinished.length, "task")} ${unfinished.length === 1 ? "has" : "have"} no result yet; run the same command again to continue._`
    : `_${counted(unfinished.length, "task")} of this run directory ${unfinished.length === 1 ? "has" : "have"} not run yet: run it without --filter to run ${unfinished.length === 1 ? "it" : "them"}._`;
}

/** The note of tasks this run dropped because the suite no longer defines them. */
function removedNote(meta: ReportMeta): string {
  const removed = [...(meta.removed ?? [])].sort(compareTasks);
  if (removed.length === 0) return "";
  return `_Removed from the run (the suite no longer defines them; their folders stay until \`--restart\`): ${removed.map((t) => code(taskKey(t))).join(", ")}._`;
}

/** `$` escaped: GitHub reads two dollar signs on a line as inline math. */
function dollars(text: string): string {
  return text.replaceAll("$", "\\$");
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

/**
 * The output's tail, led by its error line (first-error-line: a node:test assertion line, TAP's
 * YAML `error:`, …) when it is above the tail (a Node error's message comes before its stack frames,
 * which fill the tail): `line`, `…`, tail. Whole lines only: the tail drops
 * lines from its start to fit, and only a single line longer than the cap is cut, marked `…`.
 */
export function excerptOf(text: string): string {
  const lines = text.replace(/\s+$/, "").split(/\r?\n/);
  const found = findErrorLine(lines.join("\n"));
  const shown = tailLines(lines.slice(Math.max(0, lines.length - TAIL_LINES)), TAIL_CHARS);
  const tailStart = lines.length - shown.length;
  const tail = shown.join("\n");
  if (found === null || found.index >= tailStart) return tail;
  const lead = capLine(found.text, LEAD_CHARS);
  return found.index === tailStart - 1 ? `${lead}\n${tail}` : `${lead}\n…\n${tail}`;
}

/** The last lines that fit in `max` characters (at least the last one, capped). */
function tailLines(lines: readonly string[], max: number): string[] {
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i]!;
    if (kept.length > 0 && size + line.length + 1 > max) break;
    kept.unshift(kept.length === 0 ? capLine(line, max) : line);
    size += line.length + 1;
  }
  return kept;
}

/** A single line cut to `max` characters, marked `…` where cut. */
function capLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max)}…`;
}
