/**
 * The structured answers of a run's trials (tasks with `output:`, docs/tasks.md "Structured
 * output") as the step's outputs: `answer`, the answer's JSON text, when the run is one task × one
 * trial; otherwise `answers-file`, the path of a JSON file mapping each trial's key
 * (`suite/id@variant#repeat`, as report.html names it) to its answer. A trial without a valid
 * answer (errored `output_invalid`, or a task without `output:`) has no entry; no answer at all
 * leaves both outputs "". The answers are result.json's, secrets already redacted.
 */
import { join } from "node:path";
import { z } from "zod";
import type { TaskResult } from "../runner/run-dir/task-result.js";
import { trialKeyText } from "../runner/reports/report-html-data.js";
import { writePrivateJson } from "../store/private-files.js";

export const ANSWER_OUTPUT = "answer";
export const ANSWERS_FILE_OUTPUT = "answers-file";
/** The answers file, in the run directory (beside the reports the artifact uploads). */
export const ANSWERS_FILE = "answers.json";

/**
 * `answers.json`: each trial's key to its accepted answer (valid against its task's schema, which
 * this schema cannot name). Published as schema/answers.schema.json.
 */
export const answersFileSchema = z.record(
  z.string().regex(/^[^/]+\/[^@#]+(@[^#]+)?#[1-9]\d*$/).describe("A trial's key, suite/id@variant#repeat (no @variant without a matrix)."),
  z.unknown().describe("The trial's accepted answer (result.json `output`)."),
).meta({ title: "rhema answers", description: "The structured answers of a run's trials (the Action's answers-file), by trial key." });

/** The published JSON Schema of `answers.json`. */
export function answersJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(answersFileSchema) as Record<string, unknown>;
}

/** What the answers become: the one answer's text, or the map the answers file holds; null for none. */
export type RunAnswers = { kind: "one"; text: string } | { kind: "many"; byTrial: Record<string, unknown> } | { kind: "none" };

/** The run's answers, as the outputs give them (see the header). */
export function runAnswers(results: readonly TaskResult[]): RunAnswers {
  const answered = results.filter((r) => r.output !== undefined);
  if (answered.length === 0) return { kind: "none" };
  if (results.length === 1) return { kind: "one", text: JSON.stringify(answered[0]!.output) };
  return { kind: "many", byTrial: Object.fromEntries(answered.map((r) => [trialKeyText(r), r.output])) };
}

/** The two outputs' values, writing the answers file into `runDir` when the run has several answers. */
export async function answerOutputs(results: readonly TaskResult[], runDir: string): Promise<Record<typeof ANSWER_OUTPUT | typeof ANSWERS_FILE_OUTPUT, string>> {
  const answers = runAnswers(results);
  switch (answers.kind) {
    case "none":
      return { [ANSWER_OUTPUT]: "", [ANSWERS_FILE_OUTPUT]: "" };
    case "one":
      return { [ANSWER_OUTPUT]: answers.text, [ANSWERS_FILE_OUTPUT]: "" };
    case "many": {
      const path = join(runDir, ANSWERS_FILE);
      await writePrivateJson(path, answers.byTrial);
      return { [ANSWER_OUTPUT]: "", [ANSWERS_FILE_OUTPUT]: path };
    }
  }
}
