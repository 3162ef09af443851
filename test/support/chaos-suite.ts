/**
 * The suite the chaos test and `bench/chaos` kill: scripted tasks whose every setup command,
 * shell call and check leaves a line in an effects log OUTSIDE the workspace (so a workspace
 * made again cannot hide a command that ran twice), slow enough for a kill to land inside each.
 * The lines are appended by a small program beside the suite (a shell call may not redirect
 * outside its workspace; the policy sees a program it allows, not where that program writes):
 *
 *   setup T i begin in T/default/n   … sleep …   setup T i in T/default/n    a setup command began / finished
 *   call T k in T/default/n                                                 shell call k ran (then it sleeps; it also tags the workspace)
 *   check T j begin in T/default/n   … sleep …   check T j in T/default/n    a check began / finished
 *
 * Each task runs `repeats` trials (issue 21), each in its own folder: the program appends which
 * trial wrote the line, read from its working directory — setup commands, shell calls and checks
 * all run in the trial's workspace, `…/tasks/chaos/<T>/default/<n>/workspace` — so nothing the
 * task file says can name the wrong trial; a line written anywhere else says `in ?` and does
 * not parse. Also what an uninterrupted run of it ends with, and reading the log back.
 */
import { join } from "node:path";
import { TASKS_DIR } from "../../src/runner/run-dir/task-folder.js";
import { NO_VARIANT_FOLDER } from "../../src/runner/trials/trial-key.js";
import { shellStepsTask } from "./suite-files.js";

export const CHAOS_SUITE = "chaos";
export const EFFECTS_LOG = "effects.log";
/** The program that appends its arguments as one line to the effects log. */
export const EFFECT_PROGRAM = "bin/chaos-effect";

export interface ChaosSuiteShape {
  tasks: readonly string[];
  /** Shell calls per task, one per scripted step. */
  calls: number;
  setupCommands: number;
  checks: number;
  /** How long each setup command and check sleeps between its two lines. */
  commandSleepS: number;
  /** How long each shell call sleeps after its effect. */
  callSleepS: number;
  /** The scripted stream's delay between chunks. */
  chunkDelayMs: number;
  /** Trials of each task (`rhema run --repeats`); 1 runs the suite as before trials. */
  repeats: number;
}

/** One planned trial of the suite: its task and its repeat number from 1. */
export interface ChaosTrial {
  task: string;
  repeat: number;
}

export type EffectKind = "setup" | "call" | "check";

export interface Effect {
  kind: EffectKind;
  task: string;
  /** The trial that wrote it (its repeat number, from its working directory). */
  repeat: number;
  index: number;
  /** A `begin` marker (setup and checks), not the effect itself. */
  begin: boolean;
}

/** Where the suite is written under `root`, and where its effects go. */
export function chaosPaths(root: string): { effectProgram: string; effectsLog: string } {
  return { effectProgram: join(root, EFFECT_PROGRAM), effectsLog: join(root, EFFECTS_LOG) };
}

/** A deny list (default allow): nothing here needs the policy to protect anything. */
const CHAOS_POLICY = `version: 1
default: allow
rules:
  - deny: { shell: ["rm *"], reason: nothing here removes files }
`;

/**
 * The files to write under `root` (relative path → text): the policy, one task file per task,
 * and the effect program (to be made executable).
 */
export function chaosSuiteFiles(root: string, shape: ChaosSuiteShape): Record<string, string> {
  const { effectProgram, effectsLog } = chaosPaths(root);
  const files: Record<string, string> = {
    "policy.yaml": CHAOS_POLICY,
    [EFFECT_PROGRAM]: effectProgramText(effectsLog),
  };
  for (const task of shape.tasks) files[`${CHAOS_SUITE}/${task}.yaml`] = taskFile(task, shape, effectProgram);
  return files;
}

