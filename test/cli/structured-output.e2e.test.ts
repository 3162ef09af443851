/**
 * Structured output (`output:`, issue 26 item 5) through the built CLI and each provider's wire
 * protocol (Anthropic, Chat Completions, the Responses API and Gemini), against the shared local fakes: a
 * valid answer through final_answer the first time,
 * one valid after a repair, one still invalid after its repairs (errored, output_invalid, the last
 * errors in result.json and junit.xml), a model that ignores the tool and answers in text (valid
 * JSON accepted; invalid repaired), a check that reads $RHEMA_OUTPUT, and --retry-errored.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli } from "../support/cli.js";
import { FakeAnthropicServer, type FakeAnthropicReply } from "../support/fake-anthropic-server.js";
import { FakeGeminiServer, type FakeGeminiReply } from "../support/fake-gemini-server.js";
import { FakeOpenAIResponsesServer, type FakeResponsesReply } from "../support/fake-openai-responses-server.js";
import { FakeOpenAIServer, type FakeOpenAIReply } from "../support/fake-openai-server.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const SCHEMA = {
  type: "object",
  properties: { verdict: { enum: ["pass", "fail"] }, score: { type: "integer", minimum: 0 } },
  required: ["verdict", "score"],
  additionalProperties: false,
};

/** One model reply: a final_answer call with this input, or plain text. */
type Answer = { tool: unknown } | { text: string };

/** A provider's fake server, driven the same way for both wire protocols. */
interface Wire {
  name: "anthropic" | "openai" | "openai-responses" | "gemini";
  model: string;
  env: Record<string, string>;
  reply(...answers: Answer[]): void;
  /** The request bodies received. */
  bodies(): any[];
  violations(): string[];
  close(): Promise<void>;
}

async function startWire(name: Wire["name"]): Promise<Wire> {
  let n = 0;
  if (name === "anthropic") {
    const server = await FakeAnthropicServer.start();
    const toReply = (a: Answer): FakeAnthropicReply => ("tool" in a
      ? { kind: "stream", blocks: [{ type: "tool_use", id: `toolu_${++n}`, name: "final_answer", input: a.tool }] }
      : { kind: "stream", blocks: [{ type: "text", text: a.text }] });
    return {
      name, model: "claude-test", env: { ANTHROPIC_API_KEY: "sk-test-key", ANTHROPIC_BASE_URL: server.baseUrl },
      reply: (...answers) => void server.reply(...answers.map(toReply)),
      bodies: () => server.bodies, violations: () => server.violations, close: () => server.close(),
    };
  }
  if (name === "gemini") {
    const server = await FakeGeminiServer.start();
    const toReply = (a: Answer): FakeGeminiReply => ("tool" in a ? { kind: "stream", calls: [{ name: "final_answer", args: a.tool }] } : { kind: "stream", text: a.text });
    return {
      name, model: "gemini-test", env: { GEMINI_API_KEY: "AIza-test-key", GOOGLE_GEMINI_BASE_URL: server.baseUrl },
      reply: (...answers) => void server.reply(...answers.map(toReply)),
      bodies: () => server.bodies, violations: () => server.violations, close: () => server.close(),
    };
  }
  if (name === "openai-responses") {
    const server = await FakeOpenAIResponsesServer.start();
    const toReply = (a: Answer): FakeResponsesReply => ("tool" in a
      ? { kind: "stream", calls: [{ callId: `call_${++n}`, name: "final_answer", arguments: a.tool }] }
      : { kind: "stream", text: a.text });
    return {
      name, model: "gpt-test", env: { OPENAI_API_KEY: "sk-test-key", OPENAI_BASE_URL: server.baseUrl },
      reply: (...answers) => void server.reply(...answers.map(toReply)),
      bodies: () => server.bodies, violations: () => server.violations, close: () => server.close(),
    };
  }
  const server = await FakeOpenAIServer.start();
  const toReply = (a: Answer): FakeOpenAIReply => ("tool" in a
    ? { kind: "stream", toolCalls: [{ id: `call_${++n}`, name: "final_answer", arguments: a.tool }] }
    : { kind: "stream", text: a.text });
  return {
    name, model: "gpt-test", env: { OPENAI_API_KEY: "sk-test-key", OPENAI_BASE_URL: server.baseUrl },
    reply: (...answers) => void server.reply(...answers.map(toReply)),
    bodies: () => server.bodies, violations: () => server.violations, close: () => server.close(),
  };
}

