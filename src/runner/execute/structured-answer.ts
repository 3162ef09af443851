/**
 * A task's structured answer (`output:`, docs/tasks.md "Structured output"), read off the
 * conversation alone, so a resumed trial judges exactly what an uninterrupted one would.
 *
 * An *attempt* is either a `final_answer` call (its input is the answer) or, when the model
 * stops without calling it, its last message's text parsed as JSON (the whole text, or the last
 * ```json fenced block). Each attempt is validated against the task's schema. The latest attempt
 * decides where the trial stands: accepted; or to be repaired (the validation errors go back to
 * the model: as the `final_answer` call's tool result, or as a new user message after a text
 * answer), while the invalid attempts number at most `repairs`; or exhausted (the trial errors
 * with `output_invalid`). Pure: no I/O, the schema check is passed in.
 */
import { textOf, toolCallsOf, type Message } from "../../core/messages.js";
import { counted } from "../../core/counted.js";

/** The tool whose input is the answer. Its input schema is the task's `output.schema`. */
export const FINAL_ANSWER_TOOL = "final_answer";

/** What a schema check says of a value: valid, or the errors in words the model can act on. */
export type SchemaVerdict = { ok: true; value: unknown } | { ok: false; errors: string };

/** Validates a value against the task's schema (the value it returns may be eased: null optional fields dropped). */
export type AnswerCheck = (value: unknown) => SchemaVerdict;

/** One answer attempt and its verdict. */
export interface AnswerAttempt {
  via: "tool" | "text";
  verdict: SchemaVerdict;
}

/** Where a conversation stands on its answer. */
export type AnswerStanding =
  /** No attempt ends the conversation: a turn is under way (or has not begun). */
  | { kind: "open" }
  | { kind: "accepted"; value: unknown; via: "tool" | "text" }
  /** The latest attempt is invalid and a repair is left: `repairsLeft` after this one. */
  | { kind: "repair"; via: "tool" | "text"; errors: string; repairsLeft: number }
  | { kind: "exhausted"; errors: string };

/**
 * The JSON a plain-text answer holds: the whole text, else its last ```json (or bare ```) fenced
 * block. `problem` says why none is there, for the repair message.
 */
export function jsonOfText(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const whole = parseJson(text.trim());
  if (whole.ok) return whole;
  const fences = [...text.matchAll(/```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)\r?\n?```/g)];
  const last = fences[fences.length - 1];
  if (last) {
    const fenced = parseJson(last[1]!.trim());
    return fenced.ok ? fenced : { ok: false, problem: `the fenced block is not JSON: ${fenced.problem}` };
  }
  if (text.trim() === "") return { ok: false, problem: "the answer is empty" };
  return { ok: false, problem: `the answer is not JSON (nor holds a \`\`\`json block): ${whole.problem}` };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, problem: err instanceof Error ? err.message : String(err) };
  }
}

/** Every answer attempt of the conversation, in order. */
export function answerAttempts(messages: readonly Message[], check: AnswerCheck): AnswerAttempt[] {
  const attempts: AnswerAttempt[] = [];
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    const calls = toolCallsOf(message);
    const answers = calls.filter((call) => call.name === FINAL_ANSWER_TOOL);
    const last = answers[answers.length - 1];
    if (last) attempts.push({ via: "tool", verdict: check(last.input) });
    else if (calls.length === 0) attempts.push({ via: "text", verdict: textVerdict(textOf(message), check) });
  }
  return attempts;
}

function textVerdict(text: string, check: AnswerCheck): SchemaVerdict {
  const json = jsonOfText(text);
  return json.ok ? check(json.value) : { ok: false, errors: json.problem };
}

/**
 * Where the conversation stands: an attempt ends it when its last message is a text answer
 * (the model stopped) or the results of a step that called `final_answer`.
 */
export function answerStanding(messages: readonly Message[], check: AnswerCheck, repairs: number): AnswerStanding {
  if (!endsOnAttempt(messages)) return { kind: "open" };
  const attempts = answerAttempts(messages, check);
  const latest = attempts[attempts.length - 1]!;
  if (latest.verdict.ok) return { kind: "accepted", value: latest.verdict.value, via: latest.via };
  const invalid = attempts.filter((a) => !a.verdict.ok).length;
  if (invalid > repairs) return { kind: "exhausted", errors: latest.verdict.errors };
  return { kind: "repair", via: latest.via, errors: latest.verdict.errors, repairsLeft: repairs - invalid };
}

function endsOnAttempt(messages: readonly Message[]): boolean {
  const last = messages[messages.length - 1];
  if (!last) return false;
  if (last.role === "assistant") return toolCallsOf(last).length === 0;
  const asked = messages[messages.length - 2];
  if (asked?.role !== "assistant") return false;
  const answered = new Set(last.content.flatMap((b) => (b.type === "tool_result" ? [b.callId] : [])));
  const calls = toolCallsOf(asked);
  return calls.some((c) => c.name === FINAL_ANSWER_TOOL) && calls.every((c) => answered.has(c.id));
}

/** The user message that sends an invalid text answer back: its errors and what to do. */
export function repairText(errors: string, repairsLeft: number): string {
  return [
    `Your answer is not valid against the required output schema: ${errors}.`,
    `Give the answer again by calling the \`${FINAL_ANSWER_TOOL}\` tool (its input is the answer), or reply with only the JSON.`,
    repairsLeft === 0 ? "This is the last chance to correct it." : `${counted(repairsLeft, "more correction")} after this one.`,
  ].join(" ");
}

/** The text the `final_answer` tool's valid call gets back. */
export const ANSWER_ACCEPTED = "Answer recorded.";
