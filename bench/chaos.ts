/**
 * Benchmark, run on demand (not a test): `npm run bench:chaos [-- --kills N] [--seed S]
 * [--concurrency C] [--repeats R]`. SIGKILLs the CLI N times (default 200) — its pid or its whole
 * process group, at random — while it runs a concurrent suite of scripted tasks, each R trials
 * (`rhema run --repeats R`, default 1: one trial per task), whose setup commands, shell calls and
 * checks each append a line naming their trial to a log outside the workspace
 * (test/support/chaos-suite.ts), resuming after each kill until the suite is done; when a run
 * finishes before the kills are spent, a fresh run directory starts another round. Each kill
 * lands a random time after the spawn, up to half an uninterrupted run's wall time, so with the
 * resumes in between the kills fall over the whole run: startup, setup, the turn, checks.
 *
 * Prints, beside the uninterrupted run of the same trials (test/support/chaos-tally.ts decides
 * each figure, trial by trial): kills, duplicated side effects (a finished setup command,
 * completed call or finished check of a trial that ran again in that trial, or anything of a
 * trial not planned), lost results (a planned trial without a result.json, or whose outcome,
 * calls or workspace differ from the uninterrupted run's), calls that never started but were reported interrupted
 * (target 0), processes alive after a kill (target 0), effects written after rhema died, files
 * that did not parse, the allowed re-runs, and the wall time. Exits 1 when a target is missed,
 * keeping that round's folder for a look.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ChaosRun, type KillPlan, writeChaosSuite } from "../test/support/chaos-run.js";
import type { ChaosSuiteShape, Effect } from "../test/support/chaos-suite.js";
import { type ChaosTally, type FinalRun, expectedUninterrupted, tallyChaos } from "../test/support/chaos-tally.js";
import { type SeededRandom, seedFrom, seededRandom } from "../test/support/seeded-random.js";

/** The suite's shape; `repeats` comes from the flag. */
const SHAPE: Omit<ChaosSuiteShape, "repeats"> = {
  tasks: ["t1", "t2", "t3", "t4"], calls: 6, setupCommands: 2, checks: 2, commandSleepS: 0.6, callSleepS: 0.15, chunkDelayMs: 10,
};
/** A round that has not finished after this many attempts is stuck. */
const MAX_ATTEMPTS_PER_ROUND = 200;

interface Flags {
  kills: number;
  seed: number;
  concurrency: number;
  shape: ChaosSuiteShape;
}

/** The flags, or a message saying which one is wrong and what it got. */
function parseFlags(argv: readonly string[]): Flags {
  const known = new Set(["--kills", "--seed", "--concurrency", "--repeats"]);
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i]!;
    if (!known.has(flag)) throw new Error(`unknown flag ${JSON.stringify(flag)}: expected --kills N, --seed S, --concurrency C, --repeats R`);
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    values.set(flag, value);
  }
  const whole = (flag: string, fallback: number): number => {
    const text = values.get(flag);
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`Expected ${flag} to be a whole number from 1 up, got ${JSON.stringify(text)}`);
    return Number(text);
  };
  return {
    kills: whole("--kills", 200), seed: seedFrom(values.get("--seed"), "--seed"), concurrency: whole("--concurrency", 3),
    shape: { ...SHAPE, repeats: whole("--repeats", 1) },
  };
}

/** Where the kill landed: the kind of the last effect the killed run wrote, or "startup" when it wrote none. */
type KillPhase = Effect["kind"] | "startup";

interface Round {
  tally: ChaosTally;
  phases: KillPhase[];
  targets: KillPlan["target"][];
  wallMs: number;
  root: string;
}

async function freshRoot(): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), "rhema-chaos-bench-")));
}

