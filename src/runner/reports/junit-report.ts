/**
 * `junit.xml`: one testsuite per suite, one testcase per task (classname = suite), valid against
 * schema/junit/junit-10-ext.xsd. A failed check is a `failure` (its name, exit code, output
 * tail); an agent that failed is an `error` typed by its code (provider, step_cap, timeout,
 * cancelled, …); filtered-out tasks are `skipped` testcases when meta lists them. The run's
 * tasks without a result are listed too: one interrupted while it ran is an `error` of type
 * `interrupted`, one never started is `skipped` ("not started: the run was interrupted").
 * A testcase's `file` is the task file relative to its repository (meta.displayFiles).
 *
 * That schema allows `properties` on a testsuite but not on a testcase, so the stats live on the
 * suite: `suite.<stat>` for the suite's totals and `task.<id>.<stat>` for each task; and, for
 * consumers that read only testcase-level properties, each testcase's system-out ends with its
 * figures as `[[PROPERTY|name=value]]` lines (the convention Jenkins, Xray and Polarion read
 * from system-out), valid under both junit-10.xsd and the ext schema. The final answer, the
 * transcript's path and the policy denials go in the system-out before them.
 * Rendered as a string by a pure function; run-reports.ts writes it atomically.
 */
import { createRequire } from "node:module";
import type { Builder, TestCase, TestSuite } from "junit-report-builder";
import { aggregateResults } from "./stats-report.js";
import type { CostTotal } from "../pricing/cost-figures.js";
import { checkVerdict, failureHeadline, failureOf, failureType, type TaskFailureModel } from "./failure-model.js";
import { extendTestCase } from "./junit-test-case.js";
import { compareTasks, type CheckOutcome, type ReportMeta, type ResultStats, type SkippedTask, type TaskCost, type TaskResult, type UnfinishedTask } from "../run-dir/task-result.js";

let rootBuilder: Builder | null = null;

/**
 * The builder, required at the first report rather than at start-up (it and its XML library
 * take ~80 ms to load, before the first model request otherwise). Under NodeNext the types say
 * `export default` but the runtime is `module.exports`.
 */
function builderModule(): Builder {
  if (!rootBuilder) {
    const loaded = createRequire(import.meta.url)("junit-report-builder") as Builder & { default?: Builder };
    rootBuilder = loaded.default ?? loaded;
  }
  return rootBuilder;
}

const TAIL_CHARS = 8_000;

/** The JUnit XML of a run; results in any order, written by suite then id. */
export function renderJUnitReport(results: readonly TaskResult[], meta: ReportMeta): string {
  const builder = builderModule().newBuilder().name(`rhema run ${meta.runId}`);
  const ordered = [...results].sort(compareTasks);
  const skipped = [...(meta.skipped ?? [])].sort(compareTasks);
  const unfinished = [...(meta.unfinished ?? [])].sort(compareTasks);
  const suites = [...new Set([...ordered, ...skipped, ...unfinished].map((entry) => entry.suite))].sort();
  const fileOf = (file: string) => meta.displayFiles?.[file] ?? file;
  for (const suite of suites) {
    const inSuite = <T extends { suite: string }>(list: readonly T[]) => list.filter((entry) => entry.suite === suite);
    addSuite(builder.testSuite(), suite, { results: inSuite(ordered), skipped: inSuite(skipped), unfinished: inSuite(unfinished) }, fileOf);
  }
  return builder.build() + "\n";
}

interface SuiteEntries {
  results: readonly TaskResult[];
  skipped: readonly SkippedTask[];
  unfinished: readonly UnfinishedTask[];
}

function addSuite(node: TestSuite, suite: string, entries: SuiteEntries, fileOf: (file: string) => string): void {
  const { results, skipped, unfinished } = entries;
  const totals = aggregateResults(results, skipped.length, unfinished);
  node.name(suite).time(seconds(totals.durationMs));
  const firstStart = results.map((r) => r.startedAt).sort()[0];
  if (firstStart !== undefined) node.timestamp(firstStart);
  node.property("suite.steps", String(totals.steps));
  node.property("suite.policyDenials", String(totals.policyDenials));
  node.property("suite.resumed", String(totals.resumed));
  addStatsProperties(node, "suite", totals.stats, suiteCostFigures(totals.cost));
  for (const result of results) addTaskProperties(node, result);
  // Test cases after properties: the builder writes properties first in any case.
  // One order for every kind of testcase: by id, as the suite's tasks are.
  const cases = [
    ...results.map((result) => ({ id: result.id, add: (c: TestCase) => addTestCase(c, result, fileOf(result.file)) })),
    ...unfinished.map((task) => ({ id: task.id, add: (c: TestCase) => addUnfinishedCase(c, task, fileOf(task.file)) })),
    ...skipped.map((task) => ({ id: task.id, add: (c: TestCase) => addSkippedCase(c, task, fileOf(task.file)) })),
  ].sort((a, b) => compareTasks({ suite, id: a.id }, { suite, id: b.id }));
  for (const entry of cases) entry.add(node.testCase());
}

