/**
 * bench:workspace (issue 24), run on demand: `npm run bench:workspace [-- --tasks N --rounds R --dir DIR]`.
 *
 * TASKS (default 8) tasks over a generated 20,000-file / 200 MB fixture (bench/workspace/
 * make-fixture.ts, made once under DIR, default the system's temp folder), each a scripted model
 * that writes one file and answers at once (so each end makes a patch, as a task that changes
 * something does), run through the `rhema` executable at concurrency 1 and 4 with each
 * workspace mechanism (`--workspace-layers`): `copy`; `auto`, which as root is the kernel's
 * overlay (the mechanism printed is the one result.json names); `userns`, auto with the sandbox
 * on run by a user who is not root (uid 1234 when the bench runs as root), which mounts the
 * kernel's overlay in a user namespace of its own; `fuse-overlayfs` when it is on PATH. Printed per mechanism and concurrency: each task's prepare time — from its start
 * (result.json `startedAt`) to its first model request (events.jsonl), the copy or mount and the
 * changes snapshot included — as median and max, and the median over the tasks after the first
 * ones, i.e. those started once some task had made its first request (the first pays the run's
 * one-off work: a layered run's base copy into `prepared/`, the fixture's first git index; at
 * concurrency 4 the first four wait for it together: there, tasks 5..N); the run
 * directory's allocated-blocks delta (du-style) per task and in all, split into the shared parts
 * (`prepared/`, `changes-objects/`, `changes-indexes/`) and the median task's own (its layer or
 * copy, as result.json `workspace.diskBytes`, and its `changes.git/` less what is linked to the
 * kept index); the wall time. Beside them
 * `cp -a` of the fixture, alone and 4 at once (each copy's time, median of 3 rounds, each after a
 * `sync`): a copy run at concurrency 4 is held to 4 `cp -a` side by side, which share the disk
 * as its 4 copies do.
 *
 * With `--tasks` over 16 (the 200-task mode, `--tasks 200`) only the layered mechanisms run, at
 * concurrency 4 (N copies of 200 MB would fill the disk), and each prints the run directory's
 * final disk use against the fixture's size, split into the base, what the tasks wrote (their
 * layers), the changes snapshot's git objects and the tasks' `changes.git/`, and the rest.
 *
 * With `--rounds R` every mechanism runs R times, each round in the other order than the one
 * before (the machine's state drifts over a bench: a fixed order favours the first), and each
 * layered mechanism's prepare median is printed per round and as the median over the rounds.
 *
 * Targets (issue 24): where a mount works, a task's prepare ≤ 50 ms and ≤ 1 MB of new disk
 * before the agent writes (the run's disk ≈ the fixture + what tasks wrote); where only the copy
 * works, the copy ≤ 1.5× `cp -a` (as many at once as the run copies).
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { findOnPath } from "../src/process/sandbox-probe.js";
import { allocatedBytes } from "../src/runner/execute/workspace-disk.js";
import { CLI, cliEnv } from "../test/support/cli.js";
import { BENCH_FIXTURE, makeFixture } from "./workspace/make-fixture.js";

const TASKS = numberArg("--tasks", 8);
/** How many times each mechanism runs, in alternating order (`--rounds`). */
const ROUNDS = numberArg("--rounds", 1);
const DIR = stringArg("--dir", join(tmpdir(), "rhema-bench-workspace"));
/** Above this many tasks only layers run: the copies would fill the disk. */
const MANY_TASKS = 16;
const MB = 1024 * 1024;
const PREPARE_TARGET_MS = 50;
const NEW_DISK_TARGET_BYTES = MB;
const COPY_TARGET_FACTOR = 1.5;

/**
 * A mechanism as asked for on the command line; `userns`: auto as a user who is not root (uid
 * 1234 through setpriv when the bench runs as root) with the sandbox on, so rhema mounts the
 * kernel's overlay in a user namespace of its own (process/user-namespace.ts).
 */
type LayersChoice = "copy" | "auto" | "fuse-overlayfs" | "userns";
/** The user the `userns` runs are made as, when the bench runs as root. */
const NOT_ROOT_ID = 1234;

