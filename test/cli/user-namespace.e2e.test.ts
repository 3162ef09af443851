/**
 * A user who is not root (uid 1234 through setpriv when the tests run as root; else the test's own
 * user) gets the kernel's overlay all the same: `rhema run` starts itself again inside a user
 * namespace of its own (process/user-namespace.ts, cli/user-namespace-entry.ts). Shown through the
 * built CLI, with the sandbox required (bwrap):
 *
 * - the run says so on its first line; each trial writes into a layer of its own, invisible to
 *   the other and to the fixture; a base folder removed and made again (an opaque folder, which a
 *   user namespace can only mark with `userxattr`) stays made again;
 * - sandboxed commands see the host user's uid, not the namespace's 0 nor nobody; the run's files
 *   belong to the host user;
 * - a SIGKILL of the rhema that was started (the outer one) kills the inner one at once, sandboxed
 *   command and all; the next run resumes the trial in its layer, deletions included;
 * - a SIGTERM to the process group the run was started in reaches the inner rhema once: one
 *   graceful shutdown (exit 130), no "signal during shutdown";
 * - git fetching a workspace's repository (ssh included) runs as the host user, not as the
 *   namespace's 0, for whom ssh would look for root's keys.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, readFile, readdir, stat } from "node:fs/promises";
import { readFileSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { userNamespaceWorks } from "../../src/cli/user-namespace-entry.js";
import { writeFiles } from "../support/suite-files.js";
import { layeredTask } from "../support/layered-task.js";
import { tempDir } from "../support/temp-dir.js";
import { LINKED_MODULES, ROOT, startCliAs, type TestUser } from "../support/nobody-cli.js";
import { waitForFile } from "../support/kill-in-command.js";
import { publishedSchemas } from "../support/published-schemas.js";

const USER: TestUser = ROOT ? { uid: 1234, gid: 1234 } : { uid: process.getuid!(), gid: process.getgid!() };
// CI runs as root on a kernel that allows it: there it never skips.
const UNAVAILABLE = LINKED_MODULES || (!userNamespaceWorks(process.env, USER.uid, USER.gid) && "a user namespace cannot mount an overlay or start bwrap here");

function task(id: string, extraScript = ""): string {
  return layeredTask(id, `id -u > uid.txt && rm -rf dir && mkdir dir && echo new > dir/b && rm gone.txt && echo ${id} >> shared.txt${extraScript}`, [
    `{ name: the folder made again, run: 'test ! -e dir/a && test "$(cat dir/b)" = new && test ! -e gone.txt' }`,
  ]);
}

async function suite(t: { after(fn: () => unknown): void }, tasks: Record<string, string>) {
  const root = await tempDir(t);
  const files: Record<string, string> = {
    "policy.yaml": "version: 1\ndefault: allow\nrules: []\n", "fixture/shared.txt": "base\n", "fixture/gone.txt": "bye\n", "fixture/dir/a": "a\n",
  };
  for (const [id, text] of Object.entries(tasks)) files[`suite/${id}.yaml`] = text;
  await writeFiles(root, files);
  await chmod(root, 0o777);
  const out = join(root, "run");
  return { root, out, args: ["run", "suite", "--out", out, "--sandbox", "bwrap"] };
}

async function fixtureUntouched(root: string): Promise<void> {
  assert.deepEqual((await readdir(join(root, "fixture"))).sort(), ["dir", "gone.txt", "shared.txt"]);
  assert.deepEqual(await readdir(join(root, "fixture/dir")), ["a"]);
  assert.equal(await readFile(join(root, "fixture/shared.txt"), "utf8"), "base\n");
}

/** The pids of processes whose command line names `marker` (the run directory): rhema's, inside or out. */
function processesNaming(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(marker)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

test("a user who is not root gets overlay layers in a user namespace: isolated, a folder made again stays made, commands see the user's uid", { skip: UNAVAILABLE }, async (t) => {
  const { root, out, args } = await suite(t, { a: task("a"), b: task("b") });
  const run = await (await startCliAs(t, USER, [...args, "--concurrency", "2"], { cwd: root, env: { HOME: root } })).done;
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stderr, new RegExp(`starting run \\w+: 2 tasks in .*; workspaces: overlay layers \\(in a user namespace of uid ${USER.uid}\\)\n`));
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.workspace?.mechanism]), [["a", "passed", "overlay"], ["b", "passed", "overlay"]]);
  for (const id of ["a", "b"]) {
    const upper = join(out, `tasks/suite/${id}/default/1/layer/upper`);
    assert.equal(await readFile(join(upper, "uid.txt"), "utf8"), `${USER.uid}\n`, "a sandboxed command runs as the host user");
    assert.equal(await readFile(join(upper, `mine-${id}.txt`), "utf8"), `${id}\n`);
    assert.match(await readFile(join(out, `tasks/suite/${id}/default/1/changes.patch`), "utf8"), /deleted file mode[\s\S]*dir\/a|dir\/a[\s\S]*deleted file mode/);
  }
  assert.equal((await stat(join(out, "junit.xml"))).uid, USER.uid, "the run's files belong to the host user");
  await fixtureUntouched(root);
});

