/**
 * `report.html`: one self-contained page to read a run by — no network, inline style and script,
 * opens from file://. The run's figures are in the markup; the trials are data (a
 * `<script type="application/json">` block the inline script renders lazily, report-html-script.ts).
 * Pure: a function of the run's stats and its trials' redacted files (report-html-data.ts), with
 * no time of its own, so rendering a run again gives the same bytes.
 */
import { buildHtmlReportData, type HtmlReportInput, type RunView } from "./report-html-data.js";
import { VIEWER_SCRIPT, VIEWER_STYLE } from "./report-html-script.js";

/** The page (see the header). */
export function renderReportHtml(input: HtmlReportInput): string {
  const data = buildHtmlReportData(input);
  const { run } = data;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>rhema run ${escapeHtml(run.runId)}</title>
<style>${VIEWER_STYLE}</style>
</head>
<body>
<header>
<h1>rhema run <span class="key">${escapeHtml(run.runId)}</span></h1>
${runFigures(run)}
</header>
<main>
<section id="list-pane" aria-label="trials">
<form id="filters" role="search" onsubmit="return false">
<label>status <select id="f-status"><option value="">any</option><option>passed</option><option>failed</option><option>errored</option><option>stopped</option><option>interrupted</option><option value="not_started">not started</option></select></label>
<label>suite <select id="f-suite"><option value="">any</option></select></label>
<label><input type="checkbox" id="f-flaky"> flaky</label>
<label><input type="checkbox" id="f-denied"> denied</label>
<label>search <input type="search" id="f-search" placeholder="task id or text (/)"></label>
<span id="shown-count" class="meta" aria-live="polite"></span>
</form>
<ul id="trial-list"></ul>
</section>
<section id="detail" tabindex="-1" aria-label="trial"><p class="meta">Open a trial (click, or j/k and Enter).</p></section>
</main>
<script type="application/json" id="rhema-data">${embedJson(data)}</script>
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}

function runFigures(run: RunView): string {
  const c = run.counts;
  const figures: Array<[string, string]> = [
    ["started", run.startedAt], ["finished", run.finishedAt], ["wall time", `${(run.wallTimeMs / 1000).toFixed(1)} s`],
    ["passed", String(c.passed)], ["failed", String(c.failed)], ["errored", String(c.errored)], ["stopped", String(c.stopped)],
    ["flaky tasks", String(run.flakyTasks)],
    ...(c.interrupted + c.notStarted > 0 ? [["unfinished", String(c.interrupted + c.notStarted)] as [string, string]] : []),
    ["cost", run.costUsd === null ? "unpriced" : `$${run.costUsd.toFixed(4)}`],
    ["tokens", run.tokens === null ? "–" : String(run.tokens)],
    ["cache hit", run.cacheHitRate === null ? "–" : `${Math.round(run.cacheHitRate * 100)} %`],
  ];
  const items = figures.map(([name, value]) => `<div><dt>${escapeHtml(name)}</dt><dd>${escapeHtml(value)}</dd></div>`).join("");
  return `<dl class="figures">${items}</dl>`;
}

/** Text made safe inside HTML markup and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * JSON for a `<script type="application/json">` block: `</` written `<\/` (no `</script>` in any
 * value ends the block; `<!--` likewise cannot open a comment), and U+2028/U+2029 escaped. The
 * block's text parses back to the same value.
 */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/<\//g, "<\\/").replace(/<!--/g, "<\\u0021--").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}
