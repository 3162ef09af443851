/**
 * bench/runner: the runner's own cost, run on demand (`npm run bench:runner [TASKS] [RUNS]`).
 *
 * TASKS (default 200) tasks, each a zero-latency scripted model reading one file and answering,
 * with one check (`true`), run through the `rhema` executable at concurrency 1, 2 and 8: tasks per second
 * and the runner's wall time per task. Then RUNS (default 7) fresh processes each, read off the
 * `--json` event stream as its lines arrive, on two suites — one task whose first call is a shell
 * command, and the example suite (tasks/), after one process that starts without a code cache:
 *   process start → first model request (target ≤ 0.5 s), and the CPU the process had used by
 *     then (user + system, from /proc: what the figure would be on an idle machine, near enough);
 *   first response → first tool start, from a call's `tool_call` event (the scripted model's
 *     response is complete) to its `approval` (the tool starts at once after it), for the first
 *     call of the run and for its first shell call, which needs the bash grammar (target ≤ 100 ms).
 * And the planner's share (issue 21): in this process, the TASKS tasks loaded, then planned
 * (planSuite: provider, worker, pricing, approval, sandbox, environment per task) and expanded into
 * trials, each trial's provider and approval made — median of 5 — against the median wall time of
 * 5 runs of the same suite at concurrency 8 (target ≤ 5 %; also at 5 repeats per task).
 * The machine's load average is printed with the figures: on a shared machine they are noisy,
 * and the medians are what to compare.
 */
import { spawn } from "node:child_process";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { planSuite } from "../src/runner/plan/plan-suite.js";
import { loadTasks } from "../src/runner/tasks/suite-loader.js";
import { taskKey } from "../src/runner/tasks/task-key.js";
import { trialsOf } from "../src/runner/trials/trial.js";
import { CLI } from "../test/support/cli.js";
import { repoRoot } from "../test/support/paths.js";

const TASKS = Number(process.argv[2] ?? 200);
const RUNS = Number(process.argv[3] ?? 7);
const EXAMPLE_SUITE = join(repoRoot, "tasks");
/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_S = 100;

const POLICY = `version: 1
default: deny
rules:
  - allow: { tools: [read_file] }
  - allow: { shell: ["cat a.txt"] }
`;

/** A task over the fixture whose one call is `call` with `input`, then a reply; one check. */
const fixtureTask = (prompt: string, call: string, input: string) => `prompt: ${prompt}
workspace: { from: ../fixture }
policy: ../policy.yaml
model:
  provider: scripted
  script:
    - call: ${call}
      input: ${input}
    - say: It says hello.
checks:
  - { name: ok, run: "true" }
`;

async function writeSuite(root: string): Promise<void> {
  await mkdir(join(root, "fixture"), { recursive: true });
  await writeFile(join(root, "fixture/a.txt"), "hello\n");
  await writeFile(join(root, "policy.yaml"), POLICY);
  await mkdir(join(root, "bench"), { recursive: true });
  await mkdir(join(root, "first"), { recursive: true });
  await writeFile(join(root, "first", "shell.yaml"), fixtureTask("Show a.txt.", "shell", "{ command: cat a.txt }"));
  const readTask = fixtureTask("Read a.txt.", "read_file", "{ path: a.txt }");
  for (let i = 0; i < TASKS; i++) await writeFile(join(root, "bench", `task-${String(i).padStart(3, "0")}.yaml`), readTask);
}

interface CliRun {
  code: number | null;
  wallMs: number;
}

/** Where the runs keep their code cache (src/cli/code-cache.ts): the bench's own, so it can start cold. */
let codeCacheDir = "";

function runCli(args: string[], cwd: string, onLine?: (line: string, atMs: number, pid: number) => void): Promise<CliRun> {
  const started = performance.now();
  const env = { ...process.env, CI: "true", RHEMA_COMPILE_CACHE: codeCacheDir };
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ["ignore", "pipe", "ignore"], env });
  let buffer = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      onLine?.(buffer.slice(0, nl), performance.now() - started, child.pid!);
      buffer = buffer.slice(nl + 1);
    }
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, wallMs: performance.now() - started })));
}

/** CPU milliseconds (user + system) process `pid` has used so far, or null off Linux. */
function cpuMsOf(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces, hence the last ")"): utime is the 14th field, stime the 15th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

/** The median of `samples` (the upper one of an even count). */
function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Milliseconds to plan the suite in `dir` and expand it into trials of `repeats` each, with every
 * trial's provider and approval made (what the runner asks of a plan per trial). Loading the task
 * files is left out: the runner read them before trials too.
 */
async function planningMs(dir: string, repeats: number): Promise<{ ms: number; trials: number }> {
  const loaded = await loadTasks([dir], { cwd: root });
  const started = performance.now();
  const suite = await planSuite(loaded.tasks, {}, { cwd: root, env: { PATH: process.env.PATH ?? "" } });
  const trials = loaded.tasks.flatMap((task) => trialsOf(task, repeats));
  for (const trial of trials) {
    const plan = suite.plans.get(taskKey(trial.task))!;
    plan.providerFor(trial.key);
    plan.approvalFor(trial.key);
  }
  return { ms: performance.now() - started, trials: trials.length };
}

