/**
 * The verdict on a compared cell, read from the interval on head − base of its pass rates
 * (Newcombe's, trials/newcombe.ts), never from the point estimate:
 *   regressed     the whole interval is below 0 (upper < 0)
 *   improved      the whole interval is above 0 (lower > 0)
 *   unchanged     the interval lies within ±margin: any change is smaller than the margin
 *   inconclusive  anything else — too few trials to tell (also a side with no counted trial)
 * and whether a comparison fails its gate (`--fail-on`).
 */
import { assertNever } from "../../core/errors.js";
import type { RateDifference } from "../trials/newcombe.js";

export type CompareVerdict = "regressed" | "improved" | "unchanged" | "inconclusive";

/** The default ± band of `unchanged` (`--margin`): a pass-rate change of 10 points. */
export const DEFAULT_MARGIN = 0.1;

/** The verdict of a change (null: a side had no counted trial) at ±`margin`. */
export function verdictOf(change: RateDifference | null, margin: number): CompareVerdict {
  if (change === null) return "inconclusive";
  const { lower, upper } = change.interval;
  if (upper < 0) return "regressed";
  if (lower > 0) return "improved";
  if (lower >= -margin && upper <= margin) return "unchanged";
  return "inconclusive";
}

/** What fails a comparison (`--fail-on`): a regression (default), a regression or an inconclusive cell, or nothing. */
export type FailOn = "regressed" | "inconclusive" | "never";

export const FAIL_ON_CHOICES: readonly FailOn[] = ["regressed", "inconclusive", "never"];

/** Whether the verdicts fail the gate `failOn`. */
export function failsGate(verdicts: readonly CompareVerdict[], failOn: FailOn): boolean {
  switch (failOn) {
    case "regressed":
      return verdicts.includes("regressed");
    case "inconclusive":
      return verdicts.includes("regressed") || verdicts.includes("inconclusive");
    case "never":
      return false;
    default:
      return assertNever(failOn);
  }
}