/** A task's figures as `task.<id>.*` properties of its suite: the same as its testcase's. */
function addTaskProperties(node: TestSuite, result: TaskResult): void {
  for (const [name, value] of taskFigures(result)) node.property(`task.${result.id}.${name}`, value);
}

/** The stats as properties, with the cost figures in place of the stats' own (which read 0 for unpriced). */
function addStatsProperties(node: TestSuite, prefix: string, stats: ResultStats | null, cost: CostFigures): void {
  if (stats === null) return;
  for (const [name, value] of Object.entries(stats)) {
    node.property(`${prefix}.${name}`, cost.replace[name] ?? statValue(name, value));
  }
  for (const [name, value] of cost.add) node.property(`${prefix}.${name}`, value);
}

/** Cost as properties: `costUsd`/`workerCostUsd` read `unpriced` where there was no price (never 0), plus the total and what was priced. */
interface CostFigures {
  replace: Record<string, string>;
  add: [string, string][];
}

const NO_COST: CostFigures = { replace: {}, add: [] };

function taskCostFigures(cost: TaskCost | null | undefined): CostFigures {
  if (cost === undefined || cost === null) return NO_COST;
  return {
    replace: {
      ...(cost.pricedAs === null ? { costUsd: "unpriced" } : {}),
      ...(cost.workerPricedAs === null ? { workerCostUsd: "unpriced" } : {}),
    },
    add: [
      ["totalCostUsd", cost.usd === null ? "unpriced" : String(cost.usd)],
      ["pricedAs", cost.pricedAs ?? "unpriced"],
      ["costSimulated", String(cost.simulated)],
    ],
  };
}

function suiteCostFigures(total: CostTotal | null): CostFigures {
  if (total === null) return NO_COST;
  const unpriced = total.usd === null;
  return {
    replace: unpriced ? { costUsd: "unpriced", workerCostUsd: "unpriced" } : {},
    add: [
      ["totalCostUsd", unpriced ? "unpriced" : String(total.usd)],
      ["unpricedTasks", String(total.unpricedTasks)],
      ["simulatedTasks", String(total.simulatedTasks)],
    ],
  };
}

function addTestCase(node: TestCase, result: TaskResult, file: string): void {
  node.className(result.suite).name(result.id).time(seconds(result.durationMs)).file(file);
  switch (result.status) {
    case "passed":
      break;
    case "failed":
      addFailure(node, result);
      break;
    case "errored":
    case "stopped": {
      // failure-model.ts: the label and full reason (a setup's, a timeout's with the checks that had failed).
      const failure = failureOf(result);
      if (failure !== null) node.error(failureHeadline(failure), failureType(failure), cdataSafe(errorDetails(result, failure)));
      break;
    }
  }
  node.standardOutput(cdataSafe(`${systemOut(result)}\n\n${propertyLines(taskFigures(result))}`));
}

/** A task's figures as testcase-level properties: name → value (its duration is the testcase's `time`). */
export function taskFigures(result: TaskResult): [string, string][] {
  const figures: [string, string][] = [
    ["status", result.status],
    ["provider", result.provider],
    ["steps", String(result.steps)],
    ["resumed", String(result.resumed)],
    ["policyDenials", String(result.policyDenials.count)],
    ...sandboxFigures(result),
  ];
  return [...figures, ...spendFigures(result)];
}

/** The stats and cost of a task (a result, or what an unfinished one spent so far) as figures. */
function spendFigures(spend: { stats: ResultStats | null; cost?: TaskCost | null | undefined }): [string, string][] {
  const cost = taskCostFigures(spend.cost);
  const figures: [string, string][] = [];
  for (const [name, value] of Object.entries(spend.stats ?? {})) figures.push([name, cost.replace[name] ?? statValue(name, value)]);
  if (spend.stats !== null) figures.push(...cost.add);
  return figures;
}

/** What the task's commands ran in (`bwrap`, `none`: unsandboxed though asked for auto, `off`) and their network; none for results of older rhemas. */
function sandboxFigures(result: TaskResult): [string, string][] {
  return result.sandbox ? [["sandbox", result.sandbox.mode], ["network", result.sandbox.network]] : [];
}

/** `[[PROPERTY|name=value]]`, one a line: testcase properties in system-out. */
function propertyLines(figures: readonly [string, string][]): string {
  return figures.map(([name, value]) => `[[PROPERTY|${name}=${value.replace(/[\r\n]+/g, " ").replaceAll("]]", "] ]")}]]`).join("\n");
}

