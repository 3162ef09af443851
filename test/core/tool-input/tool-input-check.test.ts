/**
 * Tool input checked once, before `plan()` (src/core/tool-input-check.ts): each error shape is
 * asserted as the exact result text the model reads, through a real turn of the agent with the
 * built-in tools on a temp folder; a schema ajv cannot compile fails construction.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CodingAgent, type CodingAgentConfig } from "../../../src/agent.js";
import { CodingAgentError } from "../../../src/core/errors.js";
import { nullSink } from "../../../src/core/events.js";
import type { ToolResultBlock } from "../../../src/core/messages.js";
import type { Tool } from "../../../src/core/tool.js";
import { SchemaCompiler, compileInputChecks, withoutAbsentNulls } from "../../../src/core/tool-input/tool-input-check.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { builtinTools } from "../../../src/tools/index.js";
import { tempDir } from "../../support/temp-dir.js";
import { RecordingApproval } from "../../support/test-tools.js";

type TestContext = Parameters<typeof tempDir>[0];

/** One turn that makes one call; the result the model read, and what approval was asked. */
async function callOnce(t: TestContext, name: string, input: unknown, extra: Partial<CodingAgentConfig> = {}) {
  const workspace = await tempDir(t);
  await writeFile(join(workspace, "a.txt"), "one\ntwo\n");
  const agent = new CodingAgent(new ScriptedProvider([{ call: name, input }, { say: "done" }]), { workspace, ...extra });
  const approval = new RecordingApproval();
  await agent.turn("go", nullSink, approval);
  const results = agent.session.messages.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));
  assert.equal(results.length, 1);
  return { workspace, result: results[0]!, approvals: approval.requests };
}

/**
 * `deploy {env, replicas?}`: writes deployed.txt, so "it never ran" is checked on disk; its plan
 * hands the input it saw to the approval as the command.
 */
function deployTool(inputSchema: Record<string, unknown>): Tool {
  return {
    spec: { name: "deploy", description: "Deploys.", inputSchema },
    effect: "exec",
    async plan(input) {
      return { paths: [], command: JSON.stringify(input) };
    },
    async run(input, ctx) {
      await writeFile(join(ctx.workspace, "deployed.txt"), JSON.stringify(input));
      return { content: "deployed" };
    },
  };
}

const DEPLOY_SCHEMA = {
  type: "object",
  properties: {
    env: { enum: ["staging", "prod"] },
    replicas: { type: "integer", minimum: 1 },
    targets: { type: "array", items: { type: "object", properties: { host: { type: "string" } }, required: ["host"] } },
  },
  required: ["env"],
  additionalProperties: false,
};

const invalid = (content: string) => ({ type: "tool_result", callId: "call_0_0", content, isError: true });

test("a field of the wrong type: the model reads what was expected and what it sent", async (t) => {
  const { result, approvals } = await callOnce(t, "read_file", { path: 42 });
  assert.deepEqual(result, invalid("Invalid input for `read_file`: `path` must be a string (got 42)"));
  assert.deepEqual(approvals, [], "input that does not match is refused before plan and approval");
});

test("a missing required field is named", async (t) => {
  const { result, workspace } = await callOnce(t, "write_file", { path: "b.txt" });
  assert.deepEqual(result, invalid("Invalid input for `write_file`: `content` is required"));
  await assert.rejects(stat(join(workspace, "b.txt")), { code: "ENOENT" });
});

test("an unknown field is named, with the field it most likely meant", async (t) => {
  const { result } = await callOnce(t, "read_file", { path: 42, pth: "a.txt" });
  assert.deepEqual(result, invalid("Invalid input for `read_file`: `path` must be a string (got 42); unknown field `pth` (did you mean `path`?)"));
  const far = await callOnce(t, "edit_file", { path: "a.txt", old: "one", new: "1", replace_all: true, colour: "red" });
  assert.deepEqual(far.result, invalid(
    "Invalid input for `edit_file`: unknown field `replace_all` (did you mean `replaceAll`?); " +
      "unknown field `colour` (fields: path, old, new, replaceAll)",
  ));
});

test("null for an optional field counts as absent; for a required one it is a wrong type", async (t) => {
  const { result, approvals } = await callOnce(t, "read_file", { path: "a.txt", offset: null, limit: null });
  assert.deepEqual(result, { type: "tool_result", callId: "call_0_0", content: "1\tone\n2\ttwo" });
  assert.deepEqual(approvals[0]!.input, { path: "a.txt" }, "the tool and the approval see the field left out");
  const required = await callOnce(t, "read_file", { path: null, limit: null });
  assert.deepEqual(required.result, invalid("Invalid input for `read_file`: `path` must be a string (got null)"));
  const none = await callOnce(t, "list_dir", null);
  assert.equal(none.result.isError, undefined, "no input at all is an empty object");
});

