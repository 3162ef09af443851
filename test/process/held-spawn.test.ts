/** Held spawn: the group exists and is known before anything runs; release runs it, discard runs nothing. */
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { spawnHeld } from "../../src/process/held-spawn.js";
import { currentPidScope } from "../../src/process/pid-scope.js";
import { exists } from "../../src/process/process-table.js";
import { TAKE_EVERY_HANDLE, nodeUnderFileLimit } from "../support/file-limit.js";
import { tempDir } from "../support/temp-dir.js";

const ENV = { PATH: "/usr/bin:/bin" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Field 22 of /proc/<pid>/stat, read here independently of the code under test. */
async function startTimeFromProc(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

test("nothing runs before release; the identity is this host, the leader's pid as pgid and its /proc start time", async (t) => {
  const ws = await tempDir(t);
  const held = await spawnHeld({ argv: ["bash", "-c", 'echo "ran as $$" > marker'], cwd: ws, env: ENV });
  t.after(() => held.discard()); // a failed assertion must not leave it held (and this test hanging)
  await sleep(300);
  assert.equal(existsSync(join(ws, "marker")), false, "the command ran before release");
  assert.equal(held.host, hostname());
  assert.equal(held.pgid, held.child.pid);
  assert.ok(exists(-held.pgid), "the process group does not exist");
  assert.equal(held.startTime, await startTimeFromProc(held.pgid));
  assert.deepEqual(held.pidScope, await currentPidScope(), "the identity names no pid namespace and boot");
  let out = "";
  held.child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  held.release();
  held.release();
  const [code] = await once(held.child, "exit");
  assert.equal(code, 0);
  // exec kept the process: the command ran as the leader itself.
  assert.equal(await readFile(join(ws, "marker"), "utf8"), `ran as ${held.pgid}\n`);
  assert.equal(out, "");
});

test("discard kills the held group and nothing runs", async (t) => {
  const ws = await tempDir(t);
  const held = await spawnHeld({ argv: ["touch", "marker"], cwd: ws, env: ENV });
  await held.discard();
  assert.equal(exists(held.pgid), false);
  await sleep(100);
  assert.equal(existsSync(join(ws, "marker")), false);
});

test("a holder whose pipe closes without release runs nothing", async (t) => {
  const ws = await tempDir(t);
  const held = await spawnHeld({ argv: ["touch", "marker"], cwd: ws, env: ENV });
  held.child.stdio[3]!.destroy();
  const [code, signal] = await once(held.child, "exit");
  // Closed before the holder said "r": its printf meets a closed pipe and SIGPIPE ends it; after: its read sees EOF, exit 125.
  assert.ok(code === 125 || signal === "SIGPIPE", `exit ${code}, signal ${signal}`);
  assert.equal(existsSync(join(ws, "marker")), false);
});

test("the released command does not inherit the hold pipe", async (t) => {
  const ws = await tempDir(t);
  const held = await spawnHeld({ argv: ["bash", "-c", "[ -e /proc/$$/fd/3 ] && echo fd3-open || echo fd3-closed"], cwd: ws, env: ENV });
  t.after(() => held.discard());
  let out = "";
  held.child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  const closed = once(held.child, "close");
  held.release();
  await closed;
  assert.equal(out, "fd3-closed\n");
});

test("a spawn that fails for want of file handles rejects with EMFILE and never crashes the process (no unhandled 'error')", async (t) => {
  const dir = await tempDir(t);
  const heldSpawn = new URL("../../src/process/held-spawn.js", import.meta.url).href;
  // Uses up the file handles but a few (too few for the four pipes of a held spawn), then spawns.
  const result = nodeUnderFileLimit(64, `
    import { openSync, closeSync } from "node:fs";
    import { spawnHeld } from ${JSON.stringify(heldSpawn)};
    ${TAKE_EVERY_HANDLE}
    for (const fd of held.splice(-3)) closeSync(fd);
    try {
      const held = await spawnHeld({ argv: ["true"], cwd: ${JSON.stringify(dir)}, env: { PATH: "/usr/bin:/bin" } });
      await held.discard();
      console.log("spawned");
    } catch (err) {
      console.log("rejected " + (err.code ?? err.message));
    }
    for (const fd of held) closeSync(fd);
    setTimeout(() => console.log("alive"), 100);
  `);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /^rejected EMFILE\nalive\n$/, result.stdout + result.stderr);
});

test("a holder orphaned outside its group (its wrapper gone before the release) exits, running nothing, once the hold is dropped", async (t) => {
  const ws = await tempDir(t);
  const mark = `rhema-orphan-holder-${process.pid}`;
  // `setsid -f`: the holder forks into a session of its own and the leader exits at once, as an
  // outer bwrap killed before the release leaves its inner one behind.
  const held = await spawnHeld({ argv: ["bash", "-c", "echo ran > marker", mark], cwd: ws, env: ENV, wrap: (holder) => ["setsid", "-f", ...holder] });
  await held.exited;
  const holders = () => spawnSync("pgrep", ["-f", mark]).stdout.toString().trim();
  t.after(() => void spawnSync("pkill", ["-f", mark])); // when the drop failed, the test must still end
  await sleep(200);
  assert.notEqual(holders(), "", "the orphaned holder waits for its release");
  held.dropHold();
  const deadline = Date.now() + 5000;
  while (holders() !== "" && Date.now() < deadline) await sleep(50);
  assert.equal(holders(), "", "the holder still waits: the pipe keeps it (and rhema) alive");
  assert.equal(existsSync(join(ws, "marker")), false, "the command ran");
});
