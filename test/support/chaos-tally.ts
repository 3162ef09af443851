/**
 * What a chaos run did wrong, decided from what it left (pure): the effects log, what the run
 * directory said after each kill, and how the killed-and-resumed run ended beside an
 * uninterrupted one. Shared by the chaos test (which wants every list empty) and `bench/chaos`
 * (which prints their sizes).
 *
 * Each task runs `shape.repeats` trials, each judged on its own: a trial's effects are the
 * lines its workspace wrote (chaos-suite.ts), its state is its folder's, and a planned trial
 * without a result.json at the end is a lost result.
 *
 * The log's lines are split into *lives*: life i is what was written between kill i-1 and kill
 * i (the snapshot after kill i counts the lines so far, once the killed run's processes are
 * gone); the last life is the run that finished.
 */
import { type ChaosSuiteShape, type ChaosTrial, type Effect, chaosTrialName, chaosTrials, uninterruptedTags } from "./chaos-suite.js";
import type { LiveProcess } from "./run-processes.js";

/** The run directory as one kill left it. */
export interface KillSnapshot {
  /** Lines in the effects log after the kill (the killed run's processes gone). */
  effectLines: number;
  /** Of those, lines written after rhema had died: by something it started that outlived it. */
  lateEffects: number;
  tasks: TaskSnapshot[];
  /** Files of the run directory that did not parse (path: why). */
  unparsed: string[];
  /** Processes of the run still alive after the kill, past the limit they had to die. */
  survivors: LiveProcess[];
}

/** What a kill left in one trial's folder. */
export interface TaskSnapshot {
  /** The trial's task, and its repeat from 1. */
  id: string;
  repeat: number;
  /** Setup commands and checks the task state records as done. */
  setupDone: number[];
  checksDone: number[];
  /** Calls (by index) with a `started` record and no result in the checkpoint. */
  startedCalls: number[];
}

/** How a run ended: its exit code, each planned trial's outcome, and its effects log. */
export interface FinalRun {
  exitCode: number | null;
  tasks: FinalTask[];
  /** Results of trials the run did not plan (`t1#4` of 3 repeats), by name. */
  unplanned: string[];
  effects: Effect[];
}

/** One planned trial's outcome. */
export interface FinalTask {
  /** The trial's task, and its repeat from 1. */
  id: string;
  repeat: number;
  /** null: the trial has no result.json. */
  status: string | null;
  /** Each check's outcome, in order. */
  checksPassed: boolean[];
  calls: FinalCall[];
  /** The workspace's tags.txt, line by line. */
  tags: string[];
}

export interface FinalCall {
  index: number;
  answered: boolean;
  /** Its result is the synthetic "interrupted" one (it started, and was cut). */
  interrupted: boolean;
}

export interface ChaosTally {
  kills: number;
  /**
   * Effects the design promises exactly once per trial that happened more often (completed calls,
   * finished setup commands and checks), and results or effects of trials the run did not plan.
   */
  duplicated: string[];
  /** What the uninterrupted run has and the killed one lacks or has otherwise. */
  lost: string[];
  /** Calls closed as interrupted that never ran: no effect, and no `started` record at any kill. */
  neverStartedInterrupted: string[];
  /** Kills after which a process of the run outlived it, and how many processes that was. */
  killsWithSurvivors: number;
  survivors: number;
  /** Effects written after rhema had died, by all kills together. */
  lateEffects: number;
  unparsed: string[];
  /** Allowed: interrupted setup commands and checks run again (beyond their first run). */
  setupReruns: number;
  checkReruns: number;
  /** Calls cut inside their tool and revived (not re-run). */
  interruptedCalls: number;
}

