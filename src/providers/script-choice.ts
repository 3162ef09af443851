/**
 * Which script a scripted model plays in one trial (issue 21, "offline variance"): a task's
 * `scripts` alternatives let repeats of one task pass and fail, so pass rates, pass@k, flaky
 * marking and early stop can be tested without a model.
 *
 * The choice is a pure function of the task's `seed` and the trial's key, never of time or of
 * the order trials run in: a resumed trial replays the alternative it started with, and the
 * repeats of a task draw independently of each other. The draw:
 *
 *   u      = first 48 bits of sha256("rhema-script-draw-v1\n" + JSON [seed, suite, id, variant, repeat]) ÷ 2^48
 *   choice = the first alternative whose running weight sum exceeds u × (sum of weights)
 *
 * so u is uniform on [0, 1) (to within 2^-48) and alternative i is chosen with probability
 * weight_i ÷ Σ weight. The key takes a plain `{suite, id, variant, repeat}` (the runner's TrialKey
 * has that shape; providers do not import the runner).
 */
import { createHash } from "node:crypto";
import { assertNever } from "../core/errors.js";
import type { ScriptStep, ScriptedModelScripts } from "./script.js";

/** The fields of a trial the draw reads (the runner's `TrialKey`). */
export interface ScriptTrial {
  suite: string;
  id: string;
  /** null: no variant. */
  variant: string | null;
  /** 1-based. */
  repeat: number;
}

/** Names the spelling hashed; a change of spelling is a change of every draw, so it gets a new tag. */
const DRAW_TAG = "rhema-script-draw-v1";
const DRAW_BITS = 48;

/**
 * The script the trial plays: `script` when the model has one; else the alternative of `scripts`
 * that `pick` chooses (`draw`, the default: `scriptDraw`; `repeat`: (repeat − 1) mod count).
 * `seed` is the task's `seed` as text ("" when absent). Throws a RangeError on input the task
 * schema rejects (no script at all, an empty `scripts`, a weight that is not above 0, a repeat below 1).
 */
export function chooseScript(model: ScriptedModelScripts, seed: string, trial: ScriptTrial): readonly ScriptStep[] {
  const index = chooseScriptIndex(model, seed, trial);
  return index === null ? model.script! : model.scripts![index]!.script;
}

/** The index into `scripts` the trial plays, or null when the model has a single `script`. */
export function chooseScriptIndex(model: ScriptedModelScripts, seed: string, trial: ScriptTrial): number | null {
  if (model.scripts === undefined) {
    if (model.script === undefined) throw new RangeError("chooseScript: the scripted model has neither script nor scripts");
    return null;
  }
  const count = model.scripts.length;
  if (count === 0) throw new RangeError("chooseScript: scripts is empty");
  if (!Number.isSafeInteger(trial.repeat) || trial.repeat < 1) {
    throw new RangeError(`chooseScript: repeat ${trial.repeat} is not a whole number from 1`);
  }
  const pick = model.pick ?? "draw";
  switch (pick) {
    case "repeat":
      return (trial.repeat - 1) % count;
    case "draw":
      return weightedIndex(model.scripts.map((a) => a.weight ?? 1), scriptDraw(seed, trial));
    default:
      return assertNever(pick);
  }
}

/** The trial's uniform number in [0, 1): the first 48 bits of the sha256 of (seed, trial key), spelled canonically. */
export function scriptDraw(seed: string, trial: ScriptTrial): number {
  const spelling = `${DRAW_TAG}\n${JSON.stringify([seed, trial.suite, trial.id, trial.variant, trial.repeat])}`;
  const digest = createHash("sha256").update(spelling, "utf8").digest();
  return digest.readUIntBE(0, DRAW_BITS / 8) / 2 ** DRAW_BITS;
}

/** The index `u` (in [0, 1)) falls on when [0, 1) is cut into pieces proportional to `weights` (each above 0). */
export function weightedIndex(weights: readonly number[], u: number): number {
  let total = 0;
  for (const weight of weights) {
    if (!(weight > 0) || !Number.isFinite(weight)) throw new RangeError(`chooseScript: weight ${weight} is not a finite number above 0`);
    total += weight;
  }
  const target = u * total;
  let running = 0;
  for (const [index, weight] of weights.entries()) {
    running += weight;
    if (target < running) return index;
  }
  // u × total can round up to the sum itself: the last piece owns it.
  return weights.length - 1;
}
