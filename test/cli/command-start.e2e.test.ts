/**
 * A run never ends silently green (issue 19, item 3), through the built CLI:
 *
 * - A command whose sandbox fails to start: real bwrap, exiting at once with its own message (a
 *   `bwrap` on rhema's PATH runs /usr/bin/bwrap with a bind of a missing source put first, for the
 *   commands that carry a marker; the probe and every other command get the real one unchanged).
 *   Setup, shell tool call or check, alone or beside other tasks (the shell tool's call awaits its
 *   checkpoint commit while bwrap dies: the exit once missed there, and the run exited 0): exit 1, the task `errored` (`sandbox_failed`)
 *   quoting bwrap, the other tasks' outcomes intact, the reports written and the lock released.
 * - The `beforeExit` net itself: the CLI run from its modules with the command runner replaced
 *   (a module hook) by one whose promise never settles and holds nothing in the event loop — the
 *   shape of the bug that exited 0: exit 1, the stuck task `errored` (`internal`), the others
 *   finished, the reports written and the lock released.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { STALLED_MESSAGE } from "../../src/runner/execute/stall-net.js";
import type { TaskResult } from "../../src/runner/run-dir/task-result.js";
import { cliEnv, runCli, type CliResult } from "../support/cli.js";
import { compiled } from "../support/paths.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { exists } from "../support/wait.js";
import { hostDir, sandboxSkip } from "../process/sandbox-fixture.js";
import { findOnPath, DEFAULT_SEARCH_PATH } from "../../src/process/sandbox-probe.js";

const skip = await sandboxSkip();
const MARKER = "rhema-fail-to-start";
const MISSING = "/nonexistent-rhema-bind-source";

/** A folder holding a `bwrap` that makes the real one fail at once for commands carrying MARKER. */
async function failingBwrapDir(root: string): Promise<string> {
  const real = await findOnPath("bwrap", DEFAULT_SEARCH_PATH);
  assert.ok(real, "bwrap is installed");
  const dir = join(root, "bin");
  await writeFiles(root, {
    "bin/bwrap": `#!/bin/sh\ncase "$*" in *${MARKER}*) exec ${real} --bind ${MISSING} /mnt "$@";; esac\nexec ${real} "$@"\n`,
  });
  await chmod(join(dir, "bwrap"), 0o755);
  return dir;
}

function task(opts: { setup?: string; check?: string; shell?: string }): string {
  const call = opts.shell ? `    - say: step\n      call: shell\n      input: { command: ${JSON.stringify(opts.shell)} }\n` : "";
  return `prompt: Say done.
policy: ../policy.yaml
model:
  provider: scripted
  script:
${call}    - say: done
${opts.setup ? `workspace:\n  setup:\n    - ${JSON.stringify(opts.setup)}\n` : ""}checks:
  - { name: ok, run: ${JSON.stringify(opts.check ?? "true")} }
`;
}

async function resultsById(out: string): Promise<Map<string, TaskResult>> {
  return new Map((await readRunResults(out)).map((r) => [r.id, r]));
}

/** Reports on disk, naming the task; the lock gone, and a second run of the same command not refused as locked. */
async function assertReportsAndLock(out: string, erroredId: string, rerun: () => Promise<CliResult>): Promise<void> {
  for (const report of ["junit.xml", "stats.json", "summary.md"]) assert.ok(await exists(join(out, report)), `${report} written`);
  assert.match(await readFile(join(out, "junit.xml"), "utf8"), new RegExp(`name="${erroredId}"`));
  assert.equal(await exists(join(out, "rhema.lock")), false, "the lock is released");
  const again = await rerun();
  assert.equal(again.code, 1, again.stderr);
  assert.doesNotMatch(again.stderr, /lock/i);
}

