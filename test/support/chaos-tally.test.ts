/**
 * The chaos machinery's own judgement (chaos-suite.ts, chaos-tally.ts), without a run: the effect
 * program names the trial whose workspace it runs in and nothing else, and the tally judges each
 * trial on its own — the same effect in two trials is no duplicate, twice in one trial is, a
 * planned trial without a result is lost, and an unplanned trial's effects are flagged.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { writeChaosSuite } from "./chaos-run.js";
import { type ChaosSuiteShape, type Effect, chaosPaths, chaosTrials, parseEffects } from "./chaos-suite.js";
import { type FinalRun, expectedUninterrupted, tallyChaos } from "./chaos-tally.js";
import { tempDir } from "./temp-dir.js";

const run = promisify(execFile);

const SHAPE: ChaosSuiteShape = {
  tasks: ["t1", "t2"], calls: 2, setupCommands: 1, checks: 1, commandSleepS: 0, callSleepS: 0, chunkDelayMs: 0, repeats: 2,
};

test("the effect program names the trial from its working directory; a line from outside a trial's workspace does not parse", async (t) => {
  const root = await tempDir(t, "rhema-chaos-program-");
  await writeChaosSuite(root, SHAPE);
  const { effectProgram, effectsLog } = chaosPaths(root);
  const workspace = (id: string, repeat: number) => join(root, "run", "tasks", "chaos", id, "default", String(repeat), "workspace");
  for (const [id, repeat] of [["t1", 2], ["t2", 1]] as const) await mkdir(workspace(id, repeat), { recursive: true });

  await run(effectProgram, ["call", "t1", "0"], { cwd: workspace("t1", 2), env: {} });
  await run(effectProgram, ["check", "t2", "0", "begin"], { cwd: workspace("t2", 1), env: {} });
  const lines = await readFile(effectsLog, "utf8");
  assert.equal(lines, "call t1 0 in t1/default/2\ncheck t2 0 begin in t2/default/1\n");
  assert.deepEqual(parseEffects(lines), [
    { kind: "call", task: "t1", repeat: 2, index: 0, begin: false },
    { kind: "check", task: "t2", repeat: 1, index: 0, begin: true },
  ]);

  await run(effectProgram, ["call", "t1", "1"], { cwd: workspace("t2", 1), env: {} });
  const crossed = await readFile(effectsLog, "utf8");
  assert.throws(() => parseEffects(crossed), /line 3: not an effect line of its task's trial: "call t1 1 in t2\/default\/1"/);
  await run(effectProgram, ["call", "t1", "1"], { cwd: root, env: {} });
  assert.match(await readFile(effectsLog, "utf8"), /\ncall t1 1 in \?\n$/);
  assert.throws(() => parseEffects("call t1 1 in ?\n"), /line 1: not an effect line/);
});

/** The effects of an uninterrupted run: each planned trial's setup, calls and checks once. */
function cleanEffects(shape: ChaosSuiteShape): Effect[] {
  return chaosTrials(shape).flatMap(({ task, repeat }) => {
    const of = (kind: Effect["kind"], index: number, begin: boolean): Effect => ({ kind, task, repeat, index, begin });
    return [
      ...Array.from({ length: shape.setupCommands }, (_, i) => [of("setup", i, true), of("setup", i, false)]).flat(),
      ...Array.from({ length: shape.calls }, (_, k) => of("call", k, false)),
      ...Array.from({ length: shape.checks }, (_, j) => [of("check", j, true), of("check", j, false)]).flat(),
    ];
  });
}

function cleanRun(shape: ChaosSuiteShape): FinalRun {
  return { ...expectedUninterrupted(shape), effects: cleanEffects(shape) };
}

test("the tally judges each trial on its own: one effect per trial is clean, a second in one trial is a duplicate", () => {
  const clean = tallyChaos(SHAPE, [], cleanRun(SHAPE), expectedUninterrupted(SHAPE));
  assert.deepEqual([clean.duplicated, clean.lost], [[], []], "each trial ran each effect once");

  const twice = cleanRun(SHAPE);
  twice.effects.push({ kind: "call", task: "t1", repeat: 2, index: 1, begin: false });
  twice.effects.push({ kind: "setup", task: "t2", repeat: 1, index: 0, begin: false });
  const tally = tallyChaos(SHAPE, [], twice, expectedUninterrupted(SHAPE));
  assert.deepEqual(tally.duplicated, ["call t1#2 1: ran 2 times", "setup t2#1 0: finished, then ran again 1 time(s)"]);
  assert.deepEqual(tally.lost, []);
});

test("a planned trial without a result, or one missing its effects, is lost; effects or results of an unplanned trial are flagged", () => {
  const missing = cleanRun(SHAPE);
  missing.tasks = missing.tasks.map((t) => (t.id === "t2" && t.repeat === 2 ? { ...t, status: null } : t));
  missing.effects = missing.effects.filter((e) => !(e.task === "t1" && e.repeat === 1 && e.kind === "check"));
  const lost = tallyChaos(SHAPE, [], missing, expectedUninterrupted(SHAPE)).lost;
  assert.deepEqual(lost, ["check t1#1 0: never finished", "t2#2: no result"]);

  const extra = cleanRun(SHAPE);
  extra.effects.push({ kind: "call", task: "t1", repeat: 3, index: 0, begin: false });
  extra.unplanned = ["chaos/t2#3"];
  assert.deepEqual(tallyChaos(SHAPE, [], extra, expectedUninterrupted(SHAPE)).duplicated, [
    "t1#3: effects of a trial the run did not plan", "chaos/t2#3: a result of a trial the run did not plan",
  ]);
});

test("with one trial per task the tally names tasks as before trials", () => {
  const one = { ...SHAPE, repeats: 1 };
  const twice = cleanRun(one);
  twice.effects.push({ kind: "call", task: "t2", repeat: 1, index: 0, begin: false });
  assert.deepEqual(tallyChaos(one, [], twice, expectedUninterrupted(one)).duplicated, ["call t2 0: ran 2 times"]);
});
