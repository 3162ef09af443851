/**
 * A task with `output:` killed (SIGKILL) and run again with the same command, through the built
 * CLI: killed inside the shell call before its answer, while the `final_answer` call streams, and
 * inside the check that reads `$RHEMA_OUTPUT`. Each time the re-run ends on the same accepted
 * answer (result.json, output.json, the final answer), the shell call's side effect made once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { runCli, startCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists, waitFor } from "../support/wait.js";

const ANSWER = { verdict: "pass", score: 7 };
const TASK = `prompt: Tag the workspace, then judge it.
policy: ../policy.yaml
output:
  schema: { type: object, properties: { verdict: { enum: [pass, fail] }, score: { type: integer } }, required: [verdict, score], additionalProperties: false }
model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo tagged >> tags.txt && sleep 2" }
    - call: final_answer
      input: ${JSON.stringify(ANSWER)}
      chunkDelayMs: 400
checks:
  - { name: reads the answer, run: 'touch check-started && sleep 2 && grep -q "\\"score\\": 7" "$RHEMA_OUTPUT"' }
`;

const TRIAL = join("tasks", "suite", "judge", "default", "1");
const lines = async (path: string) => (await readFile(path, "utf8").catch(() => "")).split("\n").filter(Boolean);
const requests = async (out: string) => (await lines(join(out, TRIAL, "events.jsonl"))).filter((l) => l.includes('"type":"request"')).length;

/** Where the kill lands: each a moment the run can be found at from outside. */
const MOMENTS: ReadonlyArray<{ name: string; reached: (out: string) => Promise<boolean> }> = [
  { name: "inside the shell call", reached: async (out) => (await lines(join(out, TRIAL, "workspace", "tags.txt"))).length === 1 },
  { name: "while the final_answer call streams", reached: async (out) => (await requests(out)) === 2 },
  { name: "inside the check that reads $RHEMA_OUTPUT", reached: (out) => exists(join(out, TRIAL, "workspace", "check-started")) },
];

for (const moment of MOMENTS) {
  test(`an output: task SIGKILLed ${moment.name} ends on the same accepted answer when run again, its shell call made once`, async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/judge.yaml": TASK });
    const out = join(root, "run");
    const args = ["run", "suite", "--out", out];
    const killed = startCli(args, { cwd: root });
    await waitFor(() => moment.reached(out), 60_000);
    killed.child.kill("SIGKILL");
    await killed.done;
    assert.equal(await exists(join(out, TRIAL, "result.json")), false, "killed before its result");

    const again = await runCli(args, { cwd: root });
    assert.equal(again.code, 0, again.stderr + again.stdout);
    const [result] = await readRunResults(out);
    assert.deepEqual([result!.status, result!.resumed, result!.output, result!.checks.map((c) => c.passed)], ["passed", 1, ANSWER, [true]]);
    assert.deepEqual(JSON.parse(await readFile(join(out, TRIAL, "output.json"), "utf8")), ANSWER);
    assert.deepEqual(JSON.parse(result!.finalAnswer), ANSWER);
    assert.deepEqual(await lines(join(out, TRIAL, "workspace", "tags.txt")), ["tagged"], "the shell call's side effect once");
  });
}