/** A suite of one task with `output:` (schema from schema.json) run through `wire`; returns the run's folder and root. */
async function suiteFor(t: test.TestContext, wire: Wire, extra = ""): Promise<{ root: string; out: string }> {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": OPEN_POLICY,
    "suite/schema.json": JSON.stringify(SCHEMA),
    "suite/judge.yaml": `prompt: Judge the change.
policy: ../policy.yaml
model: { provider: ${wire.name}, name: ${wire.model} }
output: { schema: schema.json, repairs: 1 }
${extra}`,
  });
  return { root, out: join(root, "run") };
}

/** The conversation a request carries: Chat Completions' and Anthropic's `messages`, the Responses API's `input`, Gemini's `contents`. */
function conversationOf(body: any): any[] {
  return body.messages ?? body.input ?? body.contents;
}

function lastUserText(body: any): string {
  return JSON.stringify(conversationOf(body).at(-1));
}

for (const name of ["anthropic", "openai", "openai-responses", "gemini"] as const) {
  test(`${name}: a valid final_answer the first time ends the turn; the answer is in result.json, output.json and $RHEMA_OUTPUT; the tool is in the first request`, async (t) => {
    const wire = await startWire(name);
    t.after(() => wire.close());
    const { root, out } = await suiteFor(t, wire, `checks:
  - { name: reads-output, run: 'grep -q "\\"verdict\\": \\"pass\\"" "$RHEMA_OUTPUT"' }
`);
    wire.reply({ tool: { verdict: "pass", score: 3 } });
    const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv(wire.env) });
    assert.equal(run.code, 0, run.stderr);
    const [result] = await readRunResults(out);
    assert.deepEqual([result!.status, result!.output, result!.steps], ["passed", { verdict: "pass", score: 3 }, 1]);
    // The answering message has no text: the final answer checks read is the answer's JSON.
    assert.deepEqual(JSON.parse(result!.finalAnswer), { verdict: "pass", score: 3 });
    const folder = join(out, "tasks", "suite", "judge", "default", "1");
    assert.deepEqual(JSON.parse(await readFile(join(folder, "output.json"), "utf8")), { verdict: "pass", score: 3 });
    assert.equal(wire.bodies().length, 1, "no request after the answer");
    assert.match(JSON.stringify(wire.bodies()[0].tools), /final_answer/);
    assert.doesNotMatch(JSON.stringify(wire.bodies()[0]), /tool_choice"?:\s*\{/, "tool_choice is never forced");
    // The Responses API also gets the schema as its text format (strict: this schema is closed and requires every field).
    if (name === "openai-responses") assert.deepEqual(wire.bodies()[0].text, { format: { type: "json_schema", name: "final_answer", schema: SCHEMA, strict: true } });
    assert.deepEqual(wire.violations(), []);
  });

  test(`${name}: an invalid final_answer is answered with its errors, and one valid after that repair is accepted`, async (t) => {
    const wire = await startWire(name);
    t.after(() => wire.close());
    const { root, out } = await suiteFor(t, wire);
    wire.reply({ tool: { verdict: "maybe", score: 3 } }, { tool: { verdict: "fail", score: 0 } });
    const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv(wire.env) });
    assert.equal(run.code, 0, run.stderr);
    const [result] = await readRunResults(out);
    assert.deepEqual([result!.status, result!.output], ["passed", { verdict: "fail", score: 0 }]);
    assert.equal(wire.bodies().length, 2);
    assert.match(lastUserText(wire.bodies()[1]), /verdict.*must be one of.*pass.*fail.*got.*maybe/);
    assert.equal(JSON.stringify(wire.bodies()[1].tools), JSON.stringify(wire.bodies()[0].tools), "the tool list is byte-stable");
    assert.deepEqual(wire.violations(), []);
  });

  test(`${name}: an answer still invalid after its repairs errors the trial with output_invalid, the last errors in result.json and junit.xml`, async (t) => {
    const wire = await startWire(name);
    t.after(() => wire.close());
    const { root, out } = await suiteFor(t, wire);
    wire.reply({ tool: { verdict: "maybe", score: 3 } }, { text: "I think it passes." });
    const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv(wire.env) });
    assert.equal(run.code, 1, run.stderr);
    const [result] = await readRunResults(out);
    assert.equal(result!.status, "errored");
    assert.equal(result!.error?.code, "output_invalid");
    assert.match(result!.error!.message, /after 1 repair: the answer is not JSON/);
    assert.equal(result!.output, undefined, "no placeholder");
    assert.match(await readFile(join(out, "junit.xml"), "utf8"), /output_invalid[\s\S]*the answer is not JSON/);
    assert.equal(wire.bodies().length, 2, "no request beyond the repairs");

    wire.reply({ tool: { verdict: "pass", score: 1 } });
    const retried = await runCli(["run", "suite", "--out", out, "--retry-errored"], { cwd: root, env: cliEnv(wire.env) });
    assert.equal(retried.code, 0, retried.stderr);
    const [again] = await readRunResults(out);
    assert.deepEqual([again!.status, again!.output], ["passed", { verdict: "pass", score: 1 }]);
    assert.doesNotMatch(JSON.stringify(conversationOf(wire.bodies()[2])), /maybe/, "the retried trial starts afresh");
  });

  test(`${name}: a model that ignores the tool and answers in text: valid JSON (fenced) is accepted, invalid text is repaired with a message quoting the errors`, async (t) => {
    const wire = await startWire(name);
    t.after(() => wire.close());
    const { root, out } = await suiteFor(t, wire);
    wire.reply({ text: '{"verdict": "pass"}' }, { text: 'Here it is:\n```json\n{"verdict": "pass", "score": 2}\n```' });
    const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv(wire.env) });
    assert.equal(run.code, 0, run.stderr);
    const [result] = await readRunResults(out);
    assert.deepEqual([result!.status, result!.output], ["passed", { verdict: "pass", score: 2 }]);
    assert.match(lastUserText(wire.bodies()[1]), /not valid against the required output schema: `score` is required/);
    assert.deepEqual(wire.violations(), []);
  });
}