export function tallyChaos(shape: ChaosSuiteShape, snapshots: readonly KillSnapshot[], run: FinalRun, uninterrupted: FinalRun): ChaosTally {
  const tally: ChaosTally = {
    kills: snapshots.length, duplicated: [], lost: [], neverStartedInterrupted: [],
    killsWithSurvivors: snapshots.filter((s) => s.survivors.length > 0).length,
    survivors: snapshots.reduce((n, s) => n + s.survivors.length, 0),
    lateEffects: snapshots.reduce((n, s) => n + s.lateEffects, 0),
    unparsed: snapshots.flatMap((s, i) => s.unparsed.map((u) => `after kill ${i + 1}: ${u}`)),
    setupReruns: 0, checkReruns: 0, interruptedCalls: 0,
  };
  const lives = livesOf(run.effects, snapshots);
  const trials = chaosTrials(shape);
  for (const trial of trials) {
    const of = (e: Effect) => e.task === trial.task && e.repeat === trial.repeat;
    for (const [kind, count, doneOf] of [
      ["setup", shape.setupCommands, (s: TaskSnapshot) => s.setupDone],
      ["check", shape.checks, (s: TaskSnapshot) => s.checksDone],
    ] as const) {
      for (let index = 0; index < count; index++) {
        const doneAt = snapshots.findIndex((s) => doneOf(trialIn(s, trial)).includes(index));
        const judged = judgeCommand(lives.filter((l) => l.effect.kind === kind && of(l.effect) && l.effect.index === index), doneAt);
        const name = `${kind} ${chaosTrialName(trial, shape)} ${index}`;
        if (judged.duplicated > 0) tally.duplicated.push(`${name}: finished, then ran again ${judged.duplicated} time(s)`);
        if (judged.finished === 0) tally.lost.push(`${name}: never finished`);
        if (kind === "setup") tally.setupReruns += judged.reruns;
        else tally.checkReruns += judged.reruns;
      }
    }
    tallyCalls(tally, trial, shape, run, snapshots);
  }
  const strays = new Set(run.effects.filter((e) => !trials.some((t) => t.task === e.task && t.repeat === e.repeat)).map((e) => `${e.task}#${e.repeat}`));
  for (const stray of strays) tally.duplicated.push(`${stray}: effects of a trial the run did not plan`);
  for (const name of run.unplanned) tally.duplicated.push(`${name}: a result of a trial the run did not plan`);
  compareOutcomes(tally, shape, run, uninterrupted);
  return tally;
}

interface LoggedEffect {
  effect: Effect;
  /** Which life wrote it: the number of kills before it. */
  life: number;
}

function livesOf(effects: readonly Effect[], snapshots: readonly KillSnapshot[]): LoggedEffect[] {
  return effects.map((effect, line) => ({ effect, life: snapshots.filter((s) => s.effectLines <= line).length }));
}

function trialIn(snapshot: KillSnapshot, trial: ChaosTrial): TaskSnapshot {
  return snapshot.tasks.find((t) => t.id === trial.task && t.repeat === trial.repeat)
    ?? { id: trial.task, repeat: trial.repeat, setupDone: [], checksDone: [], startedCalls: [] };
}

function finalOf(run: FinalRun, trial: ChaosTrial): FinalTask | undefined {
  return run.tasks.find((t) => t.id === trial.task && t.repeat === trial.repeat);
}

/**
 * One setup command's or check's lines. Once recorded done (at the snapshot after kill
 * `doneAt`), nothing of it may run again; before that, each life may run it once (an interrupted
 * one runs again, and may have finished just before the kill that cut it).
 */
function judgeCommand(lines: readonly LoggedEffect[], doneAt: number): { duplicated: number; finished: number; reruns: number } {
  const allowedLife = (life: number) => doneAt === -1 || life <= doneAt;
  let duplicated = 0;
  let finished = 0;
  const livesWithEffect = new Set<number>();
  for (const { effect, life } of lines) {
    if (!allowedLife(life)) {
      if (effect.begin) duplicated += 1;
      continue;
    }
    if (effect.begin) continue;
    finished += 1;
    if (livesWithEffect.has(life)) duplicated += 1;
    livesWithEffect.add(life);
  }
  const begins = lines.filter((l) => l.effect.begin && allowedLife(l.life)).length;
  return { duplicated, finished, reruns: Math.max(0, begins - 1) };
}

