/** Task policies as the runner resolves them: inline problems located at the name; permissive defaults said out loud. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadTaskFile } from "../../../src/runner/tasks/task-file.js";
import { resolveTaskApprovals } from "../../../src/runner/tasks/task-policy.js";
import { PolicyFileError } from "../../../src/policy/file/policy-file.js";
import { tempDir } from "../../support/temp-dir.js";

const TASK_HEAD = "prompt: hi\nmodel: { provider: scripted, script: [{ say: ok }] }\n";

test("a misspelled tool in an inline policy is an error at the name, with did you mean", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "task.yaml");
  await writeFile(file, `${TASK_HEAD}policy:\n  default: deny\n  rules:\n    - allow: { tools: [read_file, edit_fiel] }\n`);
  const task = await loadTaskFile(file);
  await assert.rejects(resolveTaskApprovals([task], { policyFlag: undefined, cwd: dir }), (err: unknown) => {
    assert.ok(err instanceof PolicyFileError);
    assert.equal(err.message, `${file}:6:35: policy: rules.0.allow.tools.1: \`edit_fiel\` is not a built-in tool: did you mean \`edit_file\`?`);
    return true;
  });
});

test("a default-allow policy gets the warning that a deny list cannot hold code-running programs", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "task.yaml");
  await writeFile(file, `${TASK_HEAD}policy:\n  default: allow\n  rules:\n    - deny: { shell: ["git push *"] }\n`);
  const { notes } = await resolveTaskApprovals([await loadTaskFile(file)], { policyFlag: undefined, cwd: dir });
  assert.equal(notes.length, 1);
  assert.match(notes[0]!, /^warning: default \(task\.yaml:4\): `default: allow` makes this policy a deny list, and a deny list cannot contain programs that run code given as data \(`python3 -c`/);
});

test("an allowlist policy gets no permissive warning", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "task.yaml");
  await writeFile(file, `${TASK_HEAD}policy:\n  default: deny\n  rules:\n    - allow: { shell: ["npm test"] }\n`);
  const { notes } = await resolveTaskApprovals([await loadTaskFile(file)], { policyFlag: undefined, cwd: dir });
  assert.deepEqual(notes, []);
});

test("a rule naming an MCP server's tools warns only when no task using the policy declares that server", async (t) => {
  const dir = await tempDir(t);
  const policy = `policy:\n  default: deny\n  rules:\n    - allow: { tools: ["mcp__files__*", mcp__other__read] }\n`;
  const declaring = join(dir, "declaring.yaml");
  await writeFile(declaring, `${TASK_HEAD}${policy}mcp:\n  files: { command: node }\n`);
  const { notes } = await resolveTaskApprovals([await loadTaskFile(declaring)], { policyFlag: undefined, cwd: dir });
  assert.deepEqual(notes, [`${declaring}:6:41: warning: \`mcp__other__read\` names the tools of the MCP server \`other\`, which no task using this policy declares under mcp:`]);
});