function stringArg(flag: string, fallback: string): string {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : process.argv[at + 1]!;
}
function numberArg(flag: string, fallback: number): number {
  return Number(stringArg(flag, String(fallback)));
}
const median = (xs: number[]): number => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const mb = (bytes: number): string => (bytes / MB).toFixed(bytes < 10 * MB ? 2 : 1);

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
  await writeFile(join(DIR, "suite", "policy.yaml"), "version: 1\ndefault: deny\nrules:\n  - allow: { tools: [write_file] }\n");
  // Each task writes a file, as a task that does something does: its end makes a patch (git runs), beside the others' starts.
  for (let i = 0; i < TASKS; i++) {
    await writeFile(join(dir, `t${i}.yaml`), `prompt: answer\npolicy: ../policy.yaml\nmodel:\n  provider: scripted\n  script:\n    - call: write_file\n      input: { path: "out-${i}.txt", content: "task ${i}\\n" }\n    - say: done\nworkspace: { from: ${JSON.stringify(from)} }\n`);
  }
  return join(DIR, "suite");
}

/** What one trial's files say of it. */
interface TrialFigures {
  startedAtMs: number;
  prepareMs: number;
  requestAtMs: number;
  mechanism: string;
  workspaceBytes: number;
  changesGitBytes: number;
}

/** Each trial's prepare time (its start to its first model request), mechanism and disk. */
async function trialFigures(out: string, task: string): Promise<TrialFigures> {
  const trial = join(out, "tasks", "ws", task, "default", "1");
  const result = JSON.parse(readFileSync(join(trial, "result.json"), "utf8")) as { startedAt: string; workspace: { mechanism: string; diskBytes: number; reason?: string } | null };
  const request = readFileSync(join(trial, "events.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; at: string }).find((e) => e.type === "request");
  const startedAtMs = Date.parse(result.startedAt);
  return {
    startedAtMs, prepareMs: Date.parse(request!.at) - startedAtMs, requestAtMs: Date.parse(request!.at),
    mechanism: result.workspace ? result.workspace.mechanism + (result.workspace.reason ? ` (${result.workspace.reason})` : "") : "none",
    workspaceBytes: result.workspace?.diskBytes ?? 0,
    changesGitBytes: await ownBytes(join(trial, "changes.git")),
  };
}

/**
 * Allocated bytes under `root` of what is its own: a file with other links (a seeded index linked
 * to the kept one) is counted where it is kept, not in each trial.
 */
async function ownBytes(root: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(root, { recursive: true }).catch(() => [] as string[])) {
    const stats = await lstat(join(root, name));
    if (stats.isDirectory() || stats.nlink === 1) bytes += stats.blocks * 512;
  }
  return bytes;
}

/** The run's figures, for the summary. */
interface RunFigures {
  choice: LayersChoice;
  concurrency: number;
  mechanism: string;
  prepareMs: number[];
  afterFirstMs: number[];
  deltaBytes: number;
  sharedBytes: Record<string, number>;
  /** Summed over the tasks: their layers or copies, and their `changes.git/`. */
  workspaceBytes: number;
  changesGitBytes: number;
  wallMs: number;
}

async function runOnce(suiteDir: string, choice: LayersChoice, concurrency: number): Promise<RunFigures> {
  // A user who is not root writes its run directory in a folder it may write in.
  const asUser = choice === "userns" && process.getuid?.() === 0;
  const outParent = asUser ? join(DIR, "as-user") : DIR;
  await mkdir(outParent, { recursive: true, mode: 0o777 });
  if (asUser) await chmod(outParent, 0o777);
  const out = join(outParent, `out-${choice}-c${concurrency}`);
  await rm(out, { recursive: true, force: true });
  // The last run's removed run directory (200 MB and more) is flushed first: its writeback is not this run's time.
  execFileSync("sync");
  const before = (await allocatedBytes(out)) ?? 0;
  const started = performance.now();
  const flags = choice === "userns" ? ["--sandbox", "bwrap", "--workspace-layers", "auto"] : ["--sandbox", "off", "--workspace-layers", choice];
  const command = [...(asUser ? ["setpriv", `--reuid=${NOT_ROOT_ID}`, `--regid=${NOT_ROOT_ID}`, "--clear-groups", "--"] : []), process.execPath, CLI, "run", suiteDir, "--out", out, "--concurrency", String(concurrency), ...flags];
  const child = spawn(command[0]!, command.slice(1), { env: cliEnv(asUser ? { HOME: outParent } : {}), stdio: ["ignore", "ignore", "inherit"] });
  const [code] = await once(child, "close");
  const wallMs = performance.now() - started;
  if (code !== 0) throw new Error(`rhema run --workspace-layers ${choice} exited ${code}`);
  const deltaBytes = ((await allocatedBytes(out)) ?? 0) - before;
  const tasks = (await readdir(join(out, "tasks", "ws"))).sort();
  const trials: TrialFigures[] = [];
  for (const task of tasks) trials.push(await trialFigures(out, task));
  // The run's one-off work (the base, the fixture's first index) is done once some trial asks its model.
  const oneOffDoneAtMs = Math.min(...trials.map((t) => t.requestAtMs));
  const sharedBytes: Record<string, number> = {};
  for (const part of ["prepared", "changes-objects", "changes-indexes"]) sharedBytes[part] = (await allocatedBytes(join(out, part))) ?? 0;
  const figures: RunFigures = {
    choice, concurrency, mechanism: [...new Set(trials.map((t) => t.mechanism))].join(", "),
    prepareMs: trials.map((t) => t.prepareMs), afterFirstMs: trials.filter((t) => t.startedAtMs >= oneOffDoneAtMs).map((t) => t.prepareMs), deltaBytes, sharedBytes, wallMs,
    workspaceBytes: sum(trials.map((t) => t.workspaceBytes)), changesGitBytes: sum(trials.map((t) => t.changesGitBytes)),
  };
  const shared = Object.entries(sharedBytes).map(([part, bytes]) => `${part} ${mb(bytes)}`).join(", ");
  console.log(`${choice.padEnd(14)} c${concurrency}  mechanism ${figures.mechanism}\n` +
    `  prepare median ${median(figures.prepareMs)} ms, max ${Math.max(...figures.prepareMs)} ms, median of the ${figures.afterFirstMs.length} tasks started after the first request ${median(figures.afterFirstMs)} ms\n` +
    `  disk +${mb(deltaBytes)} MB (${mb(deltaBytes / tasks.length)} MB per task): shared ${shared} MB; ` +
    `median task's workspace ${mb(median(trials.map((t) => t.workspaceBytes)))} MB, changes.git ${mb(median(trials.map((t) => t.changesGitBytes)))} MB\n` +
    `  wall ${(wallMs / 1000).toFixed(1)} s for ${tasks.length} tasks; load ${loadavg()[0]!.toFixed(2)}`);
  await rm(out, { recursive: true, force: true });
  return figures;
}

/**
 * `cp -a` of the fixture, `side` copies at once (as a run at concurrency `side` copies): each
 * copy's time, the median over 3 rounds, each round after a `sync`.
 */
async function cpATimeMs(from: string, side: number): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < 3; round++) {
    const targets = Array.from({ length: side }, (_, i) => join(DIR, `cp-a-${i}`));
    execFileSync("rm", ["-rf", ...targets]);
    // The runs' removed copies and written files are flushed first: their writeback is not cp's time.
    execFileSync("sync");
    times.push(...(await Promise.all(targets.map(async (to) => {
      const started = performance.now();
      const child = spawn("cp", ["-a", from, to], { stdio: "ignore" });
      const [code] = await once(child, "close");
      if (code !== 0) throw new Error(`cp -a exited ${code}`);
      return performance.now() - started;
    }))));
    execFileSync("rm", ["-rf", ...targets]);
  }
  return median(times);
}

