import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { descendantPids, exists, groupRunning, isRunning } from "../../src/process/process-table.js";

test("this process runs; a finished child does not", async () => {
  assert.equal(await isRunning(process.pid), true);
  const child = spawn("true");
  await once(child, "exit");
  assert.equal(exists(child.pid!), false);
  assert.equal(await isRunning(child.pid!), false);
});

test("descendantPids finds grandchildren, and groupRunning sees a detached group until it is killed", async (t) => {
  const child = spawn("bash", ["-c", "sleep 30 & sleep 30; wait"], { detached: true, stdio: "ignore" });
  t.after(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone
    }
  });
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await descendantPids(child.pid!)).length, 2);
  assert.equal(await groupRunning(child.pid!), true);
  process.kill(-child.pid!, "SIGKILL");
  await once(child, "exit");
  const deadline = Date.now() + 3000;
  while ((await groupRunning(child.pid!)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  assert.equal(await groupRunning(child.pid!), false);
});
