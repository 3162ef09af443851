/**
 * The CLI under GitHub's cancel: SIGINT mid-suite, then SIGTERM 1 s later. The SIGTERM lands
 * while the shutdown waits for a tool that ignores both signals (its process group's grace
 * period, then SIGKILL), and must not cut it short: the finished task's result, stats.json and
 * junit.xml are written, the exit code is the interrupted one, and all of it within 7.5 s.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { loadSession } from "../../src/store/session-file.js";
import { startCli } from "../support/cli.js";
import { readJson } from "../support/run-dir.js";
import { TRAP_POLICY, taggingTask, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { exists, waitFor } from "../support/wait.js";

/** GitHub gives a step 7.5 s between SIGINT and SIGTERM's follow-up kill. */
const SHUTDOWN_WINDOW_MS = 7500;

/** A task whose shell calls ignore SIGINT and SIGTERM, so stopping one takes the group's grace period. */
const STUBBORN = `prompt: Append the tags slowly.
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - say: step 0
      call: shell
      input: { command: "trap '' INT TERM; echo b-0 >> tags.txt; sleep 3" }
    - say: done
checks:
  - { name: tags written, run: "test -f tags.txt" }
`;

test("SIGINT then SIGTERM 1 s later: the shutdown finishes its checkpoint and reports, exit 130, within 7.5 s", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": TRAP_POLICY,
    "suite/a-fast.yaml": taggingTask("a", 1),
    "suite/b-slow.yaml": STUBBORN,
    "suite/c-later.yaml": taggingTask("c", 1),
  });
  const out = join(root, "run");
  // Unsandboxed: in the sandbox a stopped command dies with its PID namespace at once, trap or
  // no trap, and the shutdown would end before the second signal could arrive.
  const run = startCli(["run", "suite", "--out", out, "--concurrency", "1", "--sandbox", "off"], { cwd: root });
  await waitFor(() => exists(join(out, "tasks/suite/b-slow/default/1/workspace/tags.txt")));
  const stoppedAt = Date.now();
  run.child.kill("SIGINT");
  await new Promise((r) => setTimeout(r, 1000));
  run.child.kill("SIGTERM");
  const stopped = await run.done;
  const shutdownMs = Date.now() - stoppedAt;
  t.diagnostic(`shutdown took ${shutdownMs} ms`);

  assert.equal(stopped.signal, null, stopped.stderr);
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.ok(shutdownMs > 1000 && shutdownMs < SHUTDOWN_WINDOW_MS, `shutdown took ${shutdownMs} ms`);
  assert.match(stopped.stderr, /rhema: SIGINT: checkpointing and writing reports/);
  assert.match(stopped.stderr, /rhema: SIGTERM during shutdown: still writing checkpoints and reports/);
  assert.deepEqual((await readRunResults(out)).map((r) => [r.id, r.status]), [["a-fast", "passed"]]);
  const stats = await readJson<{ tasks: Array<{ id: string }> }>(join(out, "stats.json"));
  assert.ok(stats.tasks.some((task) => task.id === "a-fast"), "stats.json lists the finished task");
  const junit = await readFile(join(out, "junit.xml"), "utf8");
  assert.match(junit, /<testsuites[^>]* tests="3" failures="0" errors="1" skipped="1"/);
  assert.match(junit, /name="b-slow"[^>]*>\s*<error message="interrupted: [^"]*" type="interrupted"\/>/);
  await loadSession(join(out, "tasks/suite/b-slow/default/1/session.json"));
});

test("a third signal stops at once with the interrupted exit code", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "policy.yaml": TRAP_POLICY, "suite/b-slow.yaml": STUBBORN });
  const out = join(root, "run");
  const run = startCli(["run", "suite", "--out", out, "--sandbox", "off"], { cwd: root });
  await waitFor(() => exists(join(out, "tasks/suite/b-slow/default/1/workspace/tags.txt")));
  const stoppedAt = Date.now();
  for (const signal of ["SIGINT", "SIGTERM", "SIGINT"] as const) {
    run.child.kill(signal);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stopped = await run.done;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, /rhema: SIGINT again: stopping at once/);
  assert.ok(Date.now() - stoppedAt < 1500, "it did not wait for the tool's grace period");
});