/** Each run against its target (see the header). */
function printTargets(runs: RunFigures[], cpAMs: ReadonlyMap<number, number>, fixtureBytes: number): void {
  console.log("\ntargets (issue 24):");
  for (const run of runs) {
    const tasks = run.prepareMs.length;
    const name = `${run.choice} c${run.concurrency}`.padEnd(20);
    if (run.choice === "copy") {
      // Against cp -a copying as many at once as the run does: the disk's share is the same on both sides.
      const limit = COPY_TARGET_FACTOR * (cpAMs.get(run.concurrency) ?? NaN);
      const alone = cpAMs.get(1) ?? NaN;
      console.log(`  ${name} prepare median ${median(run.prepareMs)} ms vs ≤ ${COPY_TARGET_FACTOR}× cp -a ${run.concurrency > 1 ? `(${run.concurrency} side by side) ` : ""}= ${limit.toFixed(0)} ms: ${median(run.prepareMs) <= limit ? "met" : "MISSED"}` +
        (run.concurrency > 1 ? ` (${(median(run.prepareMs) / alone).toFixed(2)}× one cp -a alone)` : ""));
      continue;
    }
    const perTask = median(run.afterFirstMs);
    const later = `tasks started after the first request (${run.afterFirstMs.length})`;
    // What the tasks themselves added: the run's delta less the shared base and object store made once a run.
    const sharedOnce = sum(Object.values(run.sharedBytes));
    const newPerTask = (run.deltaBytes - sharedOnce) / tasks;
    console.log(`  ${name} prepare of ${later} median ${perTask} ms vs ≤ ${PREPARE_TARGET_MS} ms: ${perTask <= PREPARE_TARGET_MS ? "met" : "MISSED"}; ` +
      `new disk per task ${mb(newPerTask)} MB vs ≤ ${mb(NEW_DISK_TARGET_BYTES)} MB: ${newPerTask <= NEW_DISK_TARGET_BYTES ? "met" : "MISSED"}; ` +
      `run dir ${mb(run.deltaBytes)} MB = ${(run.deltaBytes / fixtureBytes).toFixed(2)}× the fixture (${mb(fixtureBytes)} MB): ` +
      `base ${mb(run.sharedBytes.prepared ?? 0)} + what tasks wrote (layers) ${mb(run.workspaceBytes)} + git objects ${mb(run.sharedBytes["changes-objects"] ?? 0)} ` +
      `+ tasks' changes.git ${mb(run.changesGitBytes)} + the rest ${mb(run.deltaBytes - (run.sharedBytes.prepared ?? 0) - (run.sharedBytes["changes-objects"] ?? 0) - run.workspaceBytes - run.changesGitBytes)} MB`);
  }
}

