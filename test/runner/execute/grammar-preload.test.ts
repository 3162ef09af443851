/**
 * The bash grammar is compiled at the start of a run whose policies may let a command run, so
 * the first shell decision does not wait for it — and not at all when no policy can. Its own
 * file: the parser is module state of this process, and the order of the two tests matters.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runRequest, type RunRequest } from "../../../src/runner/execute/run-request.js";
import { bashParserState, loadBashParser } from "../../../src/policy/shell/grammar/bash-parser.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";

const TASK = `prompt: Say done.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - say: done
`;

async function runSuite(root: string, policy: string): Promise<void> {
  await writeFiles(root, { "policy.yaml": policy, "suite/a.yaml": TASK });
  const request: RunRequest = {
    paths: ["suite"], out: "run", concurrency: 1, filter: [], tag: [], restartChanged: false, add: false, restart: false,
    retryErrored: false, reportSkipped: false, allowEnv: [],
  };
  const outcome = await runRequest(request, {
    cwd: root, env: {}, pid: process.pid, interrupt: new AbortController().signal, onNote: () => {}, onProgress: () => {},
  });
  assert.deepEqual(outcome.results.map((r) => r.status), ["passed"]);
}

test("a run whose policies allow no command never loads the grammar", async (t) => {
  await runSuite(join(await tempDir(t), "s"), "version: 1\ndefault: deny\nrules:\n  - allow: { tools: [read_file] }\n");
  assert.equal(bashParserState(), "idle");
});

test("a run whose policy allows a command loads the grammar up front, though no task calls the shell", async (t) => {
  await runSuite(join(await tempDir(t), "s"), 'version: 1\ndefault: deny\nrules:\n  - allow: { shell: ["npm test"] }\n');
  assert.notEqual(bashParserState(), "idle");
  await loadBashParser();
  assert.equal(bashParserState(), "ready");
});
