/**
 * bench:viewer (issue 26), run on demand: `npm run bench:viewer [-- --dir DIR]` (chromium on PATH).
 *
 * Two report.html pages rendered by `renderReportHtml` from generated trial files (results,
 * events with a call, its decision, its result and the usage each step — as events.jsonl holds
 * them — no checkpoint messages; every 10th result 3 KB, over the page's 2,000-character
 * preview), written under DIR (default the system's temp folder) and opened from file:// in
 * headless Chromium: a run of 500 trials of 6 steps, and a run whose one trial has 2,000 steps.
 * Printed for each: the file's size; first paint and first contentful paint (the `paint`
 * entries); the longest task (a `longtask` observer installed before the page's script runs) and
 * the JS heap (CDP `Performance.getMetrics` JSHeapUsedSize), once loaded and again after use —
 * the 500-trial page: filtering by status and searching; the 2,000-step page (loaded with the
 * trial open by its deep link): scrolling its steps to the end (the page renders them as they
 * come into view), then a deep link to step 2,000.
 *
 * Targets (issue 26): first contentful paint ≤ 1.5 s; no task over 200 ms; heap ≤ 200 MB.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { renderReportHtml } from "../src/runner/reports/report-html.js";
import type { HtmlTrialInput } from "../src/runner/reports/report-html-data.js";
import { buildStatsReport } from "../src/runner/reports/stats-report.js";
import type { TaskResult } from "../src/runner/run-dir/task-result.js";
import type { TaskEvent } from "../src/runner/run-dir/runner-events.js";
import { findChromium, launchChromium, watchedPage } from "../test/support/chromium.js";
import { sampleMeta, sampleResult } from "../test/runner/sample-results.js";

const DIR = stringArg("--dir", join(tmpdir(), "rhema-bench-viewer"));
const FCP_TARGET_MS = 1500;
const LONG_TASK_TARGET_MS = 200;
const HEAP_TARGET_BYTES = 200 * 1024 * 1024;
const STATUSES: TaskResult["status"][] = ["passed", "passed", "passed", "failed", "errored", "stopped"];

function stringArg(flag: string, fallback: string): string {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : process.argv[at + 1]!;
}

/** One trial of `steps` steps: each a shell call allowed (every 7th denied), its result, its usage. */
function generatedTrial(suite: string, id: string, status: TaskResult["status"], steps: number, seed: number): HtmlTrialInput {
  const result = { ...sampleResult(suite, id, status, seed), steps };
  const events: Array<TaskEvent & { at?: string }> = [];
  for (let n = 1; n <= steps; n++) {
    const callId = `c${n}`;
    const denied = n % 7 === 0;
    const output = n % 10 === 0 ? `line ${n}\n`.repeat(300) : `ok ${n}: ${"x".repeat(200)}`;
    events.push(
      { type: "request", step: n, messages: 2 * n - 1, at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString() },
      { type: "usage", step: n, usage: { inputTokens: 100, cacheReadTokens: 1000 * n, cacheWriteTokens: 50, outputTokens: 40 }, costUsd: 0.001 },
      { type: "tool_call", step: n, callId, name: "shell", input: { command: `grep -rn thing${n} src/` } },
      { type: "approval", step: n, callId, name: "shell", decision: denied ? { decision: "deny", rule: "rule 2 (policy.yaml:4)", reason: "not that" } : { decision: "allow", rule: "rule 1 (policy.yaml:3)", reason: "grep is allowed" } },
      { type: "tool_result", step: n, callId, name: "shell", isError: denied, durationMs: 12, preview: denied ? "denied: not that" : output },
      { type: "step_end", step: n, stopReason: n === steps ? "end_turn" : "tool_use" },
    );
  }
  return { result, events, messages: null, patch: `diff --git a/f${seed} b/f${seed}\n--- a/f${seed}\n+++ b/f${seed}\n@@ -1 +1 @@\n-old\n+new\n` };
}

async function writePage(name: string, trials: HtmlTrialInput[]): Promise<{ path: string; bytes: number }> {
  const path = join(DIR, name);
  await writeFile(path, renderReportHtml({ stats: buildStatsReport(trials.map((t) => t.result), sampleMeta()), trials }));
  return { path, bytes: (await stat(path)).size };
}

/** Installed before the page's script: every long task, kept in `window.__longTasks` (ms) until `figuresOf` reads (and empties) it. */
const OBSERVE_LONG_TASKS = `window.__longTasks = [];
new PerformanceObserver(function (list) { list.getEntries().forEach(function (e) { window.__longTasks.push(e.duration); }); })
  .observe({ type: "longtask", buffered: true });`;

interface Figures { firstPaintMs: number; fcpMs: number; longestTaskMs: number; heapBytes: number }

