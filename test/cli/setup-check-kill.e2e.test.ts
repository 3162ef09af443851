/**
 * Setup and checks resume exactly (docs/design.md §6): the CLI runs a task whose two setup commands and
 * one check each append a line to a file outside the workspace when they finish, and is
 * SIGKILLed inside each of them in turn; after the resume every command's line appears once —
 * a finished command never runs again, the interrupted one runs again (and the output says it
 * may have partly run), and the run passes.
 *
 * The killed command itself is stopped by the test (its process group, recorded by the command
 * as it starts): stopping what a killed rhema leaves running is the supervisor's job
 * (src/process), proven by its own tests; here it is the resume that is under test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { killInCommand } from "../support/kill-in-command.js";

const COMMANDS = ["setup-1", "setup-2", "check-1"] as const;

function task(root: string): string {
  // Each command records its process group when it starts, and appends its line when it finishes.
  const command = (name: string) => `"echo $$ > ${root}/${name}.pid; sleep 1; echo ${name} >> ${root}/log.txt"`;
  return `prompt: Say done.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - say: done
workspace:
  setup:
    - ${command("setup-1")}
    - ${command("setup-2")}
checks:
  - { name: check-1, run: ${command("check-1")} }
`;
}

for (const target of COMMANDS) {
  test(`a SIGKILL inside ${target}: after the resume every finished command's line appears once`, async (t) => {
    const root = await tempDir(t);
    await writeFiles(root, { "policy.yaml": OPEN_POLICY, "suite/job.yaml": task(root) });
    const out = join(root, "run");
    // Unsandboxed: the commands write outside the workspace, and the test stops their process group from outside.
    const args = ["run", "suite", "--out", out, "--sandbox", "off"];
    await killInCommand(args, root, join(root, `${target}.pid`));
    const state = JSON.parse(await readFile(join(out, "tasks/suite/job/default/1/task-state.json"), "utf8"));
    assert.ok(state, "the task state parses after the kill");

    const resumed = await runCli(args, { cwd: root });
    assert.equal(resumed.code, 0, resumed.stderr);
    const lines = (await readFile(join(root, "log.txt"), "utf8")).trim().split("\n");
    assert.deepEqual(lines, [...COMMANDS], "each command's line exactly once, in order");
    const said = target === "check-1" ? /check 1\/1 "check-1" \(interrupted by a kill: running it again\)/
      : new RegExp(`setup ${target.slice(-1)}/2: .*\\(interrupted by a kill; it may have partly run: running it again\\)`);
    assert.match(resumed.stderr, said);
    const entries = await readdir(join(out, "tasks/suite/job"));
    assert.deepEqual(entries.filter((e) => /\.\d+$/.test(e)), [], "no temp file is left");
  });
}
