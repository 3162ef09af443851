/**
 * One recorder per cassette folder, through the built CLI with real pid namespaces and real
 * signals: a run recording into `--cassette DIR` holds `DIR/.rhema-recording.lock`, so a second
 * recording into DIR — from another run directory, another pid namespace — is refused while the
 * first is alive, as is `cassette prune`; a replay, which only reads, is not. Once the first ends,
 * the second records. A recorder paused (SIGSTOP) past the stale limit loses the folder, and after
 * SIGCONT writes nothing more into it.
 *
 * The stale limit is shortened through `RHEMA_LOCK_STALE_MS` (the heartbeat is a sixth of it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseCassette } from "../../src/store/cassette-file.js";
import { cliEnv, runCli, startCli } from "../support/cli.js";
import { writeFiles } from "../support/suite-files.js";
import { tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const STALE_MS = 1_500;
const NAMESPACE = ["unshare", "-p", "-f", "--mount-proc"] as const;
const canUnshare = spawnSync(NAMESPACE[0], [...NAMESPACE.slice(1), "true"]).status === 0;

/** A scripted task: its setup waits for `go` when given one; its one request streams slowly when `slowMs` is given. */
function task(opts: { go?: string; slowMs?: number } = {}): string {
  return `prompt: Say done.
policy: { default: allow, rules: [] }
model:
  provider: scripted
  script:
    - say: "done, and a longer answer that streams in several chunks"
${opts.slowMs ? `      chunkDelayMs: ${opts.slowMs}\n` : ""}${opts.go ? `workspace:\n  setup:\n    - ${JSON.stringify(`while [ ! -e ${opts.go} ]; do sleep 0.05; done`)}\n` : ""}`;
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // gone
  }
}

test("a second recording into a cassette folder, from another pid namespace, is refused while the first records; prune too; a replay is not; afterwards it records", async (t) => {
  const root = await tempDir(t);
  const go = join(root, "go");
  await writeFiles(root, { "suite/job.yaml": task({ go }) });
  const cassettes = join(root, "cassettes");
  const env = cliEnv({ RHEMA_LOCK_STALE_MS: String(STALE_MS) });
  const record = (out: string) => ["run", "suite", "--sandbox", "off", "--out", join(root, out), "--cassette", cassettes, "--cassette-mode", "record"];
  const holder = startCli(record("first"), { cwd: root, env, detached: true });
  t.after(() => killGroup(holder.child));
  await waitFor(async () => (await readFile(join(root, "first/tasks/suite/job/default/1/events.jsonl"), "utf8").catch(() => "")).includes("setup"), 30_000);
  // Past the stale limit: a refusal now is the heartbeat's, whatever the namespace says.
  await new Promise((r) => setTimeout(r, STALE_MS));

  const second = await runCli(record("second"), { cwd: root, env, ...(canUnshare ? { launcher: NAMESPACE } : {}) });
  assert.equal(second.code, 2, second.stderr);
  assert.match(second.stderr, new RegExp(`${cassettes}/?\\.rhema-recording\\.lock|${cassettes} is in use by another rhema run \\(pid \\d+\\)`));
  assert.match(second.stderr, /record into another --cassette folder/);
  const pruned = await runCli(["cassette", "prune", cassettes, "--runs", join(root, "first")], { cwd: root, env });
  assert.equal(pruned.code, 2, pruned.stderr);
  assert.match(pruned.stderr, /is in use by another rhema run/);

  await writeFile(go, "");
  const held = await holder.done;
  assert.equal(held.code, 0, held.stderr);
  const file = join(cassettes, "suite/job/default/1.jsonl");
  assert.equal(parseCassette(file, await readFile(file, "utf8")).exchanges.length, 1);
  // A replay only reads: it needs no lock, and the recording is free again.
  const replay = await runCli(["run", "suite", "--sandbox", "off", "--out", join(root, "replay"), "--cassette", cassettes], { cwd: root, env });
  assert.equal(replay.code, 0, replay.stderr);
  const again = await runCli(record("second"), { cwd: root, env, ...(canUnshare ? { launcher: NAMESPACE } : {}) });
  assert.equal(again.code, 0, again.stderr);
});

test("a recorder paused (SIGSTOP) past the stale limit loses the cassette folder to another; after SIGCONT it writes nothing more there and exits 3", async (t) => {
  const root = await tempDir(t);
  await writeFiles(root, { "slow/job.yaml": task({ slowMs: 800 }), "fast/job.yaml": task() });
  const cassettes = join(root, "cassettes");
  const env = cliEnv({ RHEMA_LOCK_STALE_MS: String(STALE_MS) });
  const stalled = startCli(["run", "slow", "--sandbox", "off", "--out", join(root, "stalled"), "--cassette", cassettes, "--cassette-mode", "record"], { cwd: root, env, detached: true });
  t.after(() => killGroup(stalled.child));
  await waitFor(async () => (await readFile(join(root, "stalled/tasks/slow/job/default/1/events.jsonl"), "utf8").catch(() => "")).includes('"type":"request"'), 30_000);
  process.kill(-stalled.child.pid!, "SIGSTOP");
  try {
    await new Promise((r) => setTimeout(r, STALE_MS * 2));
    const taker = await runCli(["run", "fast", "--sandbox", "off", "--out", join(root, "taker"), "--cassette", cassettes, "--cassette-mode", "record"], { cwd: root, env });
    assert.equal(taker.code, 0, taker.stderr);
  } finally {
    process.kill(-stalled.child.pid!, "SIGCONT");
  }
  const ended = await stalled.done;
  assert.equal(ended.code, 3, ended.stderr + ended.stdout);
  assert.match(ended.stderr, /lost/);
  const slow = await readFile(join(cassettes, "slow/job/default/1.jsonl"), "utf8").catch(() => null);
  assert.equal(slow === null ? 0 : parseCassette("slow", slow).exchanges.length, 0, "the paused recorder wrote no exchange after losing the folder");
});