test("a user tool's own schema: enum, range and nested fields, and the tool never runs", async (t) => {
  const input = { env: "qa", replicas: 0, targets: [{ host: "a" }, { hots: "b" }] };
  const { result, workspace } = await callOnce(t, "deploy", input, { tools: [deployTool(DEPLOY_SCHEMA)] });
  assert.deepEqual(result, invalid(
    'Invalid input for `deploy`: `env` must be one of "staging", "prod" (got "qa"); ' +
      "`replicas` must be an integer from 1 and up (got 0); `targets[1].host` is required",
  ));
  await assert.rejects(stat(join(workspace, "deployed.txt")), { code: "ENOENT" });
  const ok = await callOnce(t, "deploy", { env: "prod", replicas: null }, { tools: [deployTool(DEPLOY_SCHEMA)] });
  assert.deepEqual(ok.result, { type: "tool_result", callId: "call_0_0", content: "deployed" });
  assert.equal(ok.approvals[0]!.command, '{"env":"prod"}', "plan saw the null field left out");
  assert.equal(await readFile(join(ok.workspace, "deployed.txt"), "utf8"), '{"env":"prod"}', "and so did run");
});

test("a draft-07 schema is read as draft-07, and a schema that accepts null keeps it", async (t) => {
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { env: { type: ["string", "null"] }, tags: { type: "array", items: [{ type: "string" }] } },
    additionalProperties: false,
  };
  const ok = await callOnce(t, "deploy", { env: null }, { tools: [deployTool(schema)] });
  assert.equal(await readFile(join(ok.workspace, "deployed.txt"), "utf8"), '{"env":null}');
  const bad = await callOnce(t, "deploy", { env: 3, tags: [4] }, { tools: [deployTool(schema)] });
  assert.deepEqual(bad.result, invalid("Invalid input for `deploy`: `env` must be a string or null (got 3); `tags[0]` must be a string (got 4)"));
});

test("a schema ajv cannot compile fails construction with invalid_config, naming the tool", async (t) => {
  const workspace = await tempDir(t);
  const construct = (inputSchema: unknown) => () =>
    new CodingAgent(new ScriptedProvider([]), { workspace, tools: [deployTool(inputSchema as Record<string, unknown>)] });
  const cases: Array<[unknown, string]> = [
    [{ type: "object", properties: { env: { type: "strin" } } },
      "the tool `deploy` has an inputSchema that cannot be used: it is not valid JSON Schema: " +
        '`properties.env.type` must be one of "array", "boolean", "integer", "null", "number", "object", "string" (got "strin")'],
    [{ type: "object", properties: { env: { $ref: "#/$defs/nope" } } },
      "the tool `deploy` has an inputSchema that cannot be used: can't resolve reference #/$defs/nope from id #"],
    [{ type: "object", properties: { env: { type: "string", pattern: "(" } } },
      "the tool `deploy` has an inputSchema that cannot be used: Invalid regular expression: /(/u: Unterminated group"],
    [{ $schema: "http://json-schema.org/draft-04/schema#", type: "object" },
      'the tool `deploy` has an inputSchema that cannot be used: its $schema "http://json-schema.org/draft-04/schema#" ' +
        "is not one rhema reads (JSON Schema 2020-12 or draft-07)"],
    [undefined, "the tool `deploy` has an inputSchema that cannot be used: expected a JSON Schema object, got undefined"],
  ];
  for (const [schema, message] of cases) {
    assert.throws(construct(schema), (err: unknown) => {
      assert.ok(err instanceof CodingAgentError, `expected a CodingAgentError, got ${String(err)}`);
      assert.equal(err.code, "invalid_config");
      assert.equal(err.message, message);
      return true;
    });
  }
});

test("every built-in tool's schema is valid JSON Schema and compiles", () => {
  const specs = builtinTools().map((tool) => tool.spec);
  const checks = compileInputChecks(specs, { compiler: new SchemaCompiler(), metaCheck: () => true });
  for (const spec of specs) assert.equal(checks.check(spec.name, { nope: 1 }).ok, false, `${spec.name} refuses an unknown field`);
});

test("each distinct schema is compiled once, whichever tool set holds it", () => {
  const compiler = new SchemaCompiler();
  const spec = (name: string) => ({ name, description: "", inputSchema: { type: "object", properties: { a: { type: "string" } } } });
  const first = compiler.compile(spec("x").inputSchema);
  assert.equal(compiler.compile(spec("y").inputSchema), first, "the same schema text gives the same validator");
  const checks = compileInputChecks([spec("x"), spec("y")], { compiler });
  assert.deepEqual(checks.check("y", { a: 1 }), { ok: false, message: "Invalid input for `y`: `a` must be a string (got 1)" });
});

test("withoutAbsentNulls drops null optional fields only, and leaves input it need not touch as it is", () => {
  const schema = { required: ["path"] };
  const input = { path: null, offset: null, limit: 3 };
  assert.deepEqual(withoutAbsentNulls(input, schema), { path: null, limit: 3 });
  const clean = { path: "a" };
  assert.equal(withoutAbsentNulls(clean, schema), clean);
  assert.deepEqual(withoutAbsentNulls(undefined, schema), {});
  assert.equal(withoutAbsentNulls(42, schema), 42);
});
