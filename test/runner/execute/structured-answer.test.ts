/** The structured answer read off a conversation (structured-answer.ts) and the check it is judged by (final-answer-tool.ts). */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../../../src/core/messages.js";
import { allowingFinalAnswer, answerCheckOf, finalAnswerTool, FINAL_ANSWER_RULE } from "../../../src/runner/execute/final-answer-tool.js";
import { compileInputChecks, sharedSchemaCompiler } from "../../../src/core/tool-input/tool-input-check.js";
import { outputSchemaProblem } from "../../../src/runner/tasks/output-schema.js";
import { answerStanding, jsonOfText, repairText } from "../../../src/runner/execute/structured-answer.js";

const SCHEMA = { type: "object", properties: { n: { type: "integer" }, note: { type: "string" } }, required: ["n"], additionalProperties: false };
const check = answerCheckOf(SCHEMA);

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const said = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
const called = (id: string, name: string, input: unknown): Message => ({ role: "assistant", content: [{ type: "tool_call", id, name, input }] });
const answered = (id: string, text: string, isError = false): Message => ({ role: "user", content: [{ type: "tool_result", callId: id, content: text, ...(isError ? { isError } : {}) }] });

test("jsonOfText: the whole text, else the last fenced block; else why not", () => {
  assert.deepEqual(jsonOfText(' {"n": 1} \n'), { ok: true, value: { n: 1 } });
  assert.deepEqual(jsonOfText('Done.\n```json\n{"n": 1}\n```\nthen\n```\n{"n": 2}\n```'), { ok: true, value: { n: 2 } });
  assert.deepEqual(jsonOfText("```JSON\n[1]```"), { ok: true, value: [1] });
  assert.equal(jsonOfText("").ok, false);
  assert.match((jsonOfText("") as { problem: string }).problem, /empty/);
  assert.match((jsonOfText("It passes.") as { problem: string }).problem, /not JSON \(nor holds a ```json block\)/);
  assert.match((jsonOfText("```json\n{n: 1}\n```") as { problem: string }).problem, /the fenced block is not JSON/);
});

test("the answer check names what is wrong, and drops a null optional field as the tool-input check does", () => {
  assert.deepEqual(check({ n: 1 }), { ok: true, value: { n: 1 } });
  assert.deepEqual(check({ n: 1, note: null }), { ok: true, value: { n: 1 } });
  assert.deepEqual(check({ n: "1", extra: true }), { ok: false, errors: "`n` must be an integer (got \"1\"); unknown field `extra` (fields: n, note)" });
  assert.deepEqual(check([]), { ok: false, errors: "the answer must be an object (got [])" });
});

test("where a conversation stands: open mid-turn, accepted, to repair (tool or text), exhausted after the repairs", () => {
  const prompt = user("Count.");
  assert.deepEqual(answerStanding([], check, 1), { kind: "open" });
  assert.deepEqual(answerStanding([prompt, called("a", "read_file", {}), answered("a", "x")], check, 1), { kind: "open" });
  assert.deepEqual(answerStanding([prompt, called("a", "final_answer", { n: 2 }), answered("a", "Answer recorded.")], check, 1),
    { kind: "accepted", value: { n: 2 }, via: "tool" });
  assert.deepEqual(answerStanding([prompt, said('{"n": 3}')], check, 0), { kind: "accepted", value: { n: 3 }, via: "text" });
  const badCall = [prompt, called("a", "final_answer", { n: "x" }), answered("a", "Invalid input", true)];
  assert.deepEqual(answerStanding(badCall, check, 1), { kind: "repair", via: "tool", errors: "`n` must be an integer (got \"x\")", repairsLeft: 0 });
  // A final_answer call the kill left unanswered is no attempt yet: the resume runs it.
  assert.deepEqual(answerStanding(badCall.slice(0, 2), check, 1), { kind: "open" });
  const then = [...badCall, said("It is two.")];
  const exhausted = answerStanding(then, check, 1);
  assert.equal(exhausted.kind, "exhausted");
  assert.match((exhausted as { errors: string }).errors, /^the answer is not JSON \(nor holds a ```json block\): /);
  assert.deepEqual(answerStanding(then, check, 2), { kind: "repair", via: "text", errors: (answerStanding(then, check, 1) as { errors: string }).errors, repairsLeft: 0 });
  // A repair message pushed: the model has not answered it yet.
  assert.deepEqual(answerStanding([...then, user(repairText("x", 0))], check, 2), { kind: "open" });
  // An answer the interrupted-call note answered is judged by its input: the outcome a kill cannot change.
  assert.deepEqual(answerStanding([prompt, called("a", "final_answer", { n: 5 }), answered("a", "interrupted", true)], check, 0),
    { kind: "accepted", value: { n: 5 }, via: "tool" });
});

test("the repair message quotes the errors and says what is left", () => {
  assert.equal(repairText("`n` is required", 1),
    "Your answer is not valid against the required output schema: `n` is required. Give the answer again by calling the `final_answer` tool (its input is the answer), or reply with only the JSON. 1 more correction after this one.");
  assert.match(repairText("e", 0), /This is the last chance to correct it\.$/);
});

test("the final_answer tool: its input schema is the task's, it ends the turn, and the policy is not asked", async () => {
  const tool = finalAnswerTool(SCHEMA);
  assert.deepEqual([tool.spec.name, tool.spec.inputSchema, tool.endsTurn, tool.effect], ["final_answer", SCHEMA, true, "read"]);
  const asked: string[] = [];
  const approval = allowingFinalAnswer({ decide: async (req) => (asked.push(req.tool), { decision: "deny", rule: "default" }) });
  const req = { callId: "c", effect: "read" as const, input: {}, workspace: "/w", paths: [] };
  assert.deepEqual(await approval.decide({ ...req, tool: "final_answer" }, new AbortController().signal), { decision: "allow", rule: FINAL_ANSWER_RULE });
  assert.deepEqual(await approval.decide({ ...req, tool: "shell" }, new AbortController().signal), { decision: "deny", rule: "default" });
  assert.deepEqual(asked, ["shell"]);
});

test("a task's output schema compiles once in the process: its load check, the answer check and final_answer's input check share the compiler", () => {
  const first = { type: "object", properties: { once: { type: "string" } }, required: ["once"] };
  const second = { type: "object", properties: { twice: { type: "string" } } };
  const before = sharedSchemaCompiler.size;
  assert.equal(outputSchemaProblem(first), null);
  assert.equal(sharedSchemaCompiler.size, before + 1, "the load check compiled it in the shared compiler");
  answerCheckOf(first);
  compileInputChecks([finalAnswerTool(first).spec]);
  assert.equal(sharedSchemaCompiler.size, before + 1, "the answer check and the input check found it compiled");
  answerCheckOf(second);
  assert.equal(sharedSchemaCompiler.size, before + 2, "the answer check compiles in the shared compiler");
});