test("a SIGKILL of the rhema that was started kills the one inside the namespace at once; the next run resumes the trial in its layer", { skip: UNAVAILABLE }, async (t) => {
  const { root, out, args } = await suite(t, { a: task("a", " && echo started > started.txt && sleep 30") });
  const first = await startCliAs(t, USER, args, { cwd: root, env: { HOME: root }, detached: true });
  await waitForFile(join(out, "tasks/suite/a/default/1/layer/upper/started.txt"));
  assert.ok(processesNaming(out).length >= 2, "the outer rhema and the one inside run");
  // The outer alone, as a crash or an OOM kill would end it: nothing can pass this signal on.
  const outerGone = new Promise((resolve) => first.child.once("exit", resolve));
  first.child.kill("SIGKILL");
  await outerGone;
  const deadline = Date.now() + 5_000;
  while (processesNaming(out).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(processesNaming(out), [], "nothing of the run outlives the kill");
  await first.done;

  const again = await (await startCliAs(t, USER, args, { cwd: root, env: { HOME: root } })).done;
  assert.ok([0, 1].includes(again.code ?? -1), again.stdout + again.stderr);
  const [a] = await readRunResults(out);
  assert.equal(a!.workspace?.mechanism, "overlay");
  assert.ok(a!.checks.find((c) => c.name === "the folder made again")?.passed, `the deletions before the kill hold in the resumed layer: ${JSON.stringify(a!.checks)}`);
  assert.ok(a!.checks.find((c) => c.name === "only its own file")?.passed);
  await fixtureUntouched(root);
});

test("a SIGTERM to the run's process group reaches the rhema inside once: one graceful shutdown, exit 130", { skip: UNAVAILABLE }, async (t) => {
  const { root, out, args } = await suite(t, { a: task("a", " && echo started > started.txt && sleep 30") });
  const run = await startCliAs(t, USER, args, { cwd: root, env: { HOME: root }, detached: true });
  await waitForFile(join(out, "tasks/suite/a/default/1/layer/upper/started.txt"));
  process.kill(-run.child.pid!, "SIGTERM");
  const ended = await run.done;
  assert.equal(ended.code, 130, ended.stdout + ended.stderr);
  assert.equal(ended.stderr.match(/SIGTERM: checkpointing/g)?.length, 1, ended.stderr);
  assert.doesNotMatch(ended.stderr, /during shutdown/, "the signal was not counted twice");
  assert.ok((await readdir(out)).includes("junit.xml"), "the reports were written");
  await fixtureUntouched(root);
});

test("git fetching a workspace's repository over ssh runs as the host user, as it would outside (ssh finds the user's keys by uid, not as the namespace's 0)", { skip: UNAVAILABLE }, async (t) => {
  const root = await tempDir(t);
  const repo = join(root, "repo");
  await writeFiles(root, {
    "repo/README.md": "hello\n",
    "policy.yaml": "version: 1\ndefault: deny\nrules: []\n",
    "suite/task.yaml": `prompt: p\npolicy: ../policy.yaml\nworkspace: { git: "ssh://example.invalid${repo}", ref: main }\nmodel: { provider: scripted, script: [{ say: done }] }\n`,
    // An ssh that says who ran it, then serves the repository from here (the last argument is git's command).
    "fake-ssh": `#!/bin/sh\nid -u > "${join(root, "ssh-uid")}"\neval "command=\\\${$#}"\nexec sh -c "$command"\n`,
  });
  await chmod(join(root, "fake-ssh"), 0o755);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "one");
  await chmod(root, 0o777);
  // The repository is the user's own, as a user's checkout is (git refuses to serve another's).
  if (ROOT) execFileSync("chown", ["-R", `${USER.uid}:${USER.gid}`, repo]);
  const out = join(root, "run");
  const run = await (await startCliAs(t, USER, ["run", "suite", "--out", out, "--sandbox", "bwrap"], { cwd: root, env: { HOME: root, GIT_SSH_COMMAND: join(root, "fake-ssh") } })).done;
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stderr, /in a user namespace of uid/);
  assert.equal(await readFile(join(root, "ssh-uid"), "utf8"), `${USER.uid}\n`, "ssh ran as the host user");
});

test("--json's run_start line names the user namespace, and validates against schema/events.schema.json", { skip: UNAVAILABLE }, async (t) => {
  const { root, args } = await suite(t, { a: task("a") });
  const run = await (await startCliAs(t, USER, [...args, "--json"], { cwd: root, env: { HOME: root } })).done;
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const start = JSON.parse(run.stdout.split("\n")[0]!) as { type: string; workspaces?: unknown };
  assert.deepEqual([start.type, start.workspaces], ["run_start", { mechanism: "overlay", reason: null, userNamespaceOf: USER.uid }]);
  const validate = publishedSchemas().validator("events.schema.json");
  assert.ok(validate(start), JSON.stringify(validate.errors));
});
