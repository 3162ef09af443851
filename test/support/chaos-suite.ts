/**
 * The suite the chaos test and `bench/chaos` kill: scripted tasks whose every setup command,
 * shell call and check leaves a line in an effects log OUTSIDE the workspace (so a workspace
 * made again cannot hide a command that ran twice), slow enough for a kill to land inside each.
 * The lines are appended by a small program beside the suite (a shell call may not redirect
 * outside its workspace; the policy sees a program it allows, not where that program writes):
 *
 *   setup T i begin   … sleep …   setup T i      a setup command began / finished
 *   call T k                                    shell call k ran (then it sleeps; it also tags the workspace)
 *   check T j begin   … sleep …   check T j      a check began / finished
 *
 * Also what an uninterrupted run of it ends with, and reading the log back.
 */
import { join } from "node:path";
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
}

export type EffectKind = "setup" | "call" | "check";

export interface Effect {
  kind: EffectKind;
  task: string;
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
    // One short write with O_APPEND: lines of concurrent commands never mix.
    [EFFECT_PROGRAM]: `#!/bin/sh\nprintf '%s\\n' "$*" >> '${effectsLog}'\n`,
  };
  for (const task of shape.tasks) files[`${CHAOS_SUITE}/${task}.yaml`] = taskFile(task, shape, effectProgram);
  return files;
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

/** The effects log's lines, parsed; a line of another shape is an error naming it. */
export function parseEffects(text: string): Effect[] {
  return text.split("\n").filter((line) => line !== "").map((line, i) => {
    const match = /^(setup|call|check) (\S+) (\d+)( begin)?$/.exec(line);
    if (!match) throw new Error(`${EFFECTS_LOG} line ${i + 1}: not an effect line: ${JSON.stringify(line)}`);
    return { kind: match[1] as EffectKind, task: match[2]!, index: Number(match[3]), begin: match[4] !== undefined };
  });
}

/** The tags a task's workspace holds after an uninterrupted run: one per call, in order. */
export function uninterruptedTags(task: string, shape: ChaosSuiteShape): string[] {
  return Array.from({ length: shape.calls }, (_, k) => `${task}-${k}`);
}
