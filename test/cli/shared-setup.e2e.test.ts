/**
 * Setup once per suite (`workspace.shared`, issue 24 (c)) through the built CLI: three tasks
 * name one prepared base; their setup appends to a counter file outside every workspace, so the
 * count is how many times it ran. It runs once for the three (at concurrency 3: one prepares,
 * the others wait), not again on a resume that adds trials, and again once the fixture changed
 * (a file's size and mtime). A failing shared setup fails all three with its message and runs
 * once. A SIGKILL inside each of its commands resumes it as a task's own setup resumes: the done
 * command never runs again, the killed one does, and the tasks run. Each task's writes stay in
 * its own workspace: invisible to the others and to the prepared base, and only they are in its
 * changes.patch.
 *
 * Unsandboxed (`--sandbox off`): the setup writes its counter outside the workspace.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFile, readFile, readdir, utimes } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { cliEnv, runCli } from "../support/cli.js";
import { OPEN_POLICY, writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { killInCommand } from "../support/kill-in-command.js";

const IDS = ["a", "b", "c"] as const;
const SECRET = "sk-shared-0123456789abcdef";

function task(id: string, setup: readonly string[]): string {
  return `prompt: Tag it.
policy: ../policy.yaml
workspace:
  from: ../fixture
  shared: true
  setup:
${setup.map((command) => `    - ${JSON.stringify(command)}\n`).join("")}model:
  provider: scripted
  script:
    - call: shell
      input: { command: "echo ${id} >> tags.txt" }
    - say: tagged
checks:
  - { name: setup output there, run: "test -f dep.txt" }
  - { name: only its own tag, run: 'test "$(cat tags.txt)" = ${id}' }
  - { name: patch holds the tag alone, run: 'grep -q "^+${id}$" "$RHEMA_CHANGES" && ! grep -q dep.txt "$RHEMA_CHANGES"' }
`;
}

async function suite(t: { after(fn: () => unknown): void }, setup: (root: string) => readonly string[]) {
  const root = await tempDir(t);
  const files: Record<string, string> = { "policy.yaml": OPEN_POLICY, "fixture/README.md": "hello\n" };
  for (const id of IDS) files[`suite/${id}.yaml`] = task(id, setup(root));
  await writeFiles(root, files);
  const out = join(root, "run");
  const counter = async () => (await readFile(join(root, "count.txt"), "utf8").catch(() => "")).split("\n").filter(Boolean).length;
  return { root, out, counter, args: ["run", "suite", "--out", out, "--sandbox", "off", "--concurrency", "3"] };
}

const counted = (root: string) => [`sleep 0.3; echo ran >> ${root}/count.txt`, "echo made by setup > dep.txt"];

async function preparedBases(out: string): Promise<string[]> {
  return (await readdir(join(out, "prepared")).catch(() => [])).sort();
}

test("three tasks share one setup: it runs once, each task works in its own copy, and a changed fixture prepares again", async (t) => {
  const { root, out, counter, args } = await suite(t, counted);
  const first = await runCli(args, { cwd: root });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(await counter(), 1, "the setup ran once for three tasks");
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status]), IDS.map((id) => [id, "passed"]));
  for (const r of results) assert.equal(r.changes && "files" in r.changes ? r.changes.files : null, 1, `${r.id}: its patch holds its tag alone`);
  const [base, ...others] = await preparedBases(out);
  assert.deepEqual(others, [], "one prepared base");
  assert.deepEqual((await readdir(join(out, "prepared", base!, "workspace"))).sort(), ["README.md", "dep.txt"], "no task's write reached the base");
  assert.deepEqual(await readdir(join(root, "fixture")), ["README.md"], "nor the fixture");
  const state = JSON.parse(await readFile(join(out, "prepared", base!, "prepare-state.json"), "utf8"));
  assert.equal(state.outcome.status, "done");
  assert.deepEqual(state.setup.map((s: { status: string }) => s.status), ["done", "done"]);

  // More trials of the same tasks on resume: the base on disk is the same key, so no setup runs.
  const more = await runCli([...args, "--repeats", "2"], { cwd: root });
  assert.equal(more.code, 0, more.stderr);
  assert.equal(await counter(), 1, "a resume with the fixture unchanged reuses the base");

  // The fixture changes (a file's size and mtime): the next trials prepare a new base, once.
  await appendFile(join(root, "fixture/README.md"), "more\n");
  await utimes(join(root, "fixture/README.md"), new Date("2020-01-01"), new Date("2020-01-01"));
  const changed = await runCli([...args, "--repeats", "3"], { cwd: root });
  assert.equal(changed.code, 0, changed.stderr);
  assert.equal(await counter(), 2, "the changed fixture was prepared again, once for the three new trials");
  assert.equal((await preparedBases(out)).length, 2);

  const restarted = await runCli([...args, "--restart"], { cwd: root });
  assert.equal(restarted.code, 0, restarted.stderr);
  assert.equal(await counter(), 3, "--restart drops prepared/: the base is made again");
  assert.equal((await preparedBases(out)).length, 1);
});

test("a failing shared setup fails all three tasks with its message and runs once; --retry-errored runs it once more", async (t) => {
  const { root, out, counter, args: plain } = await suite(t, (r) => [`echo ran >> ${r}/count.txt; echo broken-dependency $SHARED_API_KEY >&2; exit 3`]);
  // A secret let through to the setup, printed by it: its recorded message is redacted.
  const args = [...plain, "--allow-env", "SHARED_API_KEY"];
  const env = cliEnv({ SHARED_API_KEY: SECRET });
  const run = await runCli(args, { cwd: root, env });
  assert.equal(run.code, 1, run.stderr);
  assert.equal(await counter(), 1);
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.error?.code]), IDS.map((id) => [id, "errored", "setup_failed"]));
  const messages = new Set(results.map((r) => r.error?.message));
  assert.equal(messages.size, 1, "one message for all three");
  assert.match([...messages][0]!, /^shared setup \(prepared\/[0-9a-f]{24}\): setup command `echo ran .*` exited 3:\nbroken-dependency \[redacted:SHARED_API_KEY\]/);
  const [base] = await preparedBases(out);
  const state = await readFile(join(out, "prepared", base!, "prepare-state.json"), "utf8");
  assert.equal(JSON.parse(state).outcome.status, "failed");
  assert.ok(!state.includes(SECRET), "the secret is not written in the shared setup's state");

  // New trials of the tasks on resume: the failure on disk fails them with its message, the setup not run again.
  const more = await runCli([...args, "--repeats", "2"], { cwd: root, env });
  assert.equal(more.code, 1, more.stderr);
  assert.equal(await counter(), 1, "a recorded failure is not run again");
  const added = (await readRunResults(out)).filter((r) => r.trial?.repeat === 2);
  assert.deepEqual(added.map((r) => [r.id, r.error?.message]), IDS.map((id) => [id, [...messages][0]]));

  const retried = await runCli([...args, "--repeats", "2", "--retry-errored"], { cwd: root, env });
  assert.equal(retried.code, 1, retried.stderr);
  assert.equal(await counter(), 2, "retried once for the six trials");
});

for (const target of ["setup-1", "setup-2"] as const) {
  test(`a SIGKILL inside the shared ${target}: the resume finishes the setup once and the tasks run`, async (t) => {
    // Each command records its process group when it starts, and appends its line when it finishes.
    const command = (root: string, name: string) => `echo $$ > ${root}/${name}.pid; sleep 1; echo ${name} >> ${root}/log.txt`;
    const { root, out, args } = await suite(t, (r) => [command(r, "setup-1"), `${command(r, "setup-2")}; echo made > dep.txt`]);
    await killInCommand(args, root, join(root, `${target}.pid`));

    const resumed = await runCli(args, { cwd: root });
    assert.equal(resumed.code, 0, resumed.stderr);
    const lines = (await readFile(join(root, "log.txt"), "utf8")).trim().split("\n");
    assert.deepEqual(lines, ["setup-1", "setup-2"], "each setup command's line exactly once");
    assert.match(resumed.stderr, new RegExp(`setup ${target.slice(-1)}/2: .*\\(interrupted by a kill; it may have partly run: running it again\\)`));
    const results = await readRunResults(out);
    assert.deepEqual(results.map((r) => [r.id, r.status]), IDS.map((id) => [id, "passed"]));
    const [base] = await preparedBases(out);
    assert.deepEqual((await readdir(join(out, "prepared", base!))).sort(), ["prepare-state.json", "workspace"], "the lock is gone once prepared");
  });
}
