/**
 * Nothing rhema starts outlives it, SIGKILL included: a stand-in for rhema (a child node process)
 * runs `(sleep 2; echo late >> tags.log) & sleep 3` through the shell tool and is SIGKILLed 0.5 s
 * in — its pid alone, or its whole process group — with the sandbox on and off. A second after,
 * no process of the command runs; 4 s after, `late` was never written (the check that holds even
 * when a loaded machine makes the scan of /proc slow).
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { exists } from "../../src/process/process-table.js";
import { DEFAULT_PATH } from "../../src/tools/shell.js";
import { hostDir, processesMarked, sandboxSkip, startDriver } from "./sandbox-fixture.js";

const skipSandbox = await sandboxSkip();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function killMidCommand(t: TestContext, opts: { sandbox: boolean; target: "pid" | "group" }): Promise<void> {
  const ws = await hostDir(t);
  const mark = `rhema-orphan-${opts.sandbox ? "sbx" : "plain"}-${opts.target}-${process.pid}`;
  const command = "echo begun >> tags.log; (sleep 2; echo late >> tags.log) & sleep 3";
  const driver = startDriver({
    workspace: ws, command, env: { PATH: DEFAULT_PATH, RHEMA_ORPHAN_MARK: mark },
    ...(opts.sandbox ? { sandbox: { network: false } } : {}),
  }, { PATH: process.env.PATH ?? DEFAULT_PATH, RHEMA_ORPHAN_MARK: mark });
  const exited = new Promise((r) => driver.once("exit", r));
  t.after(() => {
    try {
      process.kill(-driver.pid!, "SIGKILL");
    } catch {
      // killed by the test, as planned
    }
  });
  let out = "";
  driver.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  // 0.5 s into the command (on a loaded machine the stand-in may take longer than that to start it).
  const deadline = Date.now() + 10_000;
  while ((await readFile(join(ws, "tags.log"), "utf8").catch(() => "")) !== "begun\n") {
    assert.ok(Date.now() < deadline, "the command never began");
    await sleep(20);
  }
  const begun = Date.now();
  const group = JSON.parse(/^started (.*)$/m.exec(out)?.[1] ?? "null") as { pgid: number } | null;
  assert.ok(group && exists(-group.pgid), `the command's group is not running: ${out}`);
  await sleep(begun + 500 - Date.now());
  assert.ok(Date.now() - begun < 1000, `the machine is too slow for this test: ${Date.now() - begun} ms`);
  process.kill(opts.target === "pid" ? driver.pid! : -driver.pid!, "SIGKILL");
  await exited;
  await sleep(1000);
  assert.deepEqual(await processesMarked(mark), [], "processes of the command outlived rhema");
  await sleep(3000);
  assert.equal(await readFile(join(ws, "tags.log"), "utf8"), "begun\n", "the background job wrote after rhema died");
}

test("a SIGKILLed rhema leaves nothing of its shell command running", { concurrency: true }, async (t) => {
  await Promise.all([
    t.test("unsandboxed, rhema's pid killed", (st) => killMidCommand(st, { sandbox: false, target: "pid" })),
    t.test("unsandboxed, rhema's whole group killed", (st) => killMidCommand(st, { sandbox: false, target: "group" })),
    t.test("sandboxed, rhema's pid killed", { skip: skipSandbox }, (st) => killMidCommand(st, { sandbox: true, target: "pid" })),
    t.test("sandboxed, rhema's whole group killed", { skip: skipSandbox }, (st) => killMidCommand(st, { sandbox: true, target: "group" })),
  ]);
});