/** The uninterrupted run the rounds are compared with, and its wall time. */
async function uninterrupted(flags: Flags): Promise<{ final: FinalRun; wallMs: number }> {
  const root = await freshRoot();
  try {
    await writeChaosSuite(root, flags.shape);
    const run = new ChaosRun({ root, shape: flags.shape, concurrency: flags.concurrency, mark: `rhema-chaos-bench-${flags.seed}-base-${process.pid}` });
    const started = performance.now();
    const { result } = await run.attempt(null);
    const wallMs = performance.now() - started;
    const final = await run.final(result.code);
    const sanity = tallyChaos(flags.shape, [], final, expectedUninterrupted(flags.shape));
    if (sanity.lost.length > 0 || sanity.duplicated.length > 0) {
      throw new Error(`the uninterrupted run is not as the suite expects: ${[...sanity.lost, ...sanity.duplicated].join("; ")}\n${result.stderr}`);
    }
    return { final, wallMs };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** One run directory killed up to `kills` times at random and resumed until it finishes. */
async function round(opts: { index: number; kills: number; flags: Flags; random: SeededRandom; maxDelayMs: number; baseline: FinalRun }): Promise<Round> {
  const root = await freshRoot();
  await writeChaosSuite(root, opts.flags.shape);
  const run = new ChaosRun({ root, shape: opts.flags.shape, concurrency: opts.flags.concurrency, mark: `rhema-chaos-bench-${opts.flags.seed}-${opts.index}-${process.pid}` });
  const started = performance.now();
  const phases: KillPhase[] = [];
  const targets: KillPlan["target"][] = [];
  let linesBefore = 0;
  for (let attempt = 0; ; attempt++) {
    if (attempt >= MAX_ATTEMPTS_PER_ROUND) throw new Error(`round ${opts.index} did not finish in ${attempt} attempts (its folder: ${root})`);
    const kill: KillPlan | null = run.snapshots.length < opts.kills
      ? { after: "spawn", delayMs: opts.random.int(0, opts.maxDelayMs), target: opts.random.next() < 0.5 ? "pid" : "group" }
      : null;
    const { killed, result } = await run.attempt(kill);
    if (!killed) {
      const tally = tallyChaos(opts.flags.shape, run.snapshots, await run.final(result.code), opts.baseline);
      return { tally, phases, targets, wallMs: performance.now() - started, root };
    }
    const snapshot = run.snapshots.at(-1)!;
    const life = (await run.effects()).slice(linesBefore, snapshot.effectLines - snapshot.lateEffects);
    phases.push(life.at(-1)?.kind ?? "startup");
    targets.push(kill!.target);
    linesBefore = snapshot.effectLines;
  }
}

const NUMERIC_FIELDS = [
  "duplicated", "lost", "neverStartedInterrupted", "survivors", "killsWithSurvivors", "lateEffects", "unparsed",
  "setupReruns", "checkReruns", "interruptedCalls",
] as const;

function problems(tally: ChaosTally): string[] {
  return [...tally.duplicated, ...tally.lost, ...tally.neverStartedInterrupted, ...tally.unparsed,
    ...(tally.survivors > 0 ? [`${tally.survivors} process(es) alive after ${tally.killsWithSurvivors} kill(s)`] : [])];
}

function count(tally: ChaosTally, field: (typeof NUMERIC_FIELDS)[number]): number {
  const value = tally[field];
  return Array.isArray(value) ? value.length : value;
}

function seconds(ms: number): string {
  return ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${((ms % 60_000) / 1000).toFixed(0)} s` : `${(ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const benchStarted = performance.now();
  const random = seededRandom(flags.seed);
  const { shape } = flags;
  console.log(`chaos bench: seed ${flags.seed} (replay with --seed ${flags.seed}), ${flags.kills} kills, concurrency ${flags.concurrency}, ` +
    `${shape.tasks.length} tasks × ${shape.repeats} trial(s) × (${shape.setupCommands} setup commands, ${shape.calls} shell calls, ${shape.checks} checks); ` +
    `load average ${loadavg()[0]!.toFixed(2)}`);
  const base = await uninterrupted(flags);
  const maxDelayMs = Math.round(base.wallMs / 2);
  console.log(`uninterrupted run: ${seconds(base.wallMs)}, exit ${base.final.exitCode}; each kill lands 0–${maxDelayMs} ms after its spawn`);

  const totals = Object.fromEntries(NUMERIC_FIELDS.map((f) => [f, 0])) as Record<(typeof NUMERIC_FIELDS)[number], number>;
  const phases = new Map<KillPhase, number>();
  const targets = new Map<string, number>();
  let kills = 0;
  let rounds = 0;
  const kept: string[] = [];
  const shown: string[] = [];
  while (kills < flags.kills) {
    rounds += 1;
    const r = await round({ index: rounds, kills: flags.kills - kills, flags, random, maxDelayMs, baseline: base.final });
    kills += r.tally.kills;
    for (const f of NUMERIC_FIELDS) totals[f] += count(r.tally, f);
    for (const p of r.phases) phases.set(p, (phases.get(p) ?? 0) + 1);
    for (const t of r.targets) targets.set(t, (targets.get(t) ?? 0) + 1);
    const found = problems(r.tally);
    if (found.length > 0) {
      kept.push(r.root);
      shown.push(...found.slice(0, 5).map((p) => `round ${rounds}: ${p}`));
    } else await rm(r.root, { recursive: true, force: true });
    console.log(`round ${rounds}: ${r.tally.kills} kills in ${seconds(r.wallMs)}${found.length > 0 ? `, ${found.length} problem(s)` : ""} (${kills}/${flags.kills})`);
  }

  const row = (label: string, value: string) => console.log(`${label.padEnd(48)} ${value}`);
  console.log("");
  row("kills", `${kills} in ${rounds} rounds (${targets.get("pid") ?? 0} of rhema's pid, ${targets.get("group") ?? 0} of its process group)`);
  row("kills landed after the last effect of", (["startup", "setup", "call", "check"] as const).map((p) => `${p === "startup" ? "none (startup, first stream)" : p} ${phases.get(p) ?? 0}`).join(", "));
  row("duplicated side effects", `${totals.duplicated} (target 0)`);
  row("lost results", `${totals.lost} (target 0)`);
  row("calls never started but reported interrupted", `${totals.neverStartedInterrupted} (target 0)`);
  row("processes alive after a kill", `${totals.survivors} (target 0), after ${totals.killsWithSurvivors} kill(s)`);
  row("effects written after rhema died", String(totals.lateEffects));
  row("files that did not parse after a kill", `${totals.unparsed} (target 0)`);
  row("setup commands re-run after a kill (allowed)", String(totals.setupReruns));
  row("checks re-run after a kill (allowed)", String(totals.checkReruns));
  row("calls cut mid-tool and revived (not re-run)", String(totals.interruptedCalls));
  row("wall time", seconds(performance.now() - benchStarted));
  for (const line of shown) console.log(`  ${line}`);
  for (const root of kept) console.log(`  kept for a look: ${root}`);
  if (kept.length > 0) process.exitCode = 1;
}

main().catch((err: Error) => {
  console.error(`bench chaos: ${err.message}`);
  process.exitCode = 2;
});