test("a bad output.schema stops the run before anything runs: exit 2 naming the task file, line and field", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "suite/schema.json": '{"type": "object", "properties": {"a": {"type": "colour"}}}',
    "suite/judge.yaml": "prompt: Judge.\nmodel: { provider: scripted, script: [{ say: '{}' }] }\noutput:\n  schema: schema.json\n",
  });
  const run = await runCli(["run", "suite", "--out", join(root, "run")], { cwd: root });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /suite\/judge\.yaml:4:\d+: output\.schema: it is not valid JSON Schema/);
  assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack trace");
});

test("a secret in the answer is redacted in output.json and result.json's output, like every file of the run", async (t) => {
  const secret = "tok-structured-7f3e9a1c";
  const root = await tempDir(t);
  await writeFiles(root, {
    "suite/leak.yaml": `prompt: Answer.
model: { provider: scripted, script: [{ call: final_answer, input: { note: "the token is ${secret}" } }] }
output: { schema: { type: object, properties: { note: { type: string } }, required: [note] } }
checks:
  - { name: reads-output, run: 'grep -q "redacted:DEPLOY_TOKEN" "$RHEMA_OUTPUT"' }
`,
  });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root, env: cliEnv({ DEPLOY_TOKEN: secret }) });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const [result] = await readRunResults(out);
  assert.deepEqual(result!.output, { note: "the token is [redacted:DEPLOY_TOKEN]" });
  const file = await readFile(join(out, "tasks", "suite", "leak", "default", "1", "output.json"), "utf8");
  assert.ok(!file.includes(secret) && file.includes("[redacted:DEPLOY_TOKEN]"), file);
});

test("repair turns share the task's step cap: a repair that would go past limits.maxSteps errors step_cap", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "suite/long.yaml": `prompt: Answer.
model:
  provider: scripted
  script:
    - say: not json
    - call: list_dir
      input: { path: . }
    - call: list_dir
      input: { path: . }
    - say: '{"n": 1}'
output: { schema: { type: object, properties: { n: { type: integer } }, required: [n] } }
limits: { maxSteps: 3 }
`,
  });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  const [result] = await readRunResults(out);
  assert.deepEqual([result!.status, result!.error?.code, result!.steps], ["errored", "step_cap", 3]);
});
