/**
 * Layered workspaces (issue 24 (b)) through the built CLI. As root (CI here), `--workspace-layers
 * auto` mounts each trial's workspace as a kernel overlay: one read-only copy of the fixture in
 * `prepared/`, a layer per trial that receives its writes. Shown:
 *
 * - isolation: a trial's writes (a new file, an edit, a deletion, a write through a link the
 *   fixture holds) are invisible to the other trial, to the base and to the fixture; each one's
 *   changes.patch holds its own; the result says `overlay` and counts its layer's disk, not the base;
 * - no mount outlives the run; a SIGKILL leaves the mount behind (its ledger entry too), and the
 *   next run unmounts it before anything else and resumes in the same layer — the write made
 *   before the kill is still there;
 * - `--restart` after a kill unmounts, then drops the layer; the fixture is untouched throughout.
 *
 * As a user who is not root (nobody through setpriv, the checkout bound at a place nobody may
 * enter, when the tests run as root) with `--sandbox off` — which keeps rhema out of a user
 * namespace of its own, where it would mount overlays (user-namespace.e2e.test.ts) — the same
 * suite runs on copies: auto says why in the result, and `--workspace-layers overlay` is exit 2
 * naming the reason.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, open, readFile, readdir, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { mountPointsUnder } from "../../src/runner/run-dir/layer-mounts.js";
import { findOnPath } from "../../src/process/sandbox-probe.js";
import { execFileSync, spawnSync } from "node:child_process";
import { lstatSync } from "node:fs";
import { runCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { layeredTask } from "../support/layered-task.js";

/** Every tool call allowed: the tests are about where the writes land. */
const ALLOW_ALL = "version: 1\ndefault: allow\nrules: []\n";
import { tempDir } from "../support/temp-dir.js";
import { LINKED_MODULES, runCliAsNobody } from "../support/nobody-cli.js";
import { killInCommand } from "../support/kill-in-command.js";

const ROOT = process.getuid?.() === 0;
const FUSE = await findOnPath("fuse-overlayfs", process.env.PATH ?? "");
// CI installs it (scripts/ci-install-fuse-overlayfs.sh) and sets this: there its tests run, never skip.
if (FUSE === null && process.env.RHEMA_REQUIRE_FUSE_OVERLAYFS === "1") throw new Error("fuse-overlayfs required (RHEMA_REQUIRE_FUSE_OVERLAYFS=1) but not on PATH");

function task(id: string, extraScript = ""): string {
  return layeredTask(id, `echo ${id} >> shared.txt && rm gone.txt && echo ${id} > linked.txt${extraScript}`, [
    `{ name: patch holds its changes, run: 'grep -q "^+${id}$" "$RHEMA_CHANGES" && grep -q "deleted file mode" "$RHEMA_CHANGES"' }`,
  ]);
}

async function suite(t: { after(fn: () => unknown): void }, tasks: Record<string, string>) {
  const root = await tempDir(t);
  const files: Record<string, string> = { "policy.yaml": ALLOW_ALL, "fixture/shared.txt": "base\n", "fixture/gone.txt": "bye\n", "fixture/target.txt": "target\n" };
  for (const [id, text] of Object.entries(tasks)) files[`suite/${id}.yaml`] = text;
  await writeFiles(root, files);
  await symlink("target.txt", join(root, "fixture/linked.txt"));
  // 64 MiB holding 4 KiB: the base keeps the hole, and no layer copies it.
  const sparse = await open(join(root, "fixture/sparse.bin"), "w");
  await sparse.write(Buffer.alloc(4096, 1), 0, 4096, 0);
  await sparse.truncate(64 * 1024 * 1024);
  await sparse.close();
  const out = join(root, "run");
  return { root, out, args: ["run", "suite", "--out", out, "--sandbox", "off"] };
}

async function fixtureUntouched(root: string): Promise<void> {
  const fixture = join(root, "fixture");
  assert.deepEqual((await readdir(fixture)).sort(), ["gone.txt", "linked.txt", "shared.txt", "sparse.bin", "target.txt"]);
  assert.equal(await readFile(join(fixture, "shared.txt"), "utf8"), "base\n");
  assert.equal(await readFile(join(fixture, "target.txt"), "utf8"), "target\n", "a write through the fixture's link never reaches it");
}

