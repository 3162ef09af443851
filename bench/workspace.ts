/**
 * bench:workspace (issue 24), run on demand: `npm run bench:workspace [-- --tasks N --dir DIR]`.
 *
 * TASKS (default 8) tasks over a generated 20,000-file / 200 MB fixture (bench/workspace/
 * make-fixture.ts, made once under DIR, default the system's temp folder), each a scripted model
 * that answers at once, run through the `rhema` executable at concurrency 1 and 4. Printed per
 * concurrency: the mechanism (`copy`), each task's prepare time — from its start (result.json
 * `startedAt`) to its first model request (events.jsonl), the copy and the changes snapshot
 * included — as median and max, the run directory's allocated-blocks delta (du-style) per task
 * and in all, and the wall time; beside them `cp -a` of the fixture (median of 3).
 * Targets (issue 24): where only the copy works, the copy ≤ 1.5× `cp -a`.
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { allocatedBytes } from "../src/runner/execute/workspace-disk.js";
import { CLI, cliEnv } from "../test/support/cli.js";
import { BENCH_FIXTURE, makeFixture } from "./workspace/make-fixture.js";

const TASKS = numberArg("--tasks", 8);
const DIR = stringArg("--dir", join(tmpdir(), "rhema-bench-workspace"));
const MB = 1024 * 1024;

function stringArg(flag: string, fallback: string): string {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : process.argv[at + 1]!;
}
function numberArg(flag: string, fallback: number): number {
  return Number(stringArg(flag, String(fallback)));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function fixture(): Promise<string> {
  const root = join(DIR, "fixture");
  const done = join(DIR, "fixture.done");
  if (!existsSync(done)) {
    await rm(root, { recursive: true, force: true });
    console.log("making the fixture…", await makeFixture(root, BENCH_FIXTURE));
    await writeFile(done, "");
  }
  return root;
}

async function suite(from: string): Promise<string> {
  const dir = join(DIR, "suite", "ws");
  await rm(join(DIR, "suite"), { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < TASKS; i++) {
    await writeFile(join(dir, `t${i}.yaml`), `prompt: answer\nmodel:\n  provider: scripted\n  script:\n    - say: done\nworkspace: { from: ${JSON.stringify(from)} }\n`);
  }
  return join(DIR, "suite");
}

/** Each trial's prepare time: its start to its first model request. */
function prepareTimesMs(out: string, tasks: string[]): number[] {
  return tasks.map((task) => {
    const trial = join(out, "tasks", "ws", task, "default", "1");
    const result = JSON.parse(readFileSync(join(trial, "result.json"), "utf8")) as { startedAt: string };
    const request = readFileSync(join(trial, "events.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; at: string }).find((e) => e.type === "request");
    return Date.parse(request!.at) - Date.parse(result.startedAt);
  });
}

async function runAt(suiteDir: string, concurrency: number): Promise<void> {
  const out = join(DIR, `out-c${concurrency}`);
  await rm(out, { recursive: true, force: true });
  const before = (await allocatedBytes(out)) ?? 0;
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, "run", suiteDir, "--out", out, "--concurrency", String(concurrency), "--sandbox", "off"], { env: cliEnv(), stdio: ["ignore", "ignore", "inherit"] });
  const [code] = await once(child, "close");
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`rhema run exited ${code}`);
  const delta = ((await allocatedBytes(out)) ?? 0) - before;
  const tasks = (await readdir(join(out, "tasks", "ws"))).sort();
  const prepare = prepareTimesMs(out, tasks);
  console.log(`concurrency ${concurrency}  mechanism copy  prepare median ${median(prepare)} ms, max ${Math.max(...prepare)} ms  ` +
    `disk +${(delta / MB).toFixed(1)} MB (${(delta / tasks.length / MB).toFixed(1)} MB per task)  wall ${(wallMs / 1000).toFixed(1)} s for ${tasks.length} tasks`);
  await rm(out, { recursive: true, force: true });
}

function cpATimeMs(from: string): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const to = join(DIR, "cp-a");
    execFileSync("rm", ["-rf", to]);
    const started = performance.now();
    execFileSync("cp", ["-a", from, to]);
    times.push(performance.now() - started);
    execFileSync("rm", ["-rf", to]);
  }
  return median(times);
}

async function main(): Promise<void> {
  await mkdir(DIR, { recursive: true });
  const from = await fixture();
  const fixtureBytes = (await allocatedBytes(from)) ?? 0;
  console.log(`fixture ${from}: ${BENCH_FIXTURE.files} files, ${(fixtureBytes / MB).toFixed(0)} MB allocated; ${TASKS} tasks; load ${loadavg()[0]!.toFixed(2)}`);
  const suiteDir = await suite(from);
  for (const concurrency of [1, 4]) await runAt(suiteDir, concurrency);
  console.log(`cp -a of the fixture: ${cpATimeMs(from).toFixed(0)} ms (median of 3); load ${loadavg()[0]!.toFixed(2)}`);
}

await main();