async function reportPlanningShare(): Promise<void> {
  const walls: number[] = [];
  for (let run = 0; run < 5; run++) {
    const out = join(root, `share-${run}`);
    const { code, wallMs } = await runCli(["run", "bench", "--out", out, "--concurrency", "8"], root);
    if (code !== 0) throw new Error(`the run at concurrency 8 exited ${code}`);
    walls.push(wallMs);
  }
  const wallMs = median(walls);
  console.log(`planning and trial expansion (load average ${loadavg()[0]!.toFixed(1)}), against the ${TASKS}-task wall time at concurrency 8, median ${(wallMs / 1000).toFixed(2)} s of 5 runs:`);
  for (const repeats of [1, 5]) {
    const samples: { ms: number; trials: number }[] = [];
    for (let run = 0; run < 5; run++) samples.push(await planningMs(join(root, "bench"), repeats));
    const ms = median(samples.map((s) => s.ms));
    console.log(`  ${samples[0]!.trials} trials (${repeats} per task): median ${ms.toFixed(1)} ms of 5 (${samples.map((s) => s.ms.toFixed(1)).join(", ")}) = ` +
      `${((100 * ms) / (wallMs * repeats)).toFixed(2)} % of the wall time${repeats > 1 ? ` × ${repeats}` : ""} (target ≤ 5 %)`);
  }
}

/** "median N ms (of a, b, …)", or a note that the events were missing. */
function medianOf(samplesMs: number[]): string {
  if (samplesMs.length === 0) return "no sample (the events were not seen)";
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms (of ${samplesMs.map((f) => f.toFixed(0)).join(", ")})`;
}

/** The first-call figures of one fresh process, read off its `--json` events as they arrive. */
interface FirstCalls {
  requestMs?: number;
  requestCpuMs?: number;
  toolStartMs?: number;
  shellStartMs?: number;
}

async function firstCalls(args: string[], cwd: string): Promise<FirstCalls> {
  const figures: FirstCalls = {};
  const callAt = new Map<string, { atMs: number; shell: boolean }>();
  const { code } = await runCli([...args, "--json"], cwd, (line, atMs, pid) => {
    const outer = JSON.parse(line) as { type: string; task?: string; event?: { type: string; callId?: string; name?: string } };
    const event = outer.event;
    if (!event) return;
    if (event.type === "request" && figures.requestMs === undefined) {
      figures.requestMs = atMs;
      const cpuMs = cpuMsOf(pid);
      if (cpuMs !== null) figures.requestCpuMs = cpuMs;
    }
    const key = `${outer.task}/${event.callId}`;
    if (event.type === "tool_call") callAt.set(key, { atMs, shell: event.name === "shell" });
    const call = callAt.get(key);
    if (event.type !== "approval" || !call) return;
    figures.toolStartMs ??= atMs - call.atMs;
    if (call.shell) figures.shellStartMs ??= atMs - call.atMs;
  });
  if (code !== 0 && code !== 1) throw new Error(`rhema ${args.join(" ")} exited ${code}`);
  return figures;
}

/**
 * RUNS fresh processes after one that starts without a code cache (the first run after an
 * install or upgrade, which compiles the bundle and saves the cache): the medians are of the RUNS.
 */
async function reportFirstCalls(label: string, args: (run: number) => string[], cwd: string): Promise<void> {
  await rm(codeCacheDir, { recursive: true, force: true });
  const cold = await firstCalls(args(-1), cwd);
  const runs: FirstCalls[] = [];
  for (let run = 0; run < RUNS; run++) runs.push(await firstCalls(args(run), cwd));
  const pick = (key: keyof FirstCalls) => runs.flatMap((r) => (r[key] === undefined ? [] : [r[key]]));
  console.log(`${label}, ${RUNS} fresh processes (load average ${loadavg()[0]!.toFixed(1)}):`);
  console.log(`  process start → first model request: ${medianOf(pick("requestMs"))} (target ≤ 500 ms)`);
  console.log(`    CPU used by then: ${medianOf(pick("requestCpuMs"))}`);
  console.log(`    without a code cache (the first run): ${cold.requestMs?.toFixed(0) ?? "?"} ms, CPU ${cold.requestCpuMs?.toFixed(0) ?? "?"} ms`);
  console.log(`  first response → first tool start: ${medianOf(pick("toolStartMs"))}`);
  console.log(`  first response → first shell tool start: ${medianOf(pick("shellStartMs"))} (target ≤ 100 ms)`);
}

const root = await mkdtemp(join(tmpdir(), "rhema-bench-runner-"));
codeCacheDir = join(root, "code-cache");
try {
  await writeSuite(root);
  console.log(`${TASKS} tasks, zero-latency scripted model, one read_file call and one check each (load average ${loadavg()[0]!.toFixed(1)})`);
  for (const concurrency of [1, 2, 8]) {
    const out = join(root, `run-${concurrency}`);
    const { code, wallMs } = await runCli(["run", "bench", "--out", out, "--concurrency", String(concurrency)], root);
    if (code !== 0) throw new Error(`the run at concurrency ${concurrency} exited ${code}`);
    console.log(`  concurrency ${concurrency}: ${(TASKS / (wallMs / 1000)).toFixed(1)} tasks/s, ${(wallMs / TASKS).toFixed(1)} ms wall per task (${(wallMs / 1000).toFixed(1)} s in all)`);
  }
  await reportPlanningShare();
  await reportFirstCalls("one task whose first call is a shell command", (run) => ["run", "first", "--out", join(root, `first-${run}`)], root);
  await reportFirstCalls("the example suite (tasks/)", (run) => ["run", EXAMPLE_SUITE, "--out", join(root, `example-${run}`)], root);
} finally {
  await rm(root, { recursive: true, force: true });
}