async function isolatedLayers(t: { after(fn: () => unknown): void }, mechanism: "overlay" | "fuse-overlayfs"): Promise<void> {
  const { root, out, args } = await suite(t, { a: task("a"), b: task("b") });
  const run = await runCli([...args, "--concurrency", "2", "--workspace-layers", mechanism], { cwd: root });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stderr, new RegExp(`starting run \\w+: 2 tasks in .*; workspaces: ${mechanism} layers\n`), "the run's first line says how it makes workspaces");
  const results = await readRunResults(out);
  assert.deepEqual(results.map((r) => [r.id, r.status, r.workspace?.mechanism]), [["a", "passed", mechanism], ["b", "passed", mechanism]]);
  for (const r of results) assert.ok(r.workspace!.diskBytes < 1024 * 1024, `${r.id}: the layer holds its writes, not a copy (${r.workspace!.diskBytes} bytes)`);
  const bases = await readdir(join(out, "prepared"));
  assert.equal(bases.length, 1, "one copy of the fixture for both trials");
  const base = join(out, "prepared", bases[0]!, "workspace");
  assert.deepEqual((await readdir(base)).sort(), ["gone.txt", "linked.txt", "shared.txt", "sparse.bin", "target.txt"], "no trial's write reached the base");
  assert.ok((await stat(join(base, "sparse.bin"))).blocks * 512 < 1024 * 1024, "the base keeps the sparse file's hole");
  assert.equal(await readFile(join(base, "target.txt"), "utf8"), "target\n");
  assert.deepEqual(await mountPointsUnder(out), [], "every mount is gone once the run ends");
  // The run's git objects hold the base files a patch shows (shared.txt, edited), never the rest of the base.
  const objects = { PATH: process.env.PATH, GIT_DIR: join(out, "tasks/suite/a/default/1/changes.git"), GIT_OBJECT_DIRECTORY: join(out, "changes-objects") };
  const stored = (file: string) => spawnSync("git", ["cat-file", "-e", execFileSync("git", ["hash-object", join(base, file)]).toString("utf8").trim()], { env: objects }).status === 0;
  assert.deepEqual([stored("shared.txt"), stored("sparse.bin")], [true, false], "the changes snapshot stores what changed, not the base");
  // The layer keeps what the trial wrote: the copied-up edit, the link's target written through it, its new file.
  const upper = join(out, "tasks/suite/a/default/1/layer/upper");
  assert.equal(await readFile(join(upper, "mine-a.txt"), "utf8"), "a\n");
  assert.equal(await readFile(join(upper, "target.txt"), "utf8"), "a\n", "the write through the link landed in the layer");
  await fixtureUntouched(root);
}

test("as root each trial writes into a layer of its own over one shared base; nothing stays mounted", { skip: !ROOT && "root mounts overlays (the unprivileged branch is below)" }, (t) => isolatedLayers(t, "overlay"));

test("with fuse-overlayfs the same: a layer each, the base and the fixture untouched, nothing left mounted", { skip: FUSE === null ? "fuse-overlayfs is not installed (apt-get install fuse-overlayfs)" : !ROOT && "/dev/fuse is root's here" }, (t) => isolatedLayers(t, "fuse-overlayfs"));

test("a SIGKILL leaves the layer mounted; the next run unmounts it first, even leaving that trial alone, and a resume mounts the same layer", { skip: !ROOT && "root mounts overlays" }, async (t) => {
  const pidFile = "PIDFILE";
  const { root, out, args } = await suite(t, { a: task("a", ` && echo $$ > ${pidFile} && sleep 30`), b: task("b") });
  const workspace = join(out, "tasks/suite/a/default/1/workspace");
  await killInCommand([...args, "--concurrency", "1"], root, join(workspace, pidFile));
  assert.deepEqual(await mountPointsUnder(out), [workspace], "the kill left the mount");
  assert.equal((await readdir(join(out, "mounts"))).length, 1, "and its ledger entry");

  // A run of the other task alone: the killed trial's mount goes before anything else.
  const other = await runCli([...args, "--filter", "suite/b"], { cwd: root });
  assert.equal(other.code, 0, other.stdout + other.stderr);
  assert.deepEqual(await mountPointsUnder(out), [], "unmounted, and nothing left mounted");

  // The killed trial resumes in its layer: the write before the kill is there (its started shell call never runs again).
  const again = await runCli(args, { cwd: root });
  assert.ok([0, 1].includes(again.code ?? -1), again.stderr);
  assert.deepEqual(await mountPointsUnder(out), []);
  const a = (await readRunResults(out)).find((r) => r.id === "a")!;
  assert.equal(a.workspace?.mechanism, "overlay");
  assert.equal(await readFile(join(out, "tasks/suite/a/default/1/layer/upper/mine-a.txt"), "utf8"), "a\n", "the write before the kill is in the layer still");
  assert.ok(a.checks.some((c) => c.name === "only its own file" && c.passed), "its workspace holds its write, over the base");
  await fixtureUntouched(root);
});

