/**
 * The death watch stops a killed rhema's command at once: a command three subshells deep (so
 * the watcher's walk of its process tree takes several passes over /proc) writes a timestamp
 * in a loop; its stand-in rhema is SIGKILLed; the last timestamp may follow the kill by a few
 * milliseconds only — the group is frozen before the walk, not killed after it (which let the
 * command run on 50–170 ms on a busy machine). The median of three kills is judged, so one
 * scheduling hiccup does not decide.
 */
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { DEFAULT_PATH } from "../../src/tools/shell.js";
import { sleep } from "../support/test-tools.js";
import { hostDir, startDriver } from "./sandbox-fixture.js";

/** How long after rhema's death the command may still write. */
const LIMIT_MS = 40;
const KILLS = 3;

async function writesAfterKillMs(ws: string): Promise<number> {
  const log = join(ws, "times.log");
  const command = `f() { if [ "$1" -gt 0 ]; then ( f $(($1 - 1)) ); else while :; do date +%s%N >> ${log}; done; fi; }; f 3`;
  const driver = startDriver({ workspace: ws, command, env: { PATH: DEFAULT_PATH } }, { PATH: process.env.PATH ?? DEFAULT_PATH });
  const exited = new Promise((r) => driver.once("exit", r));
  const deadline = Date.now() + 10_000;
  while ((await readFile(log, "utf8").catch(() => "")).split("\n").length < 50) {
    assert.ok(Date.now() < deadline, "the command never began writing");
    await sleep(20);
  }
  const killedAtMs = Date.now();
  process.kill(driver.pid!, "SIGKILL");
  await exited;
  await sleep(1000);
  const lines = (await readFile(log, "utf8")).trim().split("\n");
  await rm(log);
  return Number(BigInt(lines.at(-1)!) / 1_000_000n) - killedAtMs;
}

test("a SIGKILLed rhema's command stops writing within milliseconds, however deep its process tree", async (t) => {
  const ws = await hostDir(t, "rhema-death-watch-");
  const lags: number[] = [];
  for (let i = 0; i < KILLS; i++) lags.push(await writesAfterKillMs(ws));
  const median = [...lags].sort((a, b) => a - b)[Math.floor(KILLS / 2)]!;
  t.diagnostic(`last write after the kill (ms): ${lags.join(" ")}`);
  assert.ok(median <= LIMIT_MS, `the command wrote ${median} ms after rhema died (median of ${lags.join(", ")}; limit ${LIMIT_MS} ms)`);
});