/** A stat as a property value; a null (a dollar figure with no price) reads `unpriced`, never 0. */
function statValue(name: string, value: number | null): string {
  if (value === null) return "unpriced";
  return name === "cacheHitRate" ? value.toFixed(4) : String(value);
}

function addFailure(node: TestCase, result: TaskResult): void {
  const failure = failureOf(result);
  if (failure === null) return;
  node.failure(failureHeadline(failure), "check").stacktrace(cdataSafe(checkDetails(failure.kind === "checks" ? failure.failed : []).join("\n\n")));
}

/** An errored or stopped task's error body: its whole message, then the checks that had failed before it (a timeout during checks). */
function errorDetails(result: TaskResult, failure: TaskFailureModel): string {
  const message = result.error?.message ?? failureHeadline(failure);
  return [message, ...(failure.kind === "timeout" ? checkDetails(failure.failed) : [])].join("\n\n");
}

function checkDetails(failed: readonly CheckOutcome[]): string[] {
  return failed.map((check) => [
    `check: ${check.name}`,
    `command: ${check.command}`,
    `result: ${checkVerdict(check)}`,
    ...(check.notRun !== undefined ? [] : ["output (tail):", tail(check.outputTail)]),
  ].join("\n"));
}

function systemOut(result: TaskResult): string {
  const lines = result.finalAnswer === "" ? [] : [result.finalAnswer, ""];
  lines.push(`transcript: ${result.transcriptPath}`);
  if (result.policyDenials.count > 0) {
    lines.push(`policy denials: ${result.policyDenials.count}`);
    for (const denial of result.policyDenials.examples) {
      lines.push(`  ${denial.tool} denied by ${denial.rule ?? "default"}: ${denial.reason}`);
    }
  }
  return lines.join("\n");
}

function addSkippedCase(node: TestCase, task: SkippedTask, file: string): void {
  const why = `not selected by --${task.reason}`;
  extendTestCase(node.className(task.suite).name(task.id).file(file)).skipped(why).node.standardOutput(`skipped: ${why}`);
}

/** Shown for a task without a result; the next run of the same command continues or starts it. */
const UNFINISHED_TEXT: Record<UnfinishedTask["state"], string> = {
  interrupted: "interrupted: the run stopped while this task ran; the same command continues it from its checkpoint",
  not_started: "not started: the run was interrupted",
  not_selected: "not run yet: not selected by the runs of this run directory so far",
  gate_decided: "skipped (gate decided): its task's gate was decided by its other trials before it started (--stop-early)",
};

/** The same for a task an earlier run interrupted (it spent something) and this one did not continue. */
const EARLIER_INTERRUPTED_TEXT: Record<Exclude<UnfinishedTask["state"], "interrupted">, string> = {
  gate_decided: UNFINISHED_TEXT.gate_decided,
  not_started: "not finished: an earlier run was interrupted while this task ran, and this run was interrupted before it continued it",
  not_selected: "not finished: an earlier run was interrupted while this task ran, and no run has selected it since; selecting it continues it from its checkpoint",
};

/** Why a task has no result, in a line. */
export function unfinishedText(task: Pick<UnfinishedTask, "state" | "spent">): string {
  return task.state !== "interrupted" && task.spent ? EARLIER_INTERRUPTED_TEXT[task.state] : UNFINISHED_TEXT[task.state];
}

/** A task without a result: its `time` and figures are what it spent so far (its checkpoint's), never a 0 that hides them. */
function addUnfinishedCase(node: TestCase, task: UnfinishedTask, file: string): void {
  const spent = task.spent ?? null;
  node.className(task.suite).name(task.id).time(seconds(spent?.durationMs ?? 0)).file(file);
  const why = unfinishedText(task);
  if (task.state === "interrupted") node.error(why, "interrupted");
  else extendTestCase(node).skipped(why);
  const figures: [string, string][] = [["status", task.state], ...(spent ? [["steps", String(spent.steps)] as [string, string], ...spendFigures(spent)] : [])];
  node.standardOutput(`${why}\n\n${propertyLines(figures)}`);
}

/** Seconds with millisecond precision, never in exponent form (the schema's time pattern). */
function seconds(ms: number): number {
  return Number((Math.max(0, ms) / 1_000).toFixed(3));
}

function tail(text: string): string {
  return text.length <= TAIL_CHARS ? text : `…${text.slice(-TAIL_CHARS)}`;
}

/** The builder escapes only the first `]]>` of a CDATA section; break up every one. */
function cdataSafe(text: string): string {
  return text.replaceAll("]]>", "]] >");
}
