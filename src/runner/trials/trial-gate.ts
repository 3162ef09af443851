/**
 * What makes a repeated task pass (issue 21): its gate, judged on the counted trials, and when
 * the outcome is already decided before every trial has run (the early stop). The default gate is
 * "every counted trial passed", which for one trial is what a task's pass has always meant.
 */
import { z } from "zod";
import { wilsonInterval } from "./trial-figures.js";

/**
 * every: each counted trial passed. rate: the pass rate reaches `min` — the rate itself, or the
 * lower bound of its Wilson 95 % interval (`--gate lower`), which noise cannot lift.
 */
export type TrialGate =
  | { kind: "every" }
  | { kind: "rate"; min: number; judgedOn: "rate" | "lower" };

export const EVERY_TRIAL: TrialGate = { kind: "every" };

/** A gate as files record it (the run manifest). */
export const trialGateSchema: z.ZodType<TrialGate> = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("every") }),
  z.strictObject({ kind: z.literal("rate"), min: z.number().gt(0).max(1), judgedOn: z.enum(["rate", "lower"]) }),
]);

/** A pass rate as a flag or input gives it (`0.8`, `.8`, `1`): a number above 0 and at most 1, or null. */
export function parsePassRate(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(?:0?\.\d+|1(?:\.0*)?|0)$/.test(trimmed)) return null;
  const rate = Number(trimmed);
  return rate > 0 && rate <= 1 ? rate : null;
}

/** Whether `passes` of `trials` counted trials pass the gate; no counted trial never passes. */
export function gatePasses(gate: TrialGate, passes: number, trials: number): boolean {
  if (trials === 0) return false;
  switch (gate.kind) {
    case "every":
      return passes === trials;
    case "rate":
      return (gate.judgedOn === "rate" ? passes / trials : wilsonInterval(passes, trials).lower) >= gate.min;
  }
}

/** The early stop's view: not decided yet, or decided with the verdict every remaining outcome leads to. */
export type GateDecision = { decided: false } | { decided: true; passed: boolean };

/**
 * Whether the gate's verdict over `planned` trials is already fixed after `counted` of them gave
 * `passes`: the worst case (every remaining trial fails) and the best (every one passes) agree.
 * Both judgements grow with the passes for a fixed count, so the two ends are enough.
 */
export function gateDecision(gate: TrialGate, at: { passes: number; counted: number; planned: number }): GateDecision {
  const { passes, counted, planned } = at;
  if (!(0 <= passes && passes <= counted && counted <= planned)) {
    throw new RangeError(`gateDecision: expected 0 <= passes <= counted <= planned, got ${passes}, ${counted}, ${planned}`);
  }
  const remaining = planned - counted;
  const worst = gatePasses(gate, passes, planned);
  const best = gatePasses(gate, passes + remaining, planned);
  return worst === best ? { decided: true, passed: worst } : { decided: false };
}

/** The fewest passes of `trials` that pass the gate; null when no outcome of that many can. */
export function fewestPassing(gate: TrialGate, trials: number): number | null {
  for (let passes = 0; passes <= trials; passes++) if (gatePasses(gate, passes, trials)) return passes;
  return null;
}

/**
 * The fewest trials at which a clean sweep passes the gate (for `validate`'s warning: at rate 0.8
 * judged on the lower bound, 5 of 5 cannot pass; it takes 16 of 16). null beyond `limit`.
 */
export function fewestTrialsToPass(gate: TrialGate, limit = 10_000): number | null {
  for (let trials = 1; trials <= limit; trials++) if (gatePasses(gate, trials, trials)) return trials;
  return null;
}
