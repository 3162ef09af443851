/**
 * The action's outputs as a pure function of the run: action.yml declares exactly the outputs
 * the code sets, `cost-usd` reads dollars, or "unpriced" — never 0 for a model with no price —
 * and a task stopped on a budget is counted as stopped, failing the step under fail-on failure only.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { compareOutputs } from "../../src/action/compare-gate.js";
import { actionOutputs, runAnnotations, stepFailure, type ActionRunOutcome } from "../../src/action/action-outcome.js";
import { PRICE_TABLE } from "../../src/runner/pricing/prices.js";
import type { TaskCost, TaskResult } from "../../src/runner/run-dir/task-result.js";
import { sampleResult } from "../runner/sample-results.js";
import { REPORT_URL_OUTPUT } from "../../src/action/report-artifact.js";
import { ANSWER_OUTPUT, ANSWERS_FILE_OUTPUT, answersJsonSchema, runAnswers } from "../../src/action/answer-outputs.js";
import { repoRoot } from "../support/paths.js";

const PRICED: TaskCost = { usd: 0.125, workerUsd: 0, unpricedRequests: 0, pricedAs: "anthropic/claude-sonnet-4-5", workerPricedAs: "anthropic/claude-sonnet-4-5", simulated: false, prices: { ...PRICE_TABLE, pricingFile: null } };
const UNPRICED: TaskCost = { ...PRICED, usd: null, pricedAs: null, workerPricedAs: null, unpricedRequests: 4 };

const outcome = (costs: (TaskCost | undefined)[]): ActionRunOutcome => ({
  results: costs.map((cost, i): TaskResult => ({ ...sampleResult("s", `t${i}`, "passed", 1), ...(cost ? { cost } : {}) })),
  interrupted: false, interruptedTasks: 0, runDir: "/run",
  reports: { junit: "/run/junit.xml", stats: "/run/stats.json", summary: "/run/summary.md" },
});

test("action.yml declares exactly the outputs the action sets", async () => {
  const meta = parse(await readFile(join(repoRoot, "action.yml"), "utf8")) as { outputs: Record<string, unknown> };
  const compared = compareOutputs({ kind: "missing", source: { kind: "path", path: "base" }, reason: "none" });
  // The report artifact's URL is set on its own, once the upload is done (report-artifact.ts).
  assert.deepEqual(Object.keys(meta.outputs).sort(), [...Object.keys(actionOutputs(outcome([]))), ...Object.keys(compared), REPORT_URL_OUTPUT, ANSWER_OUTPUT, ANSWERS_FILE_OUTPUT].sort());
});

test("cost-usd: the run's dollars, the priced part when some are unpriced, 'unpriced' when none has a price", () => {
  const cost = (costs: (TaskCost | undefined)[]) => actionOutputs(outcome(costs))["cost-usd"];
  assert.equal(cost([PRICED, { ...PRICED, usd: 0.25 }]), "0.375000");
  assert.equal(cost([PRICED, UNPRICED]), "0.125000");
  assert.equal(cost([UNPRICED, UNPRICED]), "unpriced");
  assert.equal(cost([undefined]), "0", "no result with a cost: nothing was spent");
  const notice = runAnnotations(outcome([PRICED, UNPRICED]), "/repo").at(-1)!;
  assert.match(notice.message, /; cost ≥ \$0\.1250 \(4 unpriced requests\); tokens in /);
});

test("reasoning-tokens: the run's reasoning part of output-tokens, summed (0 when no model reasoned); the totals notice says it", () => {
  const plain = outcome([PRICED, PRICED]);
  assert.equal(actionOutputs(plain)["reasoning-tokens"], "0");
  assert.doesNotMatch(runAnnotations(plain, "/repo").at(-1)!.message, /reasoning/);
  const reasoned = { ...plain, results: plain.results.map((r, i) => ({ ...r, stats: { ...r.stats!, outputTokens: 1_000, reasoningTokens: 300 + i } })) };
  const o = actionOutputs(reasoned);
  assert.deepEqual({ out: o["output-tokens"], reasoning: o["reasoning-tokens"] }, { out: "2000", reasoning: "601" });
  assert.match(runAnnotations(reasoned, "/repo").at(-1)!.message, /, out 2000 \(601 of them reasoning\); cache hit rate/);
});

const stoppedRun: ActionRunOutcome = {
  results: [sampleResult("s", "ok", "passed"), sampleResult("s", "pricey", "stopped", 2)],
  interrupted: false, interruptedTasks: 0, runDir: "/w/run",
  reports: { junit: "/w/run/junit.xml", stats: "/w/run/stats.json", summary: "/w/run/summary.md" },
};

test("a stopped task is the stopped output, neither failed nor errored", () => {
  const o = actionOutputs(stoppedRun);
  assert.deepEqual([o.passed, o.failed, o.errored, o.stopped], ["1", "0", "0", "1"]);
});

test("fail-on failure counts a stopped task; fail-on error does not", () => {
  assert.equal(stepFailure("failure", stoppedRun), "1 task did not pass: s/pricey");
  assert.equal(stepFailure("error", stoppedRun), null);
});

test("stopped-ok: a stopped task does not fail the step under fail-on failure; a failed one still does", () => {
  assert.equal(stepFailure("failure", stoppedRun, { stoppedOk: true }), null);
  const withFailure: ActionRunOutcome = { ...stoppedRun, results: [...stoppedRun.results, sampleResult("s", "bad", "failed")] };
  assert.equal(stepFailure("failure", withFailure, { stoppedOk: true }), "1 task did not pass: s/bad");
  assert.equal(stepFailure("failure", withFailure), "2 tasks did not pass: s/bad, s/pricey");
});

test("a stopped task is an error annotation naming its budget; the totals say how many stopped", () => {
  const annotations = runAnnotations(stoppedRun, "/repo");
  assert.deepEqual(annotations[0], {
    level: "error", title: "s/pricey", file: "tasks/s/pricey.yaml",
    message: "stopped: the task's cost budget of $0.0100 is spent ($0.0123): stopped before the next model request",
  });
  assert.match(annotations.at(-1)!.message, /^2 tasks: 1 passed, 0 failed, 0 errored, 1 stopped on a budget;/);
});

test("trials, flaky and pass-rate: counted trials, tasks that both passed and failed, passed ÷ counted over the run", () => {
  const trial = (id: string, repeat: number, status: TaskResult["status"]): TaskResult => ({ ...sampleResult("s", id, status, repeat), trial: { repeat, variant: null } });
  const run: ActionRunOutcome = {
    ...outcome([]),
    results: [trial("flaky", 1, "passed"), trial("flaky", 2, "failed"), trial("flaky", 3, "passed"), trial("steady", 1, "passed"), trial("broken", 1, "errored")],
    // Left out of n: an interrupted trial and one the early stop skipped.
    unfinished: [
      { suite: "s", id: "steady", file: "/x", trial: { repeat: 2, variant: null }, state: "interrupted" },
      { suite: "s", id: "broken", file: "/x", trial: { repeat: 2, variant: null }, state: "gate_decided" },
    ],
  };
  const o = actionOutputs(run);
  assert.deepEqual([o.trials, o.flaky, o["pass-rate"]], ["5", "1", "0.6000"]);
  assert.deepEqual([actionOutputs(outcome([])).trials, actionOutputs(outcome([]))["pass-rate"]], ["0", "0"]);
});

test("quarantine: a quarantined task's failure or error fails the step under no fail-on and is a warning annotation; another's still fails it", () => {
  const run: ActionRunOutcome = {
    ...stoppedRun,
    results: [sampleResult("s", "ok", "passed"), sampleResult("s", "bad", "failed"), sampleResult("s", "down", "errored")],
    quarantine: { file: "/w/q.yaml", entries: [{ suite: "s", id: "bad", reason: "flaky upstream" }, { suite: "s", id: "down", reason: null }] },
  };
  assert.equal(stepFailure("failure", run), null);
  assert.equal(stepFailure("error", run), null);
  const annotations = runAnnotations(run, "/repo").filter((a) => a.title === "s/bad" || a.title === "s/down");
  assert.deepEqual(annotations.map((a) => [a.level, a.message.split(": ")[0]]), [["warning", "quarantined (flaky upstream), does not fail the step"], ["warning", "quarantined, does not fail the step"]]);
  const partly: ActionRunOutcome = { ...run, quarantine: { file: "/w/q.yaml", entries: [{ suite: "s", id: "bad", reason: null }] } };
  assert.equal(stepFailure("failure", partly), "1 task did not pass: s/down");
  assert.equal(stepFailure("error", partly), "1 task errored: s/down");
  assert.equal(actionOutputs(run).failed, "1", "the outputs still count it by its verdict");
});

test("a provider that refused the run: one error annotation for it (not one per trial), and the step fails under fail-on failure and error, not never", () => {
  const refusal = { provider: "anthropic", reason: "auth" as const, status: 401, kind: "authentication_error", detail: "invalid x-api-key" };
  const unfinished = ["t1", "t2", "t3"].map((id) => ({ suite: "s", id, file: `/w/s/${id}.yaml`, trial: { repeat: 1, variant: null }, state: "not_started" as const, refusedBy: { provider: "anthropic", reason: "auth" as const } }));
  const refused: ActionRunOutcome = { ...outcome([PRICED]), unfinished, refusals: [refusal] };
  const said = "anthropic refused the key (401 authentication_error: invalid x-api-key): set a valid ANTHROPIC_API_KEY and run the same command to resume";
  const errors = runAnnotations(refused, "/w").filter((a) => a.level === "error");
  assert.deepEqual(errors, [{ level: "error", title: "rhema: anthropic refused the run", message: said }]);
  assert.equal(stepFailure("failure", refused), said);
  assert.equal(stepFailure("error", refused), said);
  assert.equal(stepFailure("never", refused), null);
  assert.equal(stepFailure("failure", { ...refused, refusals: [] }), null, "without the refusal the passed task passes");
});

test("answer: one task × one trial gives its answer's JSON text; several trials give a map by trial key (answers-file); none gives nothing", () => {
  const answered = (id: string, output?: unknown, repeat = 1): TaskResult => ({ ...sampleResult("s", id, "passed", repeat), ...(output !== undefined ? { output } : {}) });
  assert.deepEqual(runAnswers([answered("a", { ok: true })]), { kind: "one", text: '{"ok":true}' });
  assert.deepEqual(runAnswers([answered("a", { n: 1 }), answered("a", undefined, 2), answered("b", { n: 3 })]),
    { kind: "many", byTrial: { "s/a#1": { n: 1 }, "s/b#1": { n: 3 } } });
  assert.deepEqual(runAnswers([answered("a"), answered("b")]), { kind: "none" });
});

test("schema/answers.schema.json is the zod schema's (npm run build && node scripts/gen-schemas.mjs writes it)", async () => {
  assert.deepEqual(JSON.parse(await readFile(join(repoRoot, "schema", "answers.schema.json"), "utf8")), answersJsonSchema());
});
