/**
 * Nothing outlives rhema with `--sandbox off` either (issue 19, item 8), through the built CLI: a
 * shell tool call, a setup command and a check each start `(setsid sh -c 'sleep 300; true' MARK &)`
 * — a process in a session of its own whose parent exits at once, so it is reparented before any
 * tree walk sees it. After a normal run no process carrying the marker is alive; after a SIGKILL
 * of rhema in the middle of each of the three commands, none is alive within a bounded wait.
 * (The reaper, src/process/subreaper.ts: perl is Essential on Debian and Ubuntu, and CI has it.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { killAll, liveRunProcesses, survivorsAfter } from "../support/run-processes.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const WHERE = ["setup", "shell", "check"] as const;
type Where = (typeof WHERE)[number];
/** How long a killed rhema's commands may take to be gone (the reaper sweeps at once; a loaded machine is slow). */
const GONE_WITHIN_MS = 5_000;

/** The task: each place runs `commands[place]`. */
function task(commands: Record<Where, string>): string {
  const q = (text: string): string => JSON.stringify(text);
  return `prompt: Go.
policy: { default: allow, rules: [] }
model:
  provider: scripted
  script:
    - say: step
      call: shell
      input: { command: ${q(commands.shell)} }
    - say: done
workspace:
  setup:
    - ${q(commands.setup)}
checks:
  - { name: check, run: ${q(commands.check)} }
`;
}

/**
 * A command that leaves `(setsid …)` behind, carrying `mark`, and notes that it ran in `begun-WHERE`:
 * in `root`, or for the shell tool (whose policy keeps writes in the workspace) in the workspace.
 */
const orphaning = (root: string, mark: string, where: Where, then = ""): string =>
  `(setsid sh -c 'sleep 300; true' ${mark}-${where} &); echo ${where} > ${where === "shell" ? "." : root}/begun-${where}${then}`;

/** Where `orphaning` notes that the command ran. */
const begun = (root: string, where: Where): string =>
  join(where === "shell" ? join(root, "run", "tasks", "suite", "orphans", "default", "1", "workspace") : root, `begun-${where}`);

test("--sandbox off: setsid orphans of a shell call, a setup command and a check are gone when the run ends", async (t) => {
  const root = await tempDir(t);
  const mark = `rhema-setsid-${randomBytes(5).toString("hex")}`;
  t.after(async () => killAll(await liveRunProcesses({ mark })));
  await writeFiles(root, {
    "suite/orphans.yaml": task({ setup: orphaning(root, mark, "setup"), shell: orphaning(root, mark, "shell"), check: orphaning(root, mark, "check") }),
  });
  const ran = await runCli(["run", "suite", "--out", join(root, "run"), "--sandbox", "off"], { cwd: root, env: cliEnv() });
  assert.equal(ran.code, 0, ran.stderr);
  for (const where of WHERE) assert.equal((await readFile(begun(root, where), "utf8")).trim(), where, `the ${where} command ran`);
  assert.deepEqual(await liveRunProcesses({ mark }), [], "nothing the commands started is alive after the run");
});

for (const killedIn of WHERE) {
  test(`--sandbox off: rhema SIGKILLed inside the ${killedIn} command: its setsid orphan is gone within ${GONE_WITHIN_MS} ms`, async (t) => {
    const root = await tempDir(t);
    const mark = `rhema-setsid-${randomBytes(5).toString("hex")}`;
    t.after(async () => killAll(await liveRunProcesses({ mark })));
    const commands = { setup: "true", shell: "true", check: "true" };
    commands[killedIn] = orphaning(root, mark, killedIn, "; sleep 60");
    await writeFiles(root, { "suite/orphans.yaml": task(commands) });
    const run = startCli(["run", "suite", "--out", join(root, "run"), "--sandbox", "off"], { cwd: root, env: cliEnv() });
    await waitFor(async () => (await readFile(begun(root, killedIn), "utf8").catch(() => "")).trim() === killedIn);
    await waitFor(async () => (await liveRunProcesses({ mark: `${mark}-${killedIn}` })).some((p) => p.cmdline.startsWith("sh -c")));
    run.child.kill("SIGKILL");
    await run.done;
    const left = await survivorsAfter({ mark }, GONE_WITHIN_MS);
    assert.deepEqual(left, [], `alive ${GONE_WITHIN_MS} ms after rhema's SIGKILL`);
  });
}

// A command may kill what would sweep its orphans after leaving one behind:
// - its own process group (`kill -9 0`, `trap 'kill -KILL 0' EXIT`): the reaper leads a group of
//   its own, so it survives and sweeps the orphan when the command ends;
// - the reaper itself (its parent): the orphan then belongs to init, out of every tree, and is
//   found by the mark its environment inherited (process-group.ts).
const SELF_KILLS = [
  ["its own process group", "kill -9 0"],
  ["the reaper", "kill -9 $PPID; sleep 0.2"],
] as const;
for (const [victim, kill] of SELF_KILLS) {
  for (const where of WHERE) {
    test(`--sandbox off: a ${where} command that leaves a setsid orphan and SIGKILLs ${victim} leaves nothing alive`, async (t) => {
      const root = await tempDir(t);
      const mark = `rhema-setsid-${randomBytes(5).toString("hex")}`;
      t.after(async () => killAll(await liveRunProcesses({ mark })));
      const commands = { setup: "true", shell: "true", check: "true" };
      commands[where] = orphaning(root, mark, where, `; sleep 0.3; ${kill}`);
      await writeFiles(root, { "suite/orphans.yaml": task(commands) });
      const ran = await runCli(["run", "suite", "--out", join(root, "run"), "--sandbox", "off"], { cwd: root, env: cliEnv() });
      assert.ok(ran.code === 0 || ran.code === 1, `exit ${ran.code}: ${ran.stderr}`);
      assert.equal((await readFile(begun(root, where), "utf8")).trim(), where, `the ${where} command ran`);
      assert.deepEqual(await survivorsAfter({ mark }, GONE_WITHIN_MS), [], "a setsid orphan outlived the run");
    });
  }
}