test("--restart after a kill unmounts the layer, then drops it; the fixture is untouched", { skip: !ROOT && "root mounts overlays" }, async (t) => {
  const pidFile = "PIDFILE";
  const { root, out, args } = await suite(t, { a: task("a", ` && echo $$ > ${pidFile} && sleep 30`) });
  await killInCommand(args, root, join(out, "tasks/suite/a/default/1/workspace", pidFile));
  assert.equal((await mountPointsUnder(out)).length, 1);
  const restarted = await runCli([...args, "--restart"], { cwd: root });
  assert.deepEqual(await mountPointsUnder(out), []);
  assert.notEqual(restarted.code, 2, restarted.stderr);
  const state = JSON.parse(await readFile(join(out, "tasks/suite/a/default/1/task-state.json"), "utf8")) as { resumed: number };
  assert.equal(state.resumed, 0, "the trial started afresh");
  await fixtureUntouched(root);
});

test("as a user who is not root with --sandbox off (so no user namespace of its own: user-namespace.e2e.test.ts), auto copies each workspace and says why; asking for overlay is exit 2", { skip: LINKED_MODULES }, async (t) => {
  const { root, out, args } = await suite(t, { a: task("a") });
  await chmod(root, 0o777);
  const run = await runCliAsNobody(t, args, { cwd: root, env: { HOME: root } });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const [result] = await readRunResults(out);
  assert.equal(result!.workspace?.mechanism, "copy");
  assert.match(result!.workspace?.reason ?? "", /overlay: needs real root/);
  assert.match(run.stderr, /starting run \w+: 1 task in .*; workspaces: copies \(overlay: needs real root/);
  const refused = await runCliAsNobody(t, [...args, "--workspace-layers", "overlay", "--restart"], { cwd: root, env: { HOME: root } });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /--workspace-layers overlay cannot be used here \(overlay: needs real root/);
  await fixtureUntouched(root);
});

test("--workspace-layers copy copies as before, without a reason", async (t) => {
  const { root, out, args } = await suite(t, { a: task("a") });
  const run = await runCli([...args, "--workspace-layers", "copy"], { cwd: root });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const [result] = await readRunResults(out);
  assert.deepEqual({ mechanism: result!.workspace?.mechanism, reason: result!.workspace?.reason }, { mechanism: "copy", reason: undefined });
  await fixtureUntouched(root);
});

test("special files in a layered base (a shared setup's FIFO and device) and in a layer (the agent's FIFO): no tool hangs on them, the patch passes over them, and the layer at rest keeps the agent's", { skip: !ROOT && "root mounts overlays (and makes device nodes)" }, async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, {
    "policy.yaml": ALLOW_ALL, "fixture/a.txt": "a\n",
    "suite/t.yaml": `prompt: Look around.
policy: ../policy.yaml
workspace: { from: ../fixture, setup: ["mkfifo pipe", "mknod null c 1 3"], shared: true }
model:
  provider: scripted
  script:
    - call: read_file
      input: { path: pipe }
    - call: grep
      input: { pattern: "a" }
    - call: shell
      input: { command: "cat a.txt > copy.txt && mkfifo own-pipe" }
    - say: done
`,
  });
  const out = join(root, "run");
  const started = Date.now();
  const run = await runCli(["run", "suite", "--out", out, "--sandbox", "off", "--workspace-layers", "auto"], { cwd: root });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.ok(Date.now() - started < 60_000, "nothing waited on a FIFO");
  const [result] = await readRunResults(out);
  assert.equal(result!.workspace?.mechanism, "overlay");
  const events = await readFile(join(out, "tasks/suite/t/default/1/events.jsonl"), "utf8");
  assert.match(events, /"name":"read_file","isError":true,[^\n]*pipe is not a regular file/);
  const { bytes: _bytes, ...figures } = result!.changes as { bytes: number };
  assert.deepEqual(figures, { path: "tasks/suite/t/default/1/changes.patch", files: 1, insertions: 1, deletions: 0, binary: 0, truncated: false, leftOut: 0 }, "copy.txt alone: FIFOs and devices are no change");
  assert.ok(lstatSync(join(out, "tasks/suite/t/default/1/layer/upper/own-pipe")).isFIFO(), "the layer at rest keeps the FIFO the agent made");
  assert.deepEqual(await mountPointsUnder(out), []);
});
