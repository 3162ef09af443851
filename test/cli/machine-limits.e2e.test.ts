/**
 * The machine running out of file handles (a real `ulimit -n`) while many tasks run at once:
 * the spawn of a setup command, a shell call or a check, the copy of a fixture (cp saying "Too
 * many open files"), a layer's mount, a checkpoint
 * write — whichever meets EMFILE, no task is recorded as failed or errored for it. The run exits
 * 3 naming the errno, the tasks that met it are left unfinished, and the same command with a
 * normal limit finishes them all.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { CLI, cliEnv, runCli, type CliResult } from "../support/cli.js";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";

const TASKS = 40;

/** A task that copies a fixture, runs a setup command, a shell call and a check: every kind of spawn and open. */
function busyTask(id: number): string {
  return `prompt: Tag it.
policy: ../policy.yaml
workspace:
  from: ../fixture
  setup: ["echo set > setup.txt"]
model:
  provider: scripted
  script:
    - say: step
      call: shell
      input: { command: "echo t${id} >> tags.txt && sleep 0.3" }
    - say: done
checks:
  - { name: tagged, run: "test -s tags.txt && test -s setup.txt" }
`;
}

/** The CLI under `ulimit -n LIMIT` (bash sets it, then becomes the CLI). */
function runLimited(limit: number, args: string[], cwd: string): Promise<CliResult> {
  const child = spawn("bash", ["-c", `ulimit -n ${limit} && exec "$@"`, "bash", process.execPath, CLI, ...args], {
    cwd, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

// Each limit with one way of making workspaces (as root, auto mounts layers; copies are what a user who is not root gets).
for (const [limit, layers] of [[100, "auto"], [60, "copy"]] as const) {
  test(`${TASKS} tasks at concurrency ${TASKS} under ulimit -n ${limit}, workspaces ${layers}: exit 3 naming EMFILE, no task failed or errored for it, and the same command with a normal limit finishes them all`, async (t) => {
    const root = await tempDir(t);
    const files: Record<string, string> = { "policy.yaml": OPEN_POLICY };
    for (let k = 0; k < 8; k++) files[`fixture/src/file-${k}.txt`] = `fixture ${k}\n`;
    for (let id = 0; id < TASKS; id++) files[`suite/t${String(id).padStart(2, "0")}.yaml`] = busyTask(id);
    await writeFiles(root, files);
    const args = ["run", "suite", "--out", "run", "--concurrency", String(TASKS), "--sandbox", "off", "--workspace-layers", layers];

    const limited = await runLimited(limit, args, root);
    assert.equal(limited.code, 3, limited.stderr);
    assert.match(limited.stderr, /^rhema: .*too many open files \(EMFILE\); raise the open-file limit \(ulimit -n\) or lower --concurrency, then run the same command to continue$/m);
    assert.doesNotMatch(limited.stderr, /\n\s+at |internal error/, "no stack trace, no bug");
    const kept = await readRunResults(join(root, "run"));
    assert.ok(kept.length < TASKS, `the limit was met (${kept.length} of ${TASKS} finished)`);
    assert.deepEqual(kept.filter((r) => r.status !== "passed").map((r) => [r.id, r.status, r.error?.message, r.checks.map((c) => c.outputTail)]), [],
      "no task recorded an outcome for the machine's limit");

    const again = await runCli(args, { cwd: root, env: cliEnv() });
    assert.equal(again.code, 0, again.stderr);
    const results = await readRunResults(join(root, "run"));
    assert.equal(results.length, TASKS);
    assert.deepEqual(results.filter((r) => r.status !== "passed").map((r) => r.id), []);
  });
}

test("loading many task files under a small ulimit -n is the machine's limit (exit 3, naming EMFILE), not a bad task file (exit 2), and writes nothing", async (t) => {
  const root = await tempDir(t);
  const files: Record<string, string> = { "policy.yaml": OPEN_POLICY };
  for (let k = 0; k < 8; k++) files[`fixture/src/file-${k}.txt`] = `fixture ${k}\n`;
  for (let id = 0; id < 80; id++) files[`suite/t${String(id).padStart(2, "0")}.yaml`] = busyTask(id);
  await writeFiles(root, files);
  for (const args of [["validate", "suite"], ["run", "suite", "--out", "run", "--sandbox", "off"]]) {
    const limited = await runLimited(32, args, root);
    assert.equal(limited.code, 3, `${args[0]}: ${limited.stderr}`);
    assert.match(limited.stderr, /the machine ran out of a resource \(open .*\.yaml\): too many open files \(EMFILE\)/);
    assert.doesNotMatch(limited.stderr, /\n\s+at /, "no stack trace");
  }
  const normal = await runCli(["validate", "suite"], { cwd: root, env: cliEnv() });
  assert.equal(normal.code, 0, normal.stderr);
});
