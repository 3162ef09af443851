/**
 * `junit.xml`: one testsuite per suite, one testcase per task (classname = suite), valid against
 * schema/junit/junit-10-ext.xsd. A failed check is a `failure` (its name, exit code, output
 * tail); an agent that failed is an `error` typed by its code (provider, step_cap, timeout,
 * cancelled, …); filtered-out tasks are `skipped` testcases when meta lists them. The run's
 * tasks without a result are listed too: one interrupted while it ran is an `error` of type
 * `interrupted`, one never started is `skipped` ("not started: the run was interrupted").
 * A testcase's `file` is the task file relative to its repository (meta.displayFiles).
 * A task with several trials is one testcase over them in the Surefire rerun format
 * (junit-trials.ts), or with `junitCases: "trial"` one testcase per trial named `id#3`; a run
 * whose tasks have one trial each gives the same XML as before trials. With `junitCases: "check"`
 * each check is a testcase of its own, classed `suite.id` (junit-checks.ts).
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
import { failureHeadline, failureOf, failureType } from "./failure-model.js";
import { extendTestCase } from "./junit-test-case.js";
import { cdataSafe, checkDetails, errorDetails, propertyLines, seconds, statValue, systemOut, unfinishedText } from "./junit-text.js";
import { addTrialsCase, trialsFigures } from "./junit-trials.js";
import { addQuarantinedResultCase, addQuarantinedTrialsCase, isQuarantinedFailure, quarantineFigures } from "./junit-quarantine.js";
import { caseName, taskPropertyPrefix } from "./junit-names.js";
import { checkCases, checkClassName, TASK_CASE_NAME } from "./junit-checks.js";
import { groupTaskTrials, trialKeyOf, type TaskTrials } from "./task-trials.js";
import { compareTrials } from "../trials/trial-key.js";
import { type ResultStats, type TaskCost, type TaskResult, type UnfinishedTask } from "../run-dir/task-result.js";
import { compareTasks, type SkippedTask } from "../tasks/task-key.js";
import { type JunitCases, type ReportMeta } from "./report-meta.js";

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

/** The JUnit XML of a run; results in any order, written by suite then id (then trial). */
export function renderJUnitReport(results: readonly TaskResult[], meta: ReportMeta): string {
  const builder = builderModule().newBuilder().name(`rhema run ${meta.runId}`);
  const ordered = [...results].sort(compareResults);
  const skipped = [...(meta.skipped ?? [])].sort(compareTasks);
  const unfinished = [...(meta.unfinished ?? [])].sort(compareResults);
  const tasks = groupTaskTrials(ordered, meta);
  const suites = [...new Set([...ordered, ...skipped, ...unfinished].map((entry) => entry.suite))].sort();
  const fileOf = (file: string) => meta.displayFiles?.[file] ?? file;
  const cases = meta.junitCases ?? "task";
  for (const suite of suites) {
    const inSuite = <T extends { suite: string }>(list: readonly T[]) => list.filter((entry) => entry.suite === suite);
    addSuite(builder.testSuite(), suite, { results: inSuite(ordered), skipped: inSuite(skipped), unfinished: inSuite(unfinished), tasks: inSuite(tasks), cases, runDirShown: meta.runDirShown ?? null }, fileOf);
  }
  return builder.build() + "\n";
}

/** By task, then by trial (compareTrials): the order of testcases and properties. */
function compareResults(a: Parameters<typeof trialKeyOf>[0], b: Parameters<typeof trialKeyOf>[0]): number {
  return compareTrials(trialKeyOf(a), trialKeyOf(b));
}

interface SuiteEntries {
  results: readonly TaskResult[];
  skipped: readonly SkippedTask[];
  unfinished: readonly UnfinishedTask[];
  /** The suite's tasks over their trials (task-trials.ts). */
  tasks: readonly TaskTrials[];
  cases: JunitCases;
  /** The run directory as reports show it (relative to the repository root): where changes.patch attachments point from. */
  runDirShown: string | null;
}

/** A testcase to add, placed by id, variant, then repeat. */
interface CaseEntry {
  id: string;
  variant?: string | null;
  repeat: number;
  add: (c: TestCase) => void;
}

function addSuite(node: TestSuite, suite: string, entries: SuiteEntries, fileOf: (file: string) => string): void {
  const { results, skipped, unfinished, tasks } = entries;
  const totals = aggregateResults(results, skipped.length, unfinished);
  node.name(suite).time(seconds(totals.durationMs));
  const firstStart = results.map((r) => r.startedAt).sort()[0];
  if (firstStart !== undefined) node.timestamp(firstStart);
  node.property("suite.steps", String(totals.steps));
  node.property("suite.policyDenials", String(totals.policyDenials));
  node.property("suite.resumed", String(totals.resumed));
  addStatsProperties(node, "suite", totals.stats, suiteCostFigures(totals.cost));
  for (const task of tasks) {
    if (task.planned > 1) for (const [name, value] of trialsFigures(task)) node.property(`${taskPropertyPrefix(task)}.${name}`, value);
    else for (const result of task.results) addTaskProperties(node, result, task);
    for (const [name, value] of quarantineFigures(task)) node.property(`${taskPropertyPrefix(task)}.${name}`, value);
  }
  // Test cases after properties: the builder writes properties first in any case.
  // One order for every kind of testcase: by id, as the suite's tasks are, then by trial.
  const cases: CaseEntry[] = [
    ...tasks.flatMap((task) => taskCases(task, entries.cases, fileOf(task.file), entries.runDirShown)),
    ...skipped.map((task): CaseEntry => ({ id: task.id, variant: null, repeat: 0, add: (c: TestCase) => addSkippedCase(c, task, fileOf(task.file), entries.cases) })),
  ].sort((a, b) => compareTasks({ suite, id: a.id, variant: a.variant ?? null }, { suite, id: b.id, variant: b.variant ?? null }) || a.repeat - b.repeat);
  for (const entry of cases) entry.add(node.testCase());
}

