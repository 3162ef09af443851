/**
 * `junit.xml`: one testsuite per suite, one testcase per task (classname = suite), valid against
 * shared/schemas/junit-10-ext.xsd. A failed check is a `failure` (its name, exit code, output
 * tail); an agent that failed is an `error` typed by its code (provider, step_cap, timeout,
 * cancelled, …); filtered-out tasks are `skipped` testcases when meta lists them.
 *
 * That schema allows `properties` on a testsuite but not on a testcase, so the stats live on the
 * suite: `suite.<stat>` for the suite's totals and `task.<id>.<stat>` for each task. The final
 * answer, the transcript's path and the policy denials go in each testcase's system-out.
 * Rendered as a string by a pure function; run-reports.ts writes it atomically.
 */
import { createRequire } from "node:module";
import type { Builder, TestCase, TestSuite } from "junit-report-builder";
import type { TranscriptStats } from "../../core/transcript-types.js";
import { aggregateResults } from "./stats-report.js";
import { compareTasks, type ReportMeta, type SkippedTask, type TaskResult } from "../run-dir/task-result.js";

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
  const suites = [...new Set([...ordered, ...skipped].map((entry) => entry.suite))].sort();
  for (const suite of suites) {
    const suiteResults = ordered.filter((r) => r.suite === suite);
    const suiteSkipped = skipped.filter((s) => s.suite === suite);
    addSuite(builder.testSuite(), suite, suiteResults, suiteSkipped);
  }
  return builder.build() + "\n";
}

function addSuite(node: TestSuite, suite: string, results: readonly TaskResult[], skipped: readonly SkippedTask[]): void {
  const totals = aggregateResults(results, skipped.length);
  node.name(suite).time(seconds(totals.durationMs));
  const firstStart = results.map((r) => r.startedAt).sort()[0];
  if (firstStart !== undefined) node.timestamp(firstStart);
  node.property("suite.steps", String(totals.steps));
  node.property("suite.policyDenials", String(totals.policyDenials));
  node.property("suite.resumed", String(totals.resumed));
  addStatsProperties(node, "suite", totals.stats);
  for (const result of results) addTaskProperties(node, result);
  // Test cases after properties: the builder writes properties first in any case.
  for (const result of results) addTestCase(node.testCase(), result);
  for (const task of skipped) addSkippedCase(node.testCase(), task);
}

function addTaskProperties(node: TestSuite, result: TaskResult): void {
  const prefix = `task.${result.id}`;
  node.property(`${prefix}.status`, result.status);
  node.property(`${prefix}.provider`, result.provider);
  node.property(`${prefix}.steps`, String(result.steps));
  node.property(`${prefix}.resumed`, String(result.resumed));
  node.property(`${prefix}.policyDenials`, String(result.policyDenials.count));
  addStatsProperties(node, prefix, result.stats);
}

function addStatsProperties(node: TestSuite, prefix: string, stats: TranscriptStats | null): void {
  if (stats === null) return;
  for (const [name, value] of Object.entries(stats)) {
    node.property(`${prefix}.${name}`, name === "cacheHitRate" ? value.toFixed(4) : String(value));
  }
}

function addTestCase(node: TestCase, result: TaskResult): void {
  node.className(result.suite).name(result.id).time(seconds(result.durationMs)).file(result.file);
  switch (result.status) {
    case "passed":
      break;
    case "failed":
      addFailure(node, result);
      break;
    case "errored": {
      const error = result.error ?? { code: "unknown", message: "the agent failed" };
      node.error(error.message, error.code, cdataSafe(error.message));
      break;
    }
  }
  node.standardOutput(cdataSafe(systemOut(result)));
}

function addFailure(node: TestCase, result: TaskResult): void {
  const failed = result.checks.filter((check) => !check.passed);
  const message = failed.length === 1
    ? `check "${failed[0]!.name}" failed (${exitDescription(failed[0]!)})`
    : `${failed.length} checks failed: ${failed.map((check) => check.name).join(", ")}`;
  const details = failed.map((check) => [
    `check: ${check.name}`,
    `command: ${check.command}`,
    `result: ${exitDescription(check)}`,
    "output (tail):",
    tail(check.outputTail),
  ].join("\n"));
  node.failure(message, "check").stacktrace(cdataSafe(details.join("\n\n")));
}

function exitDescription(check: TaskResult["checks"][number]): string {
  if (check.timedOut) return `timed out after ${seconds(check.durationMs)}s`;
  return check.exitCode === null ? "killed" : `exit code ${check.exitCode}`;
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

function addSkippedCase(node: TestCase, task: SkippedTask): void {
  node.className(task.suite).name(task.id).file(task.file).skipped()
    .standardOutput(`skipped: not selected by --${task.reason}`);
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