async function figuresOf(page: Page): Promise<Figures> {
  const paints = await page.evaluate(`performance.getEntriesByType("paint").map(function (e) { return [e.name, e.startTime]; })`) as Array<[string, number]>;
  const longTasks = await page.evaluate("window.__longTasks.splice(0)") as number[];
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const { metrics } = await cdp.send("Performance.getMetrics");
  const paint = (name: string) => paints.find(([n]) => n === name)?.[1] ?? NaN;
  return { firstPaintMs: paint("first-paint"), fcpMs: paint("first-contentful-paint"), longestTaskMs: Math.max(0, ...longTasks), heapBytes: metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? NaN };
}

async function openPage(browser: Browser, url: string): Promise<{ page: Page; problems: string[] }> {
  const watched = await watchedPage(browser);
  await watched.page.addInitScript(OBSERVE_LONG_TASKS);
  await watched.page.goto(url);
  await watched.page.locator("#shown-count").filter({ hasText: "trials" }).waitFor();
  return watched;
}

async function manyTrials(browser: Browser): Promise<void> {
  const trials = Array.from({ length: 500 }, (_, i) => generatedTrial(`suite${i % 5}`, `task${String(i).padStart(3, "0")}`, STATUSES[i % STATUSES.length]!, 6, i));
  const { path, bytes } = await writePage("trials-500.html", trials);
  const { page, problems } = await openPage(browser, pathToFileURL(path).href);
  await page.waitForFunction(`document.querySelectorAll("#trial-list li").length === 500`);
  const loaded = await figuresOf(page);
  await page.selectOption("#f-status", "failed");
  await page.fill("#f-search", "task07");
  await page.locator("#shown-count").filter({ hasText: "of 500 trials" }).waitFor();
  report("500 trials × 6 steps", bytes, loaded, await figuresOf(page), problems);
  await page.close();
}

async function manySteps(browser: Browser): Promise<void> {
  const trial = generatedTrial("suite", "long", "passed", 2000, 1);
  const { path, bytes } = await writePage("steps-2000.html", [trial]);
  const url = pathToFileURL(path).href;
  const { page, problems } = await openPage(browser, `${url}#trial=${encodeURIComponent("suite/long#1")}`);
  const loaded = await figuresOf(page);
  const started = performance.now();
  // Scroll the trial's pane to its end until the last step is in the page.
  while (await page.locator("#step-2000").count() === 0) {
    await page.evaluate(`(function () { var d = document.getElementById("detail"); d.scrollTop = d.scrollHeight; })()`);
    await page.waitForTimeout(16);
    if (performance.now() - started > 60_000) throw new Error("bench:viewer: the last step never came into the page after 60 s of scrolling");
  }
  const scrollMs = performance.now() - started;
  const scrolled = await figuresOf(page);
  await page.evaluate(`location.hash = "#trial=" + encodeURIComponent("suite/long#1") + "&step=2000"`);
  await page.locator("#step-2000.linked").waitFor();
  const linked = await figuresOf(page);
  report("1 trial × 2,000 steps", bytes, loaded, scrolled, problems);
  console.log(`  scrolled to step 2,000 in ${Math.round(scrollMs)} ms; a deep link to step 2,000: longest task ${Math.round(linked.longestTaskMs)} ms, heap ${mb(linked.heapBytes)}`);
  await page.close();
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const mark = (ok: boolean) => (ok ? "ok" : "MISSED");

function report(name: string, bytes: number, loaded: Figures, used: Figures, problems: string[]): void {
  console.log(`${name}: ${mb(bytes)} file`);
  console.log(`  first paint ${Math.round(loaded.firstPaintMs)} ms, first contentful paint ${Math.round(loaded.fcpMs)} ms (≤ ${FCP_TARGET_MS}: ${mark(loaded.fcpMs <= FCP_TARGET_MS)})`);
  const longest = Math.max(loaded.longestTaskMs, used.longestTaskMs);
  console.log(`  longest task ${Math.round(loaded.longestTaskMs)} ms loading, ${Math.round(used.longestTaskMs)} ms in use (≤ ${LONG_TASK_TARGET_MS}: ${mark(longest <= LONG_TASK_TARGET_MS)}); JS heap ${mb(loaded.heapBytes)} loaded, ${mb(used.heapBytes)} after use (≤ ${mb(HEAP_TARGET_BYTES)}: ${mark(used.heapBytes <= HEAP_TARGET_BYTES)})`);
  if (problems.length > 0) console.log(`  PROBLEMS: ${problems.join("; ")}`);
}

const chromiumPath = await findChromium();
if (chromiumPath === null) {
  console.error("bench:viewer: chromium is not on PATH (scripts/ci-install-chromium.sh installs it)");
  process.exit(1);
}
await mkdir(DIR, { recursive: true });
const browser = await launchChromium(chromiumPath);
try {
  await manyTrials(browser);
  await manySteps(browser);
} finally {
  await browser.close();
}
console.log(`pages in ${DIR}`);
