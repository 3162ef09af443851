/**
 * A 95 % confidence interval for the difference of two independent pass rates, head − base:
 * Newcombe's hybrid score interval (Newcombe 1998, "Interval estimation for the difference between
 * independent proportions: comparison of eleven methods", Statistics in Medicine 17:873–890,
 * method 10 — "score, no continuity correction"), built from the two Wilson intervals
 * (trial-figures.ts) by square-and-add:
 *
 *   d = p₁ − p₂,  lower = d − √((p₁ − l₁)² + (u₂ − p₂)²),  upper = d + √((u₁ − p₁)² + (p₂ − l₂)²)
 *
 * where (lᵢ, uᵢ) is the Wilson interval of pᵢ. Unlike the normal (Wald) interval it stays inside
 * [−1, 1], is not degenerate at 0 or n passes, and has close to nominal coverage at the few trials
 * a CI run affords. Pure arithmetic.
 */
import { wilsonInterval, type Interval } from "./trial-figures.js";

/** c passes of n counted trials. */
export interface PassCount {
  passes: number;
  trials: number;
}

/** The difference head − base of two pass rates, with its 95 % interval. */
export interface RateDifference {
  difference: number;
  interval: Interval;
}

/**
 * Newcombe's method-10 interval on `head` − `base` (each with at least one counted trial: a rate
 * of no trials has no difference to bound).
 */
export function newcombeDifference(head: PassCount, base: PassCount): RateDifference {
  if (head.trials === 0 || base.trials === 0) throw new RangeError("newcombeDifference: each side needs at least one counted trial");
  const p1 = head.passes / head.trials;
  const p2 = base.passes / base.trials;
  const w1 = wilsonInterval(head.passes, head.trials);
  const w2 = wilsonInterval(base.passes, base.trials);
  const difference = p1 - p2;
  const lower = difference - Math.sqrt((p1 - w1.lower) ** 2 + (w2.upper - p2) ** 2);
  const upper = difference + Math.sqrt((w1.upper - p1) ** 2 + (p2 - w2.lower) ** 2);
  return { difference, interval: { lower: Math.max(-1, lower), upper: Math.min(1, upper) } };
}
