/**
 * `rhema policy check` as a module (src/cli/policy-command.ts): prints the decision, the rule
 * with its file:line and the reason; `--json` prints one object whatever happens; exit 0 allow,
 * 1 deny, 2 for a bad policy, an unknown tool, bad input JSON, input the tool's schema refuses
 * or a missing workspace.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { policyCheck } from "../../src/cli/policy-command.js";
import { tempDir } from "../support/temp-dir.js";
import { DESIGN_POLICY_YAML } from "../support/design-policy.js";

const POLICY = DESIGN_POLICY_YAML;

async function setup(t: Parameters<typeof tempDir>[0]): Promise<{ dir: string; ws: string }> {
  const dir = await tempDir(t);
  const ws = join(dir, "ws");
  await mkdir(join(ws, "src"), { recursive: true });
  await writeFile(join(dir, "policy.yaml"), POLICY);
  return { dir, ws };
}

test("a denied shell command prints deny, the rule with its line, and the reason", async (t) => {
  const { dir, ws } = await setup(t);
  const result = await policyCheck({ policy: "policy.yaml", tool: "shell", input: '{"command":"git status && git push origin main"}', workspace: ws, cwd: dir });
  assert.deepEqual(result, {
    exitCode: 1, stderr: "",
    stdout: "decision: deny\nrule: rule 4 (policy.yaml:7)\nreason: no pushes from CI\n",
  });
});

test("an allowed write prints allow and the rule that allowed it", async (t) => {
  const { dir, ws } = await setup(t);
  const result = await policyCheck({ policy: join(dir, "policy.yaml"), tool: "write_file", input: '{"path":"src/a.ts","content":"x"}', workspace: ws, cwd: "/" });
  assert.deepEqual(result, {
    exitCode: 0, stderr: "",
    stdout: "decision: allow\nrule: rule 2 (policy.yaml:5)\nreason: write_file on `src/a.ts` is allowed\n",
  });
});

test("--json prints exactly one object {decision, rule, reason}", async (t) => {
  const { dir, ws } = await setup(t);
  const denied = await policyCheck({ policy: "policy.yaml", tool: "shell", input: '{"command":"echo x >> .github/ci.yml"}', workspace: ws, json: true, cwd: dir });
  assert.equal(denied.exitCode, 1);
  assert.equal(denied.stdout.trim().split("\n").length, 1);
  assert.deepEqual(JSON.parse(denied.stdout), {
    decision: "deny", rule: "rule 5 (policy.yaml:8)", reason: "`>> .github/ci.yml` writes `.github/ci.yml`, which matches `.github/**`",
  });
  const allowed = await policyCheck({ policy: "policy.yaml", tool: "read_file", input: '{"path":"src/a.ts"}', workspace: ws, json: true, cwd: dir });
  assert.deepEqual(JSON.parse(allowed.stdout), { decision: "allow", rule: "rule 1 (policy.yaml:4)", reason: "read_file on `src/a.ts` is allowed" });
});

test("the workspace defaults to the folder the command runs in, and presets work by name", async (t) => {
  const { ws } = await setup(t);
  const result = await policyCheck({ policy: "preset:ci", tool: "shell", input: '{"command":"npm test"}', json: true, cwd: ws });
  assert.deepEqual(JSON.parse(result.stdout), { decision: "allow", rule: "rule 8 (preset:ci:12)", reason: "`npm test` is allowed" });
});

test("a bad policy exits 2 with the file, line and column of the problem", async (t) => {
  const { dir, ws } = await setup(t);
  await writeFile(join(dir, "bad.yaml"), "version: 1\ndefault: deny\nrules:\n  - allow: { tools: shell }\n");
  const result = await policyCheck({ policy: "bad.yaml", tool: "shell", input: '{"command":"ls"}', workspace: ws, cwd: dir });
  assert.deepEqual(result, {
    exitCode: 2, stdout: "",
    stderr: `rhema: ${join(dir, "bad.yaml")}:4:21: rules.0.allow.tools: Invalid input: expected array, received string\n`,
  });
  const missing = await policyCheck({ policy: "missing.yaml", tool: "shell", input: "{}", workspace: ws, cwd: dir });
  assert.equal(missing.exitCode, 2);
  assert.match(missing.stderr, /missing\.yaml: cannot read the policy file/);
});

test("bad input JSON, a non-object input or a missing workspace exit 2", async (t) => {
  const { dir, ws } = await setup(t);
  const badJson = await policyCheck({ policy: "policy.yaml", tool: "shell", input: "{command: ls}", workspace: ws, cwd: dir });
  assert.equal(badJson.exitCode, 2);
  assert.match(badJson.stderr, /^rhema: --input is not valid JSON: /);
  const notObject = await policyCheck({ policy: "policy.yaml", tool: "shell", input: '"ls"', workspace: ws, cwd: dir });
  assert.deepEqual(notObject, { exitCode: 2, stdout: "", stderr: 'rhema: --input must be a JSON object (the tool call\'s input), got "ls"\n' });
  const noWorkspace = await policyCheck({ policy: "policy.yaml", tool: "shell", input: '{"command":"ls"}', workspace: join(dir, "nope"), cwd: dir });
  assert.equal(noWorkspace.exitCode, 2);
  assert.match(noWorkspace.stderr, /^rhema: the workspace cannot be used: /);
  const badField = await policyCheck({ policy: "policy.yaml", tool: "read_file", input: '{"path":5}', workspace: ws, cwd: dir });
  assert.deepEqual(badField, {
    exitCode: 2, stdout: "",
    stderr: "rhema: read_file rejects this input before any policy sees it: Invalid input for `read_file`: `path` must be a string (got 5)\n",
  });
});

test("warnings go to stderr while the decision still prints, including the default-allow shell warning", async (t) => {
  const { dir, ws } = await setup(t);
  await writeFile(join(dir, "open.yaml"), "version: 1\ndefault: allow\nrules: []\n");
  const result = await policyCheck({ policy: "open.yaml", tool: "shell", input: '{"command":"ls"}', workspace: ws, cwd: dir });
  assert.equal(result.exitCode, 0);
  assert.equal(result.stdout, "decision: allow\nrule: default (open.yaml)\nreason: `ls` is allowed by default\n");
  const lines = result.stderr.trimEnd().split("\n");
  assert.deepEqual(lines.slice(0, 1), [`${join(dir, "open.yaml")}:2:10: warning: \`default: allow\` with no rules allows every tool call, shell commands included`]);
  assert.match(lines[1] ?? "", /^warning: default \(open\.yaml\): `default: allow` makes this policy a deny list, and a deny list cannot contain programs that run code given as data \(`python3 -c`/);
  assert.equal(lines.length, 2);
});

test("deny exits 1 and allow exits 0, so a script can branch on the decision", async (t) => {
  const { dir, ws } = await setup(t);
  const denied = await policyCheck({ policy: "policy.yaml", tool: "shell", input: '{"command":"git push origin main"}', workspace: ws, cwd: dir });
  const allowed = await policyCheck({ policy: "policy.yaml", tool: "shell", input: '{"command":"npm test"}', workspace: ws, cwd: dir });
  assert.deepEqual([denied.exitCode, allowed.exitCode], [1, 0]);
});

test("with --json a path outside the workspace is one JSON deny naming the workspace boundary", async (t) => {
  const { dir, ws } = await setup(t);
  const result = await policyCheck({ policy: "policy.yaml", tool: "write_file", input: '{"path":"../escape.txt","content":"x"}', workspace: ws, json: true, cwd: dir });
  assert.equal(result.exitCode, 1);
  assert.equal(result.stdout.trim().split("\n").length, 1);
  const output = JSON.parse(result.stdout) as { decision: string; rule: string; reason: string };
  assert.deepEqual({ decision: output.decision, rule: output.rule }, { decision: "deny", rule: "workspace boundary" });
  assert.match(output.reason, /Path "\.\.\/escape\.txt" is outside the workspace/);
});

test("with --json invalid input is one JSON object {error} and exit 2", async (t) => {
  const { dir, ws } = await setup(t);
  const result = await policyCheck({ policy: "policy.yaml", tool: "read_file", input: "{nope", workspace: ws, json: true, cwd: dir });
  assert.equal(result.exitCode, 2);
  assert.equal(result.stdout.trim().split("\n").length, 1);
  assert.match((JSON.parse(result.stdout) as { error: string }).error, /^--input is not valid JSON: /);
});

test("an unknown tool name is exit 2 with a did-you-mean and the list of tools", async (t) => {
  const { dir, ws } = await setup(t);
  const result = await policyCheck({ policy: "policy.yaml", tool: "shel", input: '{"command":"ls"}', workspace: ws, cwd: dir });
  assert.deepEqual(result, {
    exitCode: 2, stdout: "",
    stderr: "rhema: --tool: `shel` is not a built-in tool: did you mean `shell`?; the tools are read_file, write_file, edit_file, list_dir, glob, grep, shell and an MCP server's mcp__<server>__<tool>\n",
  });
});

test("an MCP tool's call is decided like the run decides it: exec, no paths, a tool-name pattern matching it", async (t) => {
  const { dir, ws } = await setup(t);
  await writeFile(join(dir, "mcp.yaml"), `version: 1\ndefault: deny\nrules:\n  - allow: { tools: ["mcp__github__*"] }\n  - deny: { tools: [mcp__github__delete_repo], reason: never }\n`);
  const check = (tool: string) => policyCheck({ policy: "mcp.yaml", tool, input: "{}", workspace: ws, cwd: dir });
  assert.deepEqual(await check("mcp__github__get_issue"), { exitCode: 0, stderr: "", stdout: "decision: allow\nrule: rule 1 (mcp.yaml:4)\nreason: mcp__github__get_issue is allowed\n" });
  assert.deepEqual(await check("mcp__github__delete_repo"), { exitCode: 1, stderr: "", stdout: "decision: deny\nrule: rule 2 (mcp.yaml:5)\nreason: never\n" });
  assert.deepEqual(await check("mcp__gitlab__get_issue"), { exitCode: 1, stderr: "", stdout: "decision: deny\nrule: default (mcp.yaml)\nreason: no rule allows mcp__gitlab__get_issue, and the default is deny\n" });
  assert.equal((await check("mcp__github")).exitCode, 2, "not an MCP tool's name");
});
