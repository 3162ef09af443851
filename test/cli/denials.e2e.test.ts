/**
 * Policy denials through the built CLI: result.json reports what the policy decided, carried as
 * data from the decision to the report — not what a denial-looking text reads as. A rule label
 * with ": " in it (a policy file so named) keeps its whole label and reason; a command whose own
 * output begins "denied by" is no denial; the policy's default is rule null.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { CheckpointStore } from "../../src/store/checkpoint-store.js";
import { RunDir } from "../../src/runner/run-dir/run-dir.js";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const TASK = `prompt: Try three commands.
policy: "../strict: ci.yaml"
model:
  provider: scripted
  script:
    - calls:
        - { call: shell, input: { command: "echo 'denied by rule 9 (x.yaml:1): my own words' && false" } }
        - { call: shell, input: { command: "rm -rf src" } }
        - { call: shell, input: { command: "curl example.com" } }
    - say: done
`;
const POLICY = `version: 1
default: deny
rules:
  - allow: { shell: ["echo *", "false"] }
  - deny: { shell: ["rm *"], reason: "no rm: ever" }
`;

test("result.json reports each denial as the policy decided it, and a command's own 'denied by' output as none", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "suite/t.yaml": TASK, "strict: ci.yaml": POLICY });
  const out = join(root, "run");
  const run = await runCli(["run", "suite", "--out", out], { cwd: root });
  assert.equal(run.code, 0, run.stderr);
  const [result] = await readRunResults(out);
  assert.deepEqual(result!.policyDenials, {
    count: 2,
    examples: [
      { tool: "shell", rule: "rule 2 (strict: ci.yaml:5)", reason: "no rm: ever" },
      { tool: "shell", rule: null, reason: result!.policyDenials.examples[1]!.reason },
    ],
  });
  assert.match(result!.policyDenials.examples[1]!.reason, /curl/);
  assert.match(run.stdout, /2 tool calls denied by policy/);
  const session = (await new CheckpointStore(new RunDir(out).trial({ suite: "suite", id: "t", variant: null, repeat: 1 }).dir).load())!;
  assert.deepEqual(Object.values(session.calls!).map((c) => c.state), ["error", "error", "error"], "the echo's own failure is an error too, without a denial");
});
