/**
 * Chaos: the CLI runs a concurrent suite whose every setup command, shell call and check leaves
 * a line in a log outside the workspace (test/support/chaos-suite.ts), and is SIGKILLed — its
 * pid or its whole process group — inside setup commands, inside the turn and inside checks,
 * resumed after each kill until the suite finishes. After each kill no process of the run may
 * be alive and every file of the run directory parses; at the end no finished setup command,
 * completed call or finished check ran twice, nothing the uninterrupted run has is lost, and no
 * call that never started was closed as interrupted (test/support/chaos-tally.ts).
 *
 * With repeats (issue 21), each task runs several trials, each in its own folder and workspace:
 * every effect line names the trial that wrote it, and each trial is judged on its own — kills
 * that land while several trials run resume each unfinished trial once, keep each finished one,
 * and leave no planned trial without a result.
 *
 * The kill moments come from a seeded PRNG: the seed is `RHEMA_TEST_SEED` (or `CHAOS_SEED`) when
 * set, else a fresh one, and is printed, so a failing run can be replayed. `bench/chaos` is the
 * big run (`--repeats R` for trials).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readRunResults } from "../../src/runner/run-dir/run-dir.js";
import { ChaosRun, type KillPlan, writeChaosSuite } from "../support/chaos-run.js";
import type { ChaosSuiteShape, Effect, EffectKind } from "../support/chaos-suite.js";
import { expectedUninterrupted, tallyChaos } from "../support/chaos-tally.js";
import { seedFrom, seededRandom } from "../support/seeded-random.js";
import { tempDir } from "../support/temp-dir.js";

const SHAPE: ChaosSuiteShape = {
  tasks: ["t1", "t2"], calls: 8, setupCommands: 2, checks: 2, commandSleepS: 1.5, callSleepS: 0.25, chunkDelayMs: 15, repeats: 1,
};
/**
 * In the order the run reaches them (a kill aimed at a phase the run has passed would never land):
 * inside the first setup command, then inside the second one once the first is done, …
 */
const KILL_PHASES: Array<{ after: EffectKind; index?: number }> = [
  { after: "setup", index: 0 }, { after: "setup", index: 1 }, { after: "call" }, { after: "call" }, { after: "call" },
  { after: "check", index: 0 }, { after: "check", index: 1 },
];
/**
 * Inside a setup command or check: they sleep 1.5 s after their `begin`, so one that outlived
 * rhema is still running when the survivors are counted; anywhere among the calls.
 */
const DELAY_MS: Record<EffectKind, [number, number]> = { setup: [50, 450], call: [0, 600], check: [50, 450] };
const SEED_VAR = process.env.RHEMA_TEST_SEED !== undefined ? "RHEMA_TEST_SEED" : "CHAOS_SEED";
const SEED = seedFrom(process.env[SEED_VAR], SEED_VAR);
console.log(`chaos seed ${SEED} (replay with RHEMA_TEST_SEED=${SEED})`);

/**
 * Runs the suite, killing it as each plan says, until a run finishes: after each kill no process
 * of the run is alive and every file parses (and, with `noLateEffects`, nothing wrote an effect
 * once rhema had died, but a call it had released); every planned kill must land. Returns the last run's exit code and stderr.
 */
async function killUntilFinished(run: ChaosRun, plans: readonly KillPlan[], opts: { noLateEffects: boolean }): Promise<{ finished: number; lastStderr: string }> {
  let finished: number | null = null;
  let lastStderr = "";
  for (let attempt = 0; finished === null; attempt++) {
    assert.ok(attempt <= plans.length + 2, "the suite finishes");
    const { killed, result } = await run.attempt(plans[attempt] ?? null);
    lastStderr = result.stderr;
    if (!killed) finished = result.code;
    else {
      const snapshot = run.snapshots.at(-1)!;
      assert.deepEqual(snapshot.survivors, [], `after kill ${run.snapshots.length} (${JSON.stringify(plans[attempt])}) no process of the run is alive`);
      if (opts.noLateEffects && snapshot.lateEffects > 0) {
        // A call recorded as started was released before the kill: its command runs until the
        // reaper, told of rhema's death by the kernel, kills it — on a busy machine its first line
        // may come in that time. Anything else written after the death outlived rhema.
        const late = (await run.effects()).slice(snapshot.effectLines - snapshot.lateEffects, snapshot.effectLines);
        const released = (e: Effect) => e.kind === "call" && snapshot.tasks.some((t) => t.id === e.task && t.repeat === e.repeat && t.startedCalls.includes(e.index));
        const outlived = late.filter((e) => !released(e));
        if (outlived.length > 0) {
          assert.fail(`after kill ${run.snapshots.length} (${JSON.stringify(plans[attempt])}) nothing but a call released before the kill wrote an effect once rhema had died; written after: ${JSON.stringify(outlived)}`);
        }
      }
      assert.deepEqual(snapshot.unparsed, [], `after kill ${run.snapshots.length} every file parses`);
    }
  }
  assert.equal(run.snapshots.length, plans.length, `every planned kill landed (the run finished after ${run.snapshots.length})`);
  return { finished, lastStderr };
}