/**
 * A task's testcases: a one-trial task's result or unfinished entry as before trials; a repeated
 * task's one testcase over its trials (junit-trials.ts), or with `--junit-cases trial` one per
 * trial, named `id#3`; with `--junit-cases check` one per check and `(task)` (junit-checks.ts).
 */
function taskCases(task: TaskTrials, cases: JunitCases, file: string, runDirShown: string | null): CaseEntry[] {
  const place = { id: task.id, variant: task.variant };
  if (cases === "check") {
    return checkCases(task, { file, runDirShown, figures: taskFigures }).map((entry) => ({ ...place, repeat: entry.order, add: entry.add }));
  }
  // A quarantined task that did not pass is a `skipped` testcase carrying its failure (junit-quarantine.ts).
  const quarantined = isQuarantinedFailure(task);
  const marks = quarantineFigures(task);
  if (task.planned > 1 && cases === "task") {
    return [{ ...place, repeat: 0, add: (c) => (quarantined ? addQuarantinedTrialsCase(c, task, file) : addTrialsCase(c, task, file, marks, runDirShown)) }];
  }
  const name = (entry: Parameters<typeof trialKeyOf>[0]) => (task.planned > 1 ? `${caseName(task)}#${trialKeyOf(entry).repeat}` : caseName(task));
  const addResult = (c: TestCase, result: TaskResult) => (quarantined && result.status !== "passed"
    ? addQuarantinedResultCase(c, task, result, { file, name: name(result), figures: taskFigures(result) })
    : addTestCase(c, result, file, { name: name(result), marks, runDirShown }));
  return [
    ...task.results.map((result) => ({ ...place, repeat: trialKeyOf(result).repeat, add: (c: TestCase) => addResult(c, result) })),
    ...task.unfinished.map((entry) => ({ ...place, repeat: trialKeyOf(entry).repeat, add: (c: TestCase) => addUnfinishedCase(c, entry, file, name(entry)) })),
  ];
}

/** A task's figures as `task.<id>.*` properties of its suite: the same as its testcase's. */
function addTaskProperties(node: TestSuite, result: TaskResult, task: TaskTrials): void {
  for (const [name, value] of taskFigures(result)) node.property(`${taskPropertyPrefix(task)}.${name}`, value);
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

function addTestCase(node: TestCase, result: TaskResult, file: string, opts: { name: string; marks: readonly [string, string][]; runDirShown: string | null }): void {
  const { name, marks } = opts;
  node.className(result.suite).name(name).time(seconds(result.durationMs)).file(file);
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
  node.standardOutput(cdataSafe(`${systemOut(result, opts.runDirShown)}\n\n${propertyLines([...taskFigures(result), ...marks])}`));
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



function addFailure(node: TestCase, result: TaskResult): void {
  const failure = failureOf(result);
  if (failure === null) return;
  node.failure(failureHeadline(failure), "check").stacktrace(cdataSafe(checkDetails(failure.kind === "checks" ? failure.failed : []).join("\n\n")));
}




/** A task the selection left out: its testcase, or with `--junit-cases check` its `(task)` testcase (its checks are not known). */
function addSkippedCase(node: TestCase, task: SkippedTask, file: string, cases: JunitCases): void {
  const why = `not selected by --${task.reason}`;
  const [className, name] = cases === "check" ? [checkClassName({ ...task, variant: null }), TASK_CASE_NAME] : [task.suite, task.id];
  extendTestCase(node.className(className).name(name).file(file)).skipped(why).node.standardOutput(`skipped: ${why}`);
}

/** A task without a result: its `time` and figures are what it spent so far (its checkpoint's), never a 0 that hides them. */
function addUnfinishedCase(node: TestCase, task: UnfinishedTask, file: string, name = task.id): void {
  const spent = task.spent ?? null;
  node.className(task.suite).name(name).time(seconds(spent?.durationMs ?? 0)).file(file);
  const why = unfinishedText(task);
  // A trial a provider's refusal stopped is skipped, not an error: it did not fail, it waits for a valid key.
  if (task.state === "interrupted" && !task.refusedBy) node.error(why, "interrupted");
  else extendTestCase(node).skipped(why);
  const figures: [string, string][] = [["status", task.state], ...(spent ? [["steps", String(spent.steps)] as [string, string], ...spendFigures(spent)] : [])];
  node.standardOutput(`${why}\n\n${propertyLines(figures)}`);
}