/**
 * The effect program: its arguments and the trial whose workspace it runs in (`in <task>/default/<n>`,
 * `in ?` outside one), as one short write with O_APPEND, so lines of concurrent commands never mix.
 * Shell builtins only: the commands' environment is scrubbed.
 */
function effectProgramText(effectsLog: string): string {
  return [
    "#!/bin/sh",
    "here=$(pwd -P)",
    "case \"$here\" in",
    `  */${TASKS_DIR}/${CHAOS_SUITE}/*/${NO_VARIANT_FOLDER}/*/workspace) trial=\${here%/workspace}; repeat=\${trial##*/}; trial=\${trial%/*}; trial=\${trial%/*}; trial="\${trial##*/}/${NO_VARIANT_FOLDER}/$repeat" ;;`,
    "  *) trial='?' ;;",
    "esac",
    `printf '%s in %s\\n' "$*" "$trial" >> '${effectsLog}'`,
    "",
  ].join("\n");
}

/** Every trial the suite plans, in the runner's order (task, then repeat). */
export function chaosTrials(shape: ChaosSuiteShape): ChaosTrial[] {
  return shape.tasks.flatMap((task) => Array.from({ length: shape.repeats }, (_, i) => ({ task, repeat: i + 1 })));
}

/** How a trial is named in the tally's lines: `t1` for a task's only trial, `t1#2` beyond. */
export function chaosTrialName(trial: ChaosTrial, shape: ChaosSuiteShape): string {
  return shape.repeats > 1 ? `${trial.task}#${trial.repeat}` : trial.task;
}

function taskFile(task: string, shape: ChaosSuiteShape, effect: string): string {
  const twoLines = (kind: "setup" | "check", i: number, then = "") =>
    JSON.stringify(`${effect} ${kind} ${task} ${i} begin; sleep ${shape.commandSleepS}; ${effect} ${kind} ${task} ${i}${then}`);
  const setup = Array.from({ length: shape.setupCommands }, (_, i) => `    - ${twoLines("setup", i)}\n`).join("");
  const checks = Array.from({ length: shape.checks }, (_, j) => `  - { name: check ${j}, run: ${twoLines("check", j, "; test -s tags.txt")} }\n`).join("");
  const calls = Array.from({ length: shape.calls }, (_, k) => callCommand(task, k, shape, effect));
  return shellStepsTask(calls, { chunkDelayMs: shape.chunkDelayMs, rest: `workspace:\n  setup:\n${setup}checks:\n${checks}` });
}

function callCommand(task: string, k: number, shape: ChaosSuiteShape, effect: string): string {
  return `${effect} call ${task} ${k} && echo ${task}-${k} >> tags.txt && sleep ${shape.callSleepS}`;
}

/** Which call of the suite a shell command is (its task and index), or null for another command. */
export function callOfCommand(command: string): { task: string; index: number } | null {
  const match = /^\S+ call (\S+) (\d+) &&/.exec(command);
  return match ? { task: match[1]!, index: Number(match[2]) } : null;
}

/**
 * The effects log's lines, parsed; a line of another shape, written outside a trial's workspace
 * or in another task's, is an error naming it.
 */
export function parseEffects(text: string): Effect[] {
  return text.split("\n").filter((line) => line !== "").map((line, i) => {
    const match = /^(setup|call|check) (\S+) (\d+)( begin)? in (\S+)\/default\/([1-9]\d*)$/.exec(line);
    if (!match || match[5] !== match[2]) throw new Error(`${EFFECTS_LOG} line ${i + 1}: not an effect line of its task's trial: ${JSON.stringify(line)}`);
    return { kind: match[1] as EffectKind, task: match[2]!, repeat: Number(match[6]), index: Number(match[3]), begin: match[4] !== undefined };
  });
}

/** The tags a task's workspace holds after an uninterrupted run: one per call, in order. */
export function uninterruptedTags(task: string, shape: ChaosSuiteShape): string[] {
  return Array.from({ length: shape.calls }, (_, k) => `${task}-${k}`);
}
