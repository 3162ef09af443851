import assert from "node:assert/strict";
import { test } from "node:test";
import { excerptOf, renderSummaryReport } from "../../../src/runner/reports/summary-report.js";
import { sampleMeta, sampleResult, sampleRun } from "../sample-results.js";

const tableRows = (markdown: string): string[] => markdown.split("\n").filter((line) => /^\| (✅|❌|💥|🛑|⏭️|⏸️|⏳) \|/.test(line));

test("a totals line, then a row per task in suite/id order", () => {
  const summary = renderSummaryReport([...sampleRun()].reverse(), sampleMeta());
  assert.match(summary, /^### rhema run `run-1`: 6 of 9 tasks passed\n\n✅ 6 passed · ❌ 2 failed · 💥 1 errored — 30m 00s wall · 53\.4s task time · 54 steps · \d+ tokens · cache hit \d+\.\d% · 10 policy denials\n/);
  const rows = tableRows(summary);
  assert.equal(rows.length, 9);
  assert.equal(rows[0], "| ✅ | `arithmetic/task-00` | 1.0s | 2 | 72.7% | — | 2 |");
  assert.equal(rows[1], "| 💥 | `arithmetic/task-03` | 4.7s | 5 | — | — | 0 |");
  assert.deepStrictEqual(rows.map((row) => row.split(" | ")[1]), [
    "`arithmetic/task-00`", "`arithmetic/task-03`", "`arithmetic/task-06`",
    "`strings/task-01`", "`strings/task-04`", "`strings/task-07`",
    "`zeta/task-02`", "`zeta/task-05`", "`zeta/task-08`",
  ]);
});

test("skipped tasks get a row and a count when meta lists them", () => {
  const summary = renderSummaryReport(sampleRun(), sampleMeta({ skipped: [{ suite: "strings", id: "task-02b", file: "/f.yaml", reason: "tag" }] }));
  assert.match(summary, / · ⏭️ 1 skipped — /);
  const rows = tableRows(summary);
  assert.equal(rows.length, 10);
  assert.equal(rows[4], "| ⏭️ | `strings/task-02b` | — | — | — | — | — |");
});

test("failures list the failed check with its output tail, and the agent's error", () => {
  const summary = renderSummaryReport(sampleRun(), sampleMeta());
  const failures = summary.slice(summary.indexOf("#### Failures"));
  assert.ok(failures.includes("❌ **strings/task-01** — check `unit tests` failed (exit 1)\n\n```text\nnot ok 1 - adds\n# fail 1 ]]> <x/> & | pipes `tick`\n```"), failures);
  assert.ok(failures.includes("💥 **arithmetic/task-03** — agent error `step_cap`: the turn hit its step cap (40 steps)"), failures);
  assert.ok(!failures.includes("task-00"));
});

test("a long tail is cut to its last lines; backticks in output cannot close the fence", () => {
  const result = sampleResult("s", "noisy", "failed");
  result.checks[0]!.outputTail = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n````\n";
  const summary = renderSummaryReport([result], sampleMeta());
  assert.ok(!summary.includes("line 70\n"));
  assert.ok(summary.includes("`````text\nline 71\n"));
  assert.ok(summary.includes("line 99\n````\n`````"));
});

test("a passing run has no failures section; an empty run says so", () => {
  const summary = renderSummaryReport([sampleResult("s", "ok", "passed")], sampleMeta());
  assert.ok(!summary.includes("Failures"));
  assert.equal(tableRows(summary).length, 1);
  assert.match(renderSummaryReport([], sampleMeta()), /_No tasks ran\._/);
});

test("an interrupted run lists every task: finished ones, the interrupted and the never started", () => {
  const summary = renderSummaryReport([sampleResult("s", "done", "passed")], sampleMeta({ unfinished: [
    { suite: "s", id: "running", file: "/r.yaml", state: "interrupted" },
    { suite: "s", id: "queued", file: "/q.yaml", state: "not_started" },
  ] }));
  assert.match(summary, /: 1 of 3 tasks passed\n\n✅ 1 passed · ❌ 0 failed · 💥 0 errored · ⏸️ 1 interrupted · ⏳ 1 not started — /);
  assert.deepStrictEqual(tableRows(summary), [
    "| ✅ | `s/done` | 2.2s | 3 | 73.1% | — | 0 |",
    "| ⏳ | `s/queued` | — | — | — | — | — |",
    "| ⏸️ | `s/running` | — | — | — | — | — |",
  ]);
  assert.match(summary, /_The run was interrupted: 2 tasks have no result yet; run the same command again to continue\._/);
  assert.doesNotMatch(summary, /No tasks ran/);
});

test("a failure excerpt leads with the output's first error line when the tail starts at stack frames", () => {
  const frames = Array.from({ length: 40 }, (_, i) => `    at frame${i} (node:internal/modules/cjs/loader:${i})`);
  const output = ["node:internal/modules/cjs/loader:1228", "  throw err;", "  ^", "", "Error: Cannot find module '/w/workspace/test'", ...frames, "Node.js v22.11.0"].join("\n");
  const excerpt = excerptOf(output);
  assert.equal(excerpt.split("\n")[0], "Error: Cannot find module '/w/workspace/test'");
  assert.equal(excerpt.split("\n")[1], "…");
  assert.ok(excerpt.endsWith("    at frame39 (node:internal/modules/cjs/loader:39)\nNode.js v22.11.0"));
  const result = sampleResult("s", "node22", "failed");
  result.checks[0]!.outputTail = output;
  assert.ok(renderSummaryReport([result], sampleMeta()).includes("```text\nError: Cannot find module '/w/workspace/test'\n…\n"));
  assert.equal(excerptOf("line\nError: short\nend"), "line\nError: short\nend", "an error line inside the tail is not repeated");
});

test("a task the policy stopped shows its denial reasons under its failure", () => {
  const result = sampleResult("release", "publish", "failed", 2);
  result.checks[0]!.outputTail = "";
  const failures = renderSummaryReport([result], sampleMeta()).split("#### Failures")[1]!;
  assert.ok(failures.includes([
    "❌ **release/publish** — check `unit tests` failed (exit 1)",
    "",
    "Policy denied 2 tool calls:",
    "- `shell` denied by `no-push`: no pushes from CI",
    "- `write_file` denied by the default: default deny",
    "",
    "```text\n(no output)\n```",
  ].join("\n")), failures);
});

test("a task stopped on a budget is counted apart and says which budget, not as an agent error", () => {
  const summary = renderSummaryReport([...sampleRun(), sampleResult("zeta", "pricey", "stopped", 2)], sampleMeta());
  assert.match(summary, /: 6 of 10 tasks passed\n\n✅ 6 passed · ❌ 2 failed · 💥 1 errored · 🛑 1 stopped on a budget — /);
  assert.ok(tableRows(summary).some((row) => row.startsWith("| 🛑 | `zeta/pricey` |")));
  assert.ok(summary.includes("🛑 **zeta/pricey** — stopped: the task's cost budget of $0.0100 is spent ($0.0123): stopped before the next model request"), summary);
});

test("an excerpt never cuts a line: a tail over its size drops whole lines from its start", () => {
  const lines = Array.from({ length: 28 }, (_, i) => `line ${String(i).padStart(2, "0")} ${"x".repeat(190)}`);
  const excerpt = excerptOf(lines.join("\n"));
  const shown = excerpt.split("\n");
  assert.ok(excerpt.length <= 3_000, `${excerpt.length} characters`);
  assert.ok(shown.length > 1);
  for (const line of shown) assert.ok(lines.includes(line), `a whole line of the output: ${line.slice(0, 20)}…`);
  assert.equal(shown.at(-1), lines.at(-1));
});

test("an excerpt of TAP output leads with the YAML error: block's error, above a tail of stack frames", () => {
  const tap = [
    "TAP version 13",
    "# Subtest: adds",
    "not ok 1 - adds",
    "  ---",
    "  duration_ms: 1.2",
    "  failureType: 'testCodeFailure'",
    "  error: |-",
    "    Expected values to be strictly equal:",
    "    2 !== 3",
    "  code: 'ERR_ASSERTION'",
    "  name: 'AssertionError'",
    "  stack: |-",
    ...Array.from({ length: 40 }, (_, i) => `    frame${i} (file:///x.js:${i}:1)`),
    "  ...",
    "1..1",
    "# fail 1",
  ].join("\n");
  const excerpt = excerptOf(tap);
  assert.equal(excerpt.split("\n")[0], "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:");
  assert.equal(excerpt.split("\n")[1], "…");
});

test("a setup failure says its reason whole and is not an agent error; a timeout during checks lists the checks that had failed", () => {
  const setup = { ...sampleResult("s", "setup", "errored"), checks: [], error: { code: "setup_failed", message: "setup command `npm ci` exited 127:\nsh: 1: npm: command not found" } };
  const check = { name: "unit", command: "npm test", exitCode: 1, passed: false, durationMs: 5, outputTail: "Error: boom", timedOut: false };
  const slow = { ...check, name: "slow", exitCode: null, timedOut: true, outputTail: "" };
  const timedOut = { ...sampleResult("s", "slow", "errored"), checks: [check, slow], error: { code: "timeout", message: "the task's timeout of 10 ms passed while check \"slow\" ran: it was stopped" } };
  const summary = renderSummaryReport([setup, timedOut], sampleMeta());
  assert.match(summary, /— setup failed: setup command \\`npm ci\\` exited 127: sh: 1: npm: command not found\n\n```text\nsh: 1: npm: command not found\n```/);
  assert.doesNotMatch(summary, /setup\*\* — agent error/);
  assert.match(summary, /— timed out: the task's timeout of 10 ms passed while check "slow" ran: it was stopped\n\n.*— check `unit` failed \(exit 1\)\n\n```text\nError: boom\n```/);
});

test("the totals line says how the workspaces were made and the disk they hold, and why copies when layers were asked for", () => {
  const [a, b, c] = [sampleResult("s", "a", "passed"), sampleResult("s", "b", "passed"), sampleResult("s", "c", "passed")];
  const layered = renderSummaryReport([
    { ...a, workspace: { mechanism: "overlay", diskBytes: 12_288 } },
    { ...b, workspace: { mechanism: "overlay", diskBytes: 4_096 } },
  ], sampleMeta());
  assert.match(layered, / · workspaces 2 overlay layers, 16\.4 KB\n/);
  const copied = renderSummaryReport([
    { ...a, workspace: { mechanism: "copy", diskBytes: 234_000_000, reason: "overlay: needs real root (rhema runs as uid 1001)" } },
    { ...c, workspace: { mechanism: "fuse-overlayfs", diskBytes: 900 } },
  ], sampleMeta());
  assert.match(copied, / · workspaces 1 fuse-overlayfs layer, 1 copy, 234 MB \(no layers: overlay: needs real root \(rhema runs as uid 1001\)\)\n/);
  assert.doesNotMatch(renderSummaryReport([a], sampleMeta()), /workspaces/, "no figure without one");
});

test("with the run directory's place the summary names its report.html under the totals; without, nothing", () => {
  const text = renderSummaryReport(sampleRun(), sampleMeta({ runDirShown: "runs/latest" }));
  const paragraphs = text.split("\n\n");
  assert.equal(paragraphs[2], "Every trial's conversation, tool calls, checks and changes: `runs/latest/report.html`", "after the title and the totals");
  assert.doesNotMatch(renderSummaryReport(sampleRun(), sampleMeta()), /report\.html/);
});