test(`survives ${KILL_PHASES.length} SIGKILLs inside setup, calls and checks: nothing alive after a kill, nothing twice, nothing lost`, async (t) => {
  const root = await tempDir(t, "rhema-chaos-");
  await writeChaosSuite(root, SHAPE);
  const run = new ChaosRun({ root, shape: SHAPE, concurrency: 2, mark: `rhema-chaos-test-${SEED}-${process.pid}` });
  const random = seededRandom(SEED);
  const plans: KillPlan[] = KILL_PHASES.map((phase) => ({
    ...phase, delayMs: random.int(...DELAY_MS[phase.after]), target: random.next() < 0.5 ? "pid" : "group",
  }));

  const { finished, lastStderr } = await killUntilFinished(run, plans, { noLateEffects: true });

  const tally = tallyChaos(SHAPE, run.snapshots, await run.final(finished), expectedUninterrupted(SHAPE));
  assert.deepEqual(tally.duplicated, [], "no finished setup command, completed call or finished check ran twice");
  assert.deepEqual(tally.lost, [], `nothing the uninterrupted run has is lost (${tally.lost.join("; ")}); the last run said:\n${lastStderr}`);
  assert.deepEqual(tally.neverStartedInterrupted, [], "no call that never started is closed as interrupted");
  assert.ok(tally.setupReruns >= 1, `a kill landed inside a setup command (it ran again): ${JSON.stringify(tally)}`);
  assert.ok(tally.checkReruns >= 1, `a kill landed inside a check (it ran again): ${JSON.stringify(tally)}`);

  const results = await readRunResults(run.out);
  assert.deepEqual(results.map((r) => [r.id, r.status]), SHAPE.tasks.map((id) => [id, "passed"]), "the reports account for every task");
  const junit = await readFile(join(run.out, "junit.xml"), "utf8");
  for (const id of SHAPE.tasks) assert.match(junit, new RegExp(`<testcase [^>]*name="${id}"`));
  t.diagnostic(`chaos seed ${SEED}; kills: ${plans.map((p) => `${p.after}${p.index ?? ""}+${p.delayMs}ms/${p.target}`).join(" ")}`);
  t.diagnostic(`${tally.kills} kills: ${tally.setupReruns} setup and ${tally.checkReruns} check re-run(s), ${tally.interruptedCalls} call(s) cut mid-tool and revived`);
});

/** Two tasks × two trials, run two at a time: the second pair starts only once the first is done. */
const REPEATED: ChaosSuiteShape = {
  tasks: ["t1", "t2"], calls: 4, setupCommands: 1, checks: 1, commandSleepS: 1.5, callSleepS: 0.25, chunkDelayMs: 15, repeats: 2,
};
/** In the order the run reaches them: the first pair's setup, calls and check, then the second pair's calls and check. */
const REPEATED_KILL_PHASES: Array<{ after: EffectKind }> = [
  { after: "setup" }, { after: "call" }, { after: "check" }, { after: "call" }, { after: "check" },
];

test(`with repeats: ${REPEATED_KILL_PHASES.length} SIGKILLs while trials run resume each trial once — no effect twice in a trial, no planned trial without a result`, async (t) => {
  const root = await tempDir(t, "rhema-chaos-repeats-");
  await writeChaosSuite(root, REPEATED);
  const run = new ChaosRun({ root, shape: REPEATED, concurrency: 2, mark: `rhema-chaos-repeats-test-${SEED}-${process.pid}` });
  const random = seededRandom(SEED);
  const plans: KillPlan[] = REPEATED_KILL_PHASES.map((phase) => ({
    ...phase, delayMs: random.int(...DELAY_MS[phase.after]), target: random.next() < 0.5 ? "pid" : "group",
  }));

  const { finished, lastStderr } = await killUntilFinished(run, plans, { noLateEffects: false });

  const final = await run.final(finished);
  const tally = tallyChaos(REPEATED, run.snapshots, final, expectedUninterrupted(REPEATED));
  assert.deepEqual(tally.duplicated, [], "no finished setup command, completed call or finished check ran twice in its trial, and no unplanned trial ran");
  assert.deepEqual(tally.lost, [], `every planned trial has its result, as uninterrupted (${tally.lost.join("; ")}); the last run said:\n${lastStderr}`);
  assert.deepEqual(tally.neverStartedInterrupted, [], "no call that never started is closed as interrupted");
  const trialsWithEffects = new Set(final.effects.map((e) => `${e.task}#${e.repeat}`));
  assert.deepEqual([...trialsWithEffects].sort(), ["t1#1", "t1#2", "t2#1", "t2#2"], "each trial's effects name it");

  const results = await readRunResults(run.out);
  assert.deepEqual(results.map((r) => [r.id, r.trial?.repeat, r.status]), [["t1", 1, "passed"], ["t1", 2, "passed"], ["t2", 1, "passed"], ["t2", 2, "passed"]]);
  t.diagnostic(`chaos seed ${SEED}; kills: ${plans.map((p) => `${p.after}+${p.delayMs}ms/${p.target}`).join(" ")}`);
  t.diagnostic(`${tally.kills} kills: ${tally.setupReruns} setup and ${tally.checkReruns} check re-run(s), ${tally.interruptedCalls} call(s) cut mid-tool and revived`);
});
