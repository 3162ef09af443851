/**
 * The `final_answer` tool of a task with `output:` and what goes with it: the tool (its input
 * schema is the task's schema; a call ends the turn), the check an answer is judged by (ajv, the
 * same compiled schema and words as the engine's tool-input check), and the approval that lets
 * it through. The tool is in the tool list from the first request, so the list — and with it the
 * prompt-cache prefix — is the same at every step and on resume; `tool_choice` is never forced.
 *
 * Always allowed, whatever the policy says: the call has no effect outside the conversation (it
 * runs nothing, touches no file), and denying it could only turn a valid answer into an error.
 * A checkpointed call that a kill left unanswered is run again on resume with the same input,
 * and a started one is judged by its input: the outcome is the same either way.
 */
import type { Approval } from "../../core/approval.js";
import type { Tool } from "../../core/tool.js";
import { sharedSchemaCompiler, withoutAbsentNulls } from "../../core/tool-input/tool-input-check.js";
import { describeSchemaErrors } from "../../core/tool-input/tool-input-errors.js";
import { ANSWER_ACCEPTED, FINAL_ANSWER_TOOL, type AnswerCheck } from "./structured-answer.js";


/** The rule a `final_answer` call is allowed by, as events and reports name it. */
export const FINAL_ANSWER_RULE = "final_answer (always allowed: it only gives the answer)";

/** The `final_answer` tool whose input schema is `schema` (one outputSchemaProblem accepted). */
export function finalAnswerTool(schema: Record<string, unknown>): Tool {
  return {
    spec: {
      name: FINAL_ANSWER_TOOL,
      description: "Give your final answer: its input is the answer, which must be valid against this schema. Call it once, when the work is done; the turn ends with it.",
      inputSchema: schema,
    },
    effect: "read",
    endsTurn: true,
    async run() {
      return { content: ANSWER_ACCEPTED };
    },
  };
}

/** Judges an answer against `schema` as the engine judges the tool's input (a null optional field counts as absent). */
export function answerCheckOf(schema: Record<string, unknown>): AnswerCheck {
  const validate = sharedSchemaCompiler.compile(schema);
  return (value) => {
    if (validate(value)) return { ok: true, value };
    const errors = validate.errors ?? [];
    const eased = withoutAbsentNulls(value, schema);
    if (eased !== value && value !== null && value !== undefined && validate(eased)) return { ok: true, value: eased };
    return { ok: false, errors: describeSchemaErrors(errors, "the answer") };
  };
}

/** `approval` with every `final_answer` call allowed (see the header), the rest decided by it. */
export function allowingFinalAnswer(approval: Approval): Approval {
  return {
    decide: (req, signal) => (req.tool === FINAL_ANSWER_TOOL ? Promise.resolve({ decision: "allow", rule: FINAL_ANSWER_RULE }) : approval.decide(req, signal)),
  };
}