async function main(): Promise<void> {
  await mkdir(DIR, { recursive: true });
  const from = await fixture();
  const fixtureBytes = (await allocatedBytes(from)) ?? 0;
  const many = TASKS > MANY_TASKS;
  const fuse = await findOnPath("fuse-overlayfs", process.env.PATH ?? "");
  const choices: LayersChoice[] = [...(many ? [] : ["copy" as const]), "auto", "userns", ...(fuse !== null ? ["fuse-overlayfs" as const] : [])];
  console.log(`fixture ${from}: ${BENCH_FIXTURE.files} files, ${mb(fixtureBytes)} MB allocated; ${TASKS} tasks; ` +
    `fuse-overlayfs ${fuse ?? "not on PATH (not measured)"}; uid ${process.getuid?.() ?? "?"}; load ${loadavg()[0]!.toFixed(2)}`);
  const suiteDir = await suite(from);
  const runs: RunFigures[] = [];
  // Each round runs every mechanism, in the other order than the round before: a run's figures
  // move with the machine's state (the disk's writeback, the load), which drifts over a bench.
  for (let round = 0; round < ROUNDS; round++) {
    if (ROUNDS > 1) console.log(`round ${round + 1} of ${ROUNDS}`);
    for (const choice of round % 2 === 0 ? choices : [...choices].reverse()) {
      for (const concurrency of many ? [4] : [1, 4]) runs.push(await runOnce(suiteDir, choice, concurrency));
    }
  }
  const cpAMs = new Map<number, number>();
  for (const side of many ? [] : [1, 4]) {
    cpAMs.set(side, await cpATimeMs(from, side));
    console.log(`cp -a of the fixture, ${side} at once: ${cpAMs.get(side)!.toFixed(0)} ms each (median of 3 rounds); load ${loadavg()[0]!.toFixed(2)}`);
  }
  printTargets(runs, cpAMs, fixtureBytes);
  if (ROUNDS > 1) printRounds(runs);
}

/** Over the rounds: each layered mechanism's median prepare (of the tasks after the first request), run by run and their median. */
function printRounds(runs: RunFigures[]): void {
  console.log(`\nover ${ROUNDS} rounds (prepare median of the tasks started after the first request):`);
  for (const key of [...new Set(runs.filter((r) => r.choice !== "copy").map((r) => `${r.choice} c${r.concurrency}`))]) {
    const medians = runs.filter((r) => `${r.choice} c${r.concurrency}` === key).map((r) => median(r.afterFirstMs));
    console.log(`  ${key.padEnd(20)} ${medians.join(", ")} ms: median ${median(medians)} ms vs ≤ ${PREPARE_TARGET_MS} ms: ${median(medians) <= PREPARE_TARGET_MS ? "met" : "MISSED"}`);
  }
}

await main();
