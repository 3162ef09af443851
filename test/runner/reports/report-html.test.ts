import assert from "node:assert/strict";
import { test } from "node:test";
import { renderReportHtml } from "../../../src/runner/reports/report-html.js";
import { MAX_PAYLOAD_BYTES, trialKeyText, type HtmlTrialInput } from "../../../src/runner/reports/report-html-data.js";
import { DEEP_LINK_SCRIPT } from "../../../src/runner/reports/report-html-script.js";
import { buildStatsReport } from "../../../src/runner/reports/stats-report.js";
import type { TaskEvent } from "../../../src/runner/run-dir/runner-events.js";
import { sampleMeta, sampleResult } from "../sample-results.js";
import { embeddedData } from "../../support/report-html-run.js";

/** A trial whose one step ran a shell call with `output` as its result (in the event's preview and the session). */
function trialWithOutput(output: string, inSession: boolean): HtmlTrialInput {
  const result = sampleResult("suite", "t", "passed");
  const events: Array<TaskEvent & { at?: string }> = [
    { type: "request", step: 1, messages: 1, at: "2026-01-01T00:00:00.000Z" },
    { type: "tool_call", step: 1, callId: "c1", name: "shell", input: { command: "cat notes.txt" } },
    { type: "approval", step: 1, callId: "c1", name: "shell", decision: { decision: "allow", rule: "rule 1 (p.yaml:3)", reason: "cat is allowed" } },
    { type: "tool_result", step: 1, callId: "c1", name: "shell", isError: false, durationMs: 5, preview: output },
    { type: "step_end", step: 1, stopReason: "tool_use" },
  ];
  const messages = inSession ? [
    { role: "user" as const, content: [{ type: "text" as const, text: "Read the notes." }] },
    { role: "assistant" as const, content: [{ type: "tool_call" as const, id: "c1", name: "shell", input: { command: "cat notes.txt" } }] },
    { role: "user" as const, content: [{ type: "tool_result" as const, callId: "c1", content: output }] },
  ] : null;
  return { result, events, messages, patch: null };
}

function render(trial: HtmlTrialInput): string {
  return renderReportHtml({ stats: buildStatsReport([trial.result], sampleMeta()), trials: [trial] });
}

test("a value the runner already redacted stays redacted in the page, in the markup and the data", () => {
  const html = render(trialWithOutput("API_KEY=[redacted:API_KEY]\nok", true));
  const call = embeddedData(html).trials[0]!.steps[0]!.calls[0]!;
  assert.equal(call.result, "API_KEY=[redacted:API_KEY]\nok");
  assert.equal(call.decision?.rule, "rule 1 (p.yaml:3)");
  assert.ok(html.includes("[redacted:API_KEY]"));
});

test("</script> in a tool result cannot end the data block: the block parses back to the same text", () => {
  const output = "</script><script>alert(1)</script> <!-- \u2028\u2029 </SCRIPT>";
  const html = render(trialWithOutput(output, true));
  assert.equal(embeddedData(html).trials[0]!.steps[0]!.calls[0]!.result, output);
  const block = html.slice(html.indexOf('id="rhema-data">'), html.indexOf("</script>", html.indexOf('id="rhema-data">')));
  assert.ok(!/<\/script/i.test(block.slice(1)) && !block.includes("<!--") && !block.includes("\u2028"), block.slice(0, 200));
});

test("a 100 KB tool result is cut at 64 KB, with a marker naming the file that holds it whole", () => {
  const output = "x".repeat(100 * 1024);
  const result = embeddedData(render(trialWithOutput(output, false))).trials[0]!.steps[0]!.calls[0]!.result!;
  assert.equal(result, `${"x".repeat(MAX_PAYLOAD_BYTES)}\n[rhema: cut at 64 KB of 100 KB: see events.jsonl]`);
  const fromSession = embeddedData(render(trialWithOutput(output, true))).trials[0]!.steps[0]!.calls[0]!.result!;
  assert.ok(fromSession.startsWith("x".repeat(MAX_PAYLOAD_BYTES) + "\n[rhema: cut at 64 KB of 100 KB: see session.json]"));
});

test("a trial key holding #, = and , round-trips through the page's deep link", () => {
  const key = trialKeyText({ suite: "s", id: "t", trial: { repeat: 3, variant: "model=a,limits=b&c" } });
  assert.equal(key, "s/t@model=a,limits=b&c#3");
  const { deepLinkOf, parseDeepLink } = new Function(`${DEEP_LINK_SCRIPT}; return { deepLinkOf, parseDeepLink };`)() as {
    deepLinkOf(key: string, step: number | null): string;
    parseDeepLink(hash: string): { trial: string | null; step: number | null };
  };
  const link = deepLinkOf(key, 7);
  assert.equal(link.lastIndexOf("#"), 0, link);
  assert.deepEqual(parseDeepLink(link), { trial: key, step: 7 });
  assert.deepEqual(parseDeepLink(deepLinkOf(key, null)), { trial: key, step: null });
});

test("trials without a result are listed with their state, among the others in trial order; one not read shows from stats.json alone", () => {
  const done = trialWithOutput("ok", true);
  const unfinished = [
    { suite: "suite", id: "a", file: "/s/a.yaml", trial: { repeat: 1, variant: null }, state: "interrupted" as const, spent: null },
    { suite: "suite", id: "z", file: "/s/z.yaml", trial: { repeat: 1, variant: null }, state: "not_started" as const, spent: null },
  ];
  const stats = buildStatsReport([done.result], { ...sampleMeta(), unfinished });
  const events: Array<TaskEvent & { at?: string }> = [{ type: "request", step: 1, messages: 1, at: "2026-01-01T00:00:01.000Z" }, { type: "step_end", step: 1, stopReason: "tool_use" }];
  const data = embeddedData(renderReportHtml({ stats, trials: [done], unfinished: [{ task: unfinished[0]!, events, messages: null }] }));
  assert.deepEqual(data.trials.map((x) => [x.key, x.status, x.steps.length, x.startedAt]), [
    ["suite/a#1", "interrupted", 1, "2026-01-01T00:00:01.000Z"], ["suite/t#1", "passed", 1, done.result.startedAt], ["suite/z#1", "not_started", 0, ""],
  ]);
  assert.match(data.trials[2]!.notes[0]!, /^not started: /);
});

test("a trial's structured answer (result.json's output) is in the page's data as indented JSON, and the pane shows it; null without one", () => {
  const trial = trialWithOutput("ok", true);
  const withOutput = { ...trial, result: { ...trial.result, output: { verdict: "pass", score: 3 } } };
  const html = render(withOutput);
  assert.equal(embeddedData(html).trials[0]!.output, '{\n  "verdict": "pass",\n  "score": 3\n}');
  assert.ok(html.includes("Structured answer (output.json)"), "the pane's script renders it");
  assert.equal(embeddedData(render(trial)).trials[0]!.output, null);
});