for (const where of ["setup", "shell", "check"] as const) {
  for (const others of [0, 2]) {
    test(`a ${where} whose sandbox fails to start${others ? ", beside other tasks" : ""}: exit 1, the task errored with bwrap's message, reports written, lock released`, { skip }, async (t) => {
      const root = await hostDir(t);
      const bin = await failingBwrapDir(root);
      const failing = `echo ${MARKER}`;
      const files: Record<string, string> = {
        "policy.yaml": OPEN_POLICY,
        "suite/broken.yaml": task({ [where]: failing }),
      };
      for (let k = 0; k < others; k++) files[`suite/fine-${k}.yaml`] = task({ setup: "echo set up", check: "true" });
      await writeFiles(root, files);
      const out = join(root, "run");
      const env = cliEnv({ PATH: `${bin}:${process.env.PATH ?? DEFAULT_SEARCH_PATH}` });
      const args = ["run", "suite", "--out", out, "--sandbox", "bwrap", "--concurrency", "3"];
      const ran = await runCli(args, { cwd: root, env });
      assert.equal(ran.code, 1, `exit 1\n${ran.stdout}\n${ran.stderr}`);
      const results = await resultsById(out);
      assert.equal(results.size, 1 + others, "every task has a result");
      const broken = results.get("broken")!;
      assert.equal(broken.status, "errored");
      assert.equal(broken.error?.code, "sandbox_failed");
      assert.match(broken.error?.message ?? "", /the sandbox \(bwrap\) did not start the command: it exited with code 1/);
      assert.match(broken.error?.message ?? "", new RegExp(`bwrap: Can't find source path ${MISSING}`));
      for (let k = 0; k < others; k++) assert.equal(results.get(`fine-${k}`)?.status, "passed", `fine-${k} passed`);
      await assertReportsAndLock(out, "broken", () => runCli(args, { cwd: root, env }));
    });
  }
}

/** A module hook: the command runner's process groups never end, and hold nothing in the event loop. */
const STUCK_HOOK = `
export async function load(url, context, next) {
  if (url.endsWith("/src/process/process-group.js")) {
    return { format: "module", shortCircuit: true, source:
      "export const KILL_GRACE_MS = 2000; export class CommandStartError extends Error {}\\n" +
      "export function runProcessGroup() { return new Promise(() => {}); }\\n" };
  }
  return next(url, context);
}
`;

for (const [others, concurrency] of [[0, 1], [2, 3], [2, 1]] as const) {
  test(`the beforeExit net: a task stuck on a promise that never settles${others ? `, beside other tasks (concurrency ${concurrency})` : ""} ends errored (internal), exit 1, reports written, lock released`, async (t) => {
    const root = await hostDir(t);
    // "a-stuck" comes first: at concurrency 1 the others start only after the net freed the queue.
    const files: Record<string, string> = { "policy.yaml": OPEN_POLICY, "suite/a-stuck.yaml": task({ setup: "echo never ends" }) };
    // The others run no command (a check would be stuck too): a scripted turn, and nothing to check.
    for (let k = 0; k < others; k++) {
      files[`suite/fine-${k}.yaml`] = "prompt: Say done.\npolicy: ../policy.yaml\nmodel:\n  provider: scripted\n  script:\n    - say: done\n";
    }
    await writeFiles(root, files);
    await writeFile(join(root, "hooks.mjs"), STUCK_HOOK);
    await writeFile(join(root, "register.mjs"),
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(root, "hooks.mjs")).href)});\n`);
    const out = join(root, "run");
    const cli = (): Promise<CliResult> => runNode(["--import", join(root, "register.mjs"), compiled("src/cli/main.js"),
      "run", "suite", "--out", out, "--sandbox", "off", "--concurrency", String(concurrency)], root);
    const ran = await cli();
    assert.equal(ran.code, 1, `exit 1, never 0\n${ran.stdout}\n${ran.stderr}`);
    const results = await resultsById(out);
    assert.equal(results.size, 1 + others, "every task has a result");
    assert.deepEqual(results.get("a-stuck")?.error, { code: "internal", message: STALLED_MESSAGE });
    assert.equal(results.get("a-stuck")?.status, "errored");
    for (let k = 0; k < others; k++) assert.equal(results.get(`fine-${k}`)?.status, "passed", `fine-${k} passed`);
    await assertReportsAndLock(out, "a-stuck", cli);
  });
}

async function runNode(args: string[], cwd: string): Promise<CliResult> {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, args, { cwd, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}
