/**
 * How a run shows its progress: timestamped lines for CI logs, JSON lines for --json, and a
 * live view that redraws on a terminal. Each view writes to a real stream whose text we collect.
 */
import { trialsOf, type Trial } from "../../src/runner/trials/trial.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { chooseProgressView, liveLine, type ViewStreams } from "../../src/cli/progress-view.js";
import type { TaskEvent as AgentEvent } from "../../src/runner/run-dir/runner-events.js";
import type { RunProgress } from "../../src/runner/execute/suite-runner.js";
import { parseTaskSource } from "../../src/runner/tasks/task-file.js";
import { sampleResult } from "../runner/sample-results.js";

const NOW = () => new Date("2026-03-04T05:06:07Z");
const ONE = parseTaskSource("prompt: one\n", "/suites/alpha/one.yaml");
const TWO = parseTaskSource("prompt: two\n", "/suites/beta/two.yaml");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A stream that keeps what is written to it; `isTTY` makes it look like a terminal. */
function collector(tty: { isTTY?: boolean; columns?: number } = {}) {
  const stream = Object.assign(new PassThrough(), tty);
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

function streams(errTty: { isTTY?: boolean; columns?: number } = {}) {
  const out = collector();
  const err = collector(errTty);
  return { out, err, streams: { out: out.stream, err: err.stream } satisfies ViewStreams };
}

const trialOf = (task: typeof ONE): Trial => trialsOf(task, 1)[0]!;
const event = (task: typeof ONE, e: AgentEvent): RunProgress => ({ type: "task_event", task, trial: trialOf(task), event: e });
const passed = sampleResult("alpha", "one", "passed", 1); // 2.2s, 3 steps, cache 73%
const failed = sampleResult("beta", "two", "failed", 2); // 3.5s, 4 steps, cache 73%, 2 denied
const errored = sampleResult("beta", "two", "errored", 3); // 4.7s, 5 steps, no stats

test("chooses JSON lines for --json, the live view on a terminal outside CI, plain lines otherwise", async () => {
  const probe = (opts: { json: boolean; ci: boolean; tty: boolean }) => {
    const s = streams(opts.tty ? { isTTY: true } : {});
    const view = chooseProgressView({ json: opts.json, ci: opts.ci, color: false, streams: s.streams, now: NOW });
    view.update({ type: "task_start", task: ONE, trial: trialOf(ONE) });
    view.close();
    return { out: s.out.text(), err: s.err.text() };
  };
  assert.deepEqual(probe({ json: true, ci: false, tty: true }), { out: '{"type":"task_start","task":"alpha/one","trial":"alpha/one","repeat":1}\n', err: "" });
  assert.deepEqual(probe({ json: false, ci: true, tty: true }), { out: "", err: "05:06:07 [alpha/one] started\n" });
  assert.deepEqual(probe({ json: false, ci: false, tty: false }), { out: "", err: "05:06:07 [alpha/one] started\n" });
  assert.deepEqual(probe({ json: false, ci: false, tty: true }), { out: "", err: "" }, "the live view draws only when a task has news");
});

test("the plain view writes a timestamped line for starts, tool calls, denials, resumes, errors and ends", () => {
  const s = streams();
  const view = chooseProgressView({ json: false, ci: true, color: true, streams: s.streams, now: NOW });
  const updates: RunProgress[] = [
    { type: "run_start", runDir: "/runs/r", runId: "0123456789abcdef", tasks: 2, trials: 2, resumed: false, workspaces: { mechanism: "overlay", reason: null } },
    { type: "task_start", task: ONE, trial: trialOf(ONE) },
    event(ONE, { type: "request", step: 1, messages: 1 }),
    event(ONE, { type: "text", step: 1, delta: "thinking" }),
    event(ONE, { type: "tool_call", step: 1, callId: "c1", name: "shell", input: { command: "npm   test\n  --watch=false" } }),
    event(ONE, { type: "approval", step: 1, callId: "c1", name: "shell", decision: { decision: "allow", rule: "rule 1 (p.yaml:3)" } }),
    event(ONE, { type: "tool_call", step: 2, callId: "c2", name: "write_file", input: { path: "src/a.ts", content: "x" } }),
    event(ONE, { type: "approval", step: 2, callId: "c2", name: "write_file", decision: { decision: "deny", rule: "rule 2 (p.yaml:5)", reason: "no edits to src" } }),
    event(ONE, { type: "tool_call", step: 3, callId: "c3", name: "fetch", input: { url: "x".repeat(200) } }),
    event(ONE, { type: "revived", callIds: ["c3", "c4"] }),
    event(ONE, { type: "steer", text: "Only 2 steps\nare left" }),
    event(ONE, { type: "retry", who: "task", attempt: 2, of: 4, delayMs: 1000, reason: "503", status: 503, message: "anthropic: 503 overloaded" }),
    event(ONE, { type: "retry", who: "worker", attempt: 3, of: 4, delayMs: 1940, reason: "connection reset", status: null, message: "anthropic: connection error" }),
    event(ONE, { type: "turn_error", code: "provider", message: "boom" }),
    event(ONE, { type: "turn_error", code: "cancelled", message: "the turn was cancelled" }),
    { type: "task_end", task: ONE, trial: trialOf(ONE), result: passed, kept: false },
    { type: "task_start", task: TWO, trial: trialOf(TWO) },
    { type: "task_end", task: TWO, trial: trialOf(TWO), result: failed, kept: false },
    { type: "task_interrupted", task: TWO, trial: trialOf(TWO) },
    { type: "run_start", runDir: "/runs/r", runId: "fedcba9876543210", tasks: 1, trials: 1, resumed: true, workspaces: { mechanism: "copy", reason: "not root, and fuse-overlayfs is not installed" } },
    { type: "task_end", task: TWO, trial: trialOf(TWO), result: errored, kept: true },
    { type: "run_end", results: [passed], interrupted: false, reports: { junit: "j", stats: "s", summary: "m" } },
  ];
  for (const u of updates) view.update(u);
  view.close();
  assert.equal(s.err.text(), [
    "05:06:07 starting run 01234567: 2 tasks in /runs/r; workspaces: overlay layers",
    "05:06:07 [alpha/one] started",
    "05:06:07 [alpha/one] step 1 shell: npm test --watch=false",
    "05:06:07 [alpha/one] step 2 write_file: src/a.ts",
    "05:06:07 [alpha/one] denied write_file by rule 2 (p.yaml:5): no edits to src",
    `05:06:07 [alpha/one] step 3 fetch: {"url":"${"x".repeat(91)}…`,
    "05:06:07 [alpha/one] resumed: closed 2 interrupted calls",
    "05:06:07 [alpha/one] nudged: Only 2 steps are left",
    "05:06:07 [alpha/one] retrying after 503 (attempt 2/4, 1.0 s)",
    "05:06:07 [alpha/one] compaction worker: retrying after connection reset (attempt 3/4, 1.9 s)",
    "05:06:07 [alpha/one] agent error provider: boom",
    "05:06:07 [alpha/one] passed in 2.2s, 3 steps, cache 73%",
    "05:06:07 [beta/two] started",
    '05:06:07 [beta/two] failed (check "unit tests") in 3.5s, 4 steps, cache 73%, 2 denied',
    "05:06:07 [beta/two] interrupted; checkpointed, a rerun continues it",
    "05:06:07 resuming run fedcba98: 1 task in /runs/r; workspaces: copies (not root, and fuse-overlayfs is not installed)",
    "05:06:07 [beta/two] errored (step_cap) (kept from an earlier run) in 4.7s, 5 steps",
    "",
  ].join("\n"));
  assert.equal(s.out.text(), "");
  assert.doesNotMatch(s.err.text(), /\x1b/, "no escape codes in a log");
});

test("the JSON view writes one object per line, with the task as suite/id, the format's version on the first", () => {
  const s = streams();
  const view = chooseProgressView({ json: true, ci: true, color: false, streams: s.streams });
  const toolCall: AgentEvent = { type: "tool_call", step: 1, callId: "c1", name: "shell", input: { command: "ls" } };
  const reports = { junit: "/r/junit.xml", stats: "/r/stats.json", summary: "/r/summary.md" };
  view.update({ type: "run_start", runDir: "/r", runId: "id", tasks: 1, trials: 1, resumed: false });
  view.update({ type: "task_start", task: ONE, trial: trialOf(ONE) });
  view.update(event(ONE, toolCall));
  view.update(event(ONE, { type: "text", step: 1, delta: "hi" }));
  view.update({ type: "task_end", task: ONE, trial: trialOf(ONE), result: passed, kept: false });
  view.update({ type: "task_interrupted", task: TWO, trial: trialOf(TWO) });
  view.update({ type: "run_end", results: [passed], interrupted: true, reports });
  view.close();
  assert.deepEqual(s.out.text().split("\n").filter(Boolean).map((l) => JSON.parse(l)), [
    { type: "run_start", eventsVersion: 1, runDir: "/r", runId: "id", tasks: 1, trials: 1, resumed: false },
    { type: "task_start", task: "alpha/one", trial: "alpha/one", repeat: 1 },
    { type: "task_event", task: "alpha/one", trial: "alpha/one", repeat: 1, event: toolCall },
    { type: "task_event", task: "alpha/one", trial: "alpha/one", repeat: 1, event: { type: "text", step: 1, delta: "hi" } },
    { type: "task_end", task: "alpha/one", trial: "alpha/one", repeat: 1, result: passed, kept: false },
    { type: "task_interrupted", task: "beta/two", trial: "beta/two", repeat: 1 },
    { type: "run_end", results: [passed], interrupted: true, reports },
  ]);
  assert.equal(s.err.text(), "");
});

test("the live view redraws its running tasks, clears them before printing an end, and colours the marks", async () => {
  const s = streams({ isTTY: true, columns: 100 });
  const view = chooseProgressView({ json: false, ci: false, color: true, streams: s.streams });
  view.update({ type: "run_start", runDir: "/r", runId: "id", tasks: 2, trials: 2, resumed: false });
  view.update({ type: "task_start", task: ONE, trial: trialOf(ONE) });
  view.update(event(ONE, { type: "request", step: 2, messages: 3 }));
  view.update(event(ONE, { type: "tool_call", step: 2, callId: "c1", name: "shell", input: { command: "npm test" } }));
  view.update(event(ONE, { type: "usage", step: 2, usage: { inputTokens: 1000, cacheReadTokens: 400, cacheWriteTokens: 50, outputTokens: 50 } }));
  view.update({ type: "task_start", task: TWO, trial: trialOf(TWO) });
  await sleep(150);
  view.update({ type: "task_end", task: ONE, trial: trialOf(ONE), result: passed, kept: false });
  await sleep(150);
  view.update({ type: "task_end", task: TWO, trial: trialOf(TWO), result: failed, kept: false });
  view.close();
  assert.equal(s.err.text(), [
    "Running 2 tasks in /r\n",
    "  alpha/one  step 2  shell npm test  1.5k tok\n  beta/two  step 0    0.0k tok\n",
    "\x1b[2A\x1b[0J",
    "\x1b[32m✓\x1b[0m alpha/one  passed in 2.2s, 3 steps, cache 73%\n",
    "  beta/two  step 0    0.0k tok\n",
    "\x1b[1A\x1b[0J",
    '\x1b[31m✗\x1b[0m beta/two  failed (check "unit tests") in 3.5s, 4 steps, cache 73%, 2 denied\n',
  ].join(""));
});

test("the live view without colour writes no colour codes, and close clears what it drew", async () => {
  const s = streams({ isTTY: true, columns: 0 });
  const view = chooseProgressView({ json: false, ci: false, color: false, streams: s.streams });
  view.update({ type: "task_start", task: TWO, trial: trialOf(TWO) });
  view.update({ type: "task_end", task: ONE, trial: trialOf(ONE), result: passed, kept: false });
  view.update({ type: "task_end", task: TWO, trial: trialOf(TWO), result: errored, kept: true });
  view.update({ type: "task_start", task: ONE, trial: trialOf(ONE) });
  view.update(event(ONE, { type: "tool_call", step: 1, callId: "c1", name: "grep", input: { pattern: "p".repeat(200) } }));
  await sleep(150);
  view.close();
  await sleep(150);
  const text = s.err.text();
  assert.doesNotMatch(text, /\x1b\[3\dm/);
  assert.equal(text, [
    "✓ alpha/one  passed in 2.2s, 3 steps, cache 73%\n",
    "! beta/two  errored (step_cap) (kept from an earlier run) in 4.7s, 5 steps\n",
    `${`  alpha/one  step 0  grep ${"p".repeat(40)}  0.0k tok`.slice(0, 99)}\n`,
    "\x1b[1A\x1b[0J",
  ].join(""), "a terminal reporting no width is drawn 100 columns wide, and nothing is drawn after close");
});

test("setup and check events: a plain line each (an interrupted one rerun said so), in --json, and in the live view's task line", async () => {
  const updates: RunProgress[] = [
    event(ONE, { type: "setup_start", index: 1, total: 2, command: "npm ci", rerun: "interrupted" }),
    event(ONE, { type: "setup_end", index: 1, total: 2, command: "npm ci", exitCode: 0, timedOut: false, durationMs: 1200 }),
    event(ONE, { type: "check_end", index: 0, total: 3, name: "lint", passed: true, exitCode: 0, timedOut: false, durationMs: 40, kept: true }),
    event(ONE, { type: "check_start", index: 1, total: 3, name: "unit", command: "npm test", rerun: "interrupted" }),
    event(ONE, { type: "check_end", index: 1, total: 3, name: "unit", passed: false, exitCode: null, timedOut: true, durationMs: 2500, kept: false }),
    event(ONE, { type: "check_end", index: 2, total: 3, name: "e2e", passed: false, exitCode: null, timedOut: false, durationMs: 0, kept: false, notRun: "not run: the task's timeout passed before it started" }),
  ];
  const plain = streams();
  const view = chooseProgressView({ json: false, ci: true, color: false, streams: plain.streams, now: NOW });
  for (const u of updates) view.update(u);
  assert.equal(plain.err.text(), [
    "05:06:07 [alpha/one] setup 2/2: npm ci (interrupted by a kill; it may have partly run: running it again)",
    '05:06:07 [alpha/one] check 1/3 "lint" passed (kept from an earlier run)',
    '05:06:07 [alpha/one] check 2/3 "unit" (interrupted by a kill: running it again)',
    '05:06:07 [alpha/one] check 2/3 "unit" timed out in 2.5s',
    `05:06:07 [alpha/one] check 3/3 "e2e" not run: the task's timeout passed before it started`,
    "",
  ].join("\n"));
  const json = streams();
  const jsonView = chooseProgressView({ json: true, ci: true, color: false, streams: json.streams, now: NOW });
  for (const u of updates) jsonView.update(u);
  assert.deepEqual(json.out.text().trim().split("\n").map((l) => JSON.parse(l).event.type), ["setup_start", "setup_end", "check_end", "check_start", "check_end", "check_end"]);
  const live = streams({ isTTY: true, columns: 100 });
  const liveView = chooseProgressView({ json: false, ci: false, color: false, streams: live.streams, now: NOW });
  liveView.update({ type: "task_start", task: ONE, trial: trialOf(ONE) });
  liveView.update(updates[3]!);
  await sleep(150);
  assert.match(live.err.text(), /alpha\/one {2}step 0 {2}check 2\/3 unit/);
  liveView.close();
});

test("at 50 columns the live line truncates the task name and tool, never the figures", () => {
  const task = { key: "refactoring-suite/rename-calculator-module", step: 12, tool: "shell npm test -- --coverage", tokens: 4200 };
  const line = liveLine(task, 49);
  assert.ok(line.length <= 49, `${line.length}: ${line}`);
  assert.ok(line.endsWith("step 12  4.2k tok"), line);
  assert.equal(line, "  refactoring-suite/rename-ca…  step 12  4.2k tok");
  assert.equal(liveLine({ ...task, key: "a/b" }, 100), "  a/b  step 12  shell npm test -- --coverage  4.2k tok");
});

test("the live line shows the dollars a task has cost so far, or unpriced; the live view adds up each request's price", async () => {
  const task = { key: "a/b", step: 3, tool: "shell npm test", tokens: 4200 };
  assert.equal(liveLine({ ...task, costUsd: 0.0123 }, 100), "  a/b  step 3  shell npm test  4.2k tok  $0.0123");
  assert.equal(liveLine({ ...task, costUsd: null }, 100), "  a/b  step 3  shell npm test  4.2k tok  unpriced");
  assert.equal(liveLine({ ...task, costUsd: 0.0123, simulated: true }, 100), "  a/b  step 3  shell npm test  4.2k tok  $0.0123 (simulated)");
  assert.equal(liveLine({ ...task, costUsd: null, simulated: true }, 100), "  a/b  step 3  shell npm test  4.2k tok  unpriced");
  assert.ok(liveLine({ ...task, key: "refactoring-suite/rename-calculator-module", costUsd: 0.5 }, 49).endsWith("4.2k tok  $0.5000"));
  const usage = { inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10 };
  const live = streams({ isTTY: true, columns: 100 });
  const view = chooseProgressView({ json: false, ci: false, color: false, streams: live.streams, now: NOW });
  view.update({ type: "task_start", task: ONE, trial: trialOf(ONE) });
  view.update(event(ONE, { type: "usage", step: 1, usage, costUsd: 0.01 }));
  view.update(event(ONE, { type: "usage", step: 2, usage, costUsd: 0.0025 }));
  await sleep(150);
  assert.match(live.err.text(), /alpha\/one {2}step 0 {2} {2}0\.2k tok {2}\$0\.0125/);
  view.update(event(ONE, { type: "usage", step: 3, usage, costUsd: null }));
  await sleep(150);
  assert.match(live.err.text(), /0\.3k tok {2}unpriced/);
  view.close();
});