function tallyCalls(tally: ChaosTally, trial: ChaosTrial, shape: ChaosSuiteShape, run: FinalRun, snapshots: readonly KillSnapshot[]): void {
  const final = finalOf(run, trial);
  if (!final) return; // compareOutcomes says so
  const effectsOf = (index: number) =>
    run.effects.filter((e) => e.kind === "call" && e.task === trial.task && e.repeat === trial.repeat && e.index === index).length;
  for (const call of final.calls) {
    const name = `call ${chaosTrialName(trial, shape)} ${call.index}`;
    const ran = effectsOf(call.index);
    if (ran > 1) tally.duplicated.push(`${name}: ran ${ran} times`);
    if (!call.answered) tally.lost.push(`${name}: has no result`);
    else if (!call.interrupted && ran === 0) tally.lost.push(`${name}: completed, but its effect is missing`);
    if (!call.interrupted) continue;
    tally.interruptedCalls += 1;
    const startedAtAKill = snapshots.some((s) => trialIn(s, trial).startedCalls.includes(call.index));
    if (ran === 0 && !startedAtAKill) tally.neverStartedInterrupted.push(`${name}: closed as interrupted, but it never started`);
  }
}

/** Each trial the uninterrupted run planned, beside the same trial of the killed one (a planned trial without a result is lost). */
function compareOutcomes(tally: ChaosTally, shape: ChaosSuiteShape, run: FinalRun, uninterrupted: FinalRun): void {
  if (run.exitCode !== uninterrupted.exitCode) tally.lost.push(`the run exited ${run.exitCode}, the uninterrupted one ${uninterrupted.exitCode}`);
  for (const want of uninterrupted.tasks) {
    const trial = { task: want.id, repeat: want.repeat };
    const name = chaosTrialName(trial, shape);
    const got = finalOf(run, trial);
    if (!got || got.status === null) {
      tally.lost.push(`${name}: no result`);
      continue;
    }
    if (got.status !== want.status) tally.lost.push(`${name}: ${got.status}, uninterrupted ${want.status}`);
    if (got.checksPassed.join() !== want.checksPassed.join()) tally.lost.push(`${name}: checks ${got.checksPassed.join()}, uninterrupted ${want.checksPassed.join()}`);
    if (got.calls.length !== want.calls.length) tally.lost.push(`${name}: ${got.calls.length} calls, uninterrupted ${want.calls.length}`);
    // The workspace is the uninterrupted run's, less the effects of calls cut before they had any.
    // A call cut after its effect line may be cut before its tag too (`effect && echo tag >> …`):
    // its tag may be there or not, never twice and never out of order.
    const ran = (index: number) => run.effects.some((e) => e.kind === "call" && e.task === want.id && e.repeat === want.repeat && e.index === index);
    const tagOf = (c: FinalCall) => `${want.id}-${c.index}`;
    const kept = new Set(got.calls.filter((c) => !c.interrupted).map(tagOf));
    const maybe = new Set(got.calls.filter((c) => c.interrupted && ran(c.index)).map(tagOf));
    const expected = want.tags.filter((tag) => kept.has(tag) || (maybe.has(tag) && got.tags.includes(tag)));
    if (got.tags.join() !== expected.join()) tally.lost.push(`${name}: tags ${got.tags.join(" ")}, expected ${expected.join(" ")}`);
  }
}

/** What an uninterrupted run of the suite ends with: every planned trial passed, every call answered. */
export function expectedUninterrupted(shape: ChaosSuiteShape): FinalRun {
  return {
    exitCode: 0, effects: [], unplanned: [],
    tasks: chaosTrials(shape).map(({ task: id, repeat }) => ({
      id, repeat, status: "passed", checksPassed: Array.from({ length: shape.checks }, () => true),
      calls: Array.from({ length: shape.calls }, (_, index) => ({ index, answered: true, interrupted: false })),
      tags: uninterruptedTags(id, shape),
    })),
  };
}
