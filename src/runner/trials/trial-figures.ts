/**
 * The figures a task's trials give (issue 21): from n counted trials with c passes, the pass rate
 * with its Wilson 95 % interval, the unbiased pass@k and pass^k estimators, the mean and spread
 * of a per-trial measure, cost per pass, and whether the task is flaky. Pure arithmetic: which
 * trials count (errored and stopped ones do, as not passed; interrupted, unstarted and
 * early-stopped ones do not) is the caller's to decide.
 */

/** z for a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

/** A proportion's 95 % interval. */
export interface Interval {
  lower: number;
  upper: number;
}

/** The pass rate c/n with its Wilson 95 % interval; null when no trial counts. */
export interface PassRate {
  passes: number;
  trials: number;
  rate: number;
  interval: Interval;
}

/** c passes of n counted trials: the rate and its Wilson score interval (right at 0 and n, unlike the normal one). */
export function passRate(passes: number, trials: number): PassRate | null {
  assertCounts(passes, trials);
  if (trials === 0) return null;
  return { passes, trials, rate: passes / trials, interval: wilsonInterval(passes, trials) };
}

/** The Wilson score interval for c successes in n > 0 trials, at 95 %. */
export function wilsonInterval(passes: number, trials: number, z = Z95): Interval {
  assertCounts(passes, trials);
  if (trials === 0) throw new RangeError("wilsonInterval: no trials");
  const p = passes / trials;
  const z2n = (z * z) / trials;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2n / (4 * trials))) / (1 + z2n);
  // At c = 0 or c = n the formula's bound is exactly 0 or 1 in real numbers; floating point may miss it.
  return {
    lower: passes === 0 ? 0 : clamp01(centre - half),
    upper: passes === trials ? 1 : clamp01(centre + half),
  };
}

/**
 * An estimate over k draws from n trials: the value, or `n<k` where it cannot be estimated
 * (fewer trials than k), which reports print as such rather than as a number.
 */
export type AtK = { k: number; value: number } | { k: number; value: null; why: "n<k" };

/** pass@k = 1 − C(n−c, k)/C(n, k): the chance at least one of k trials drawn without replacement passes. */
export function passAtK(passes: number, trials: number, k: number): AtK {
  assertCounts(passes, trials);
  assertK(k);
  if (k > trials) return { k, value: null, why: "n<k" };
  return { k, value: 1 - chooseRatio(trials - passes, trials, k) };
}

/** pass^k = C(c, k)/C(n, k): the chance all of k trials drawn without replacement pass. */
export function passPowerK(passes: number, trials: number, k: number): AtK {
  assertCounts(passes, trials);
  assertK(k);
  if (k > trials) return { k, value: null, why: "n<k" };
  return { k, value: chooseRatio(passes, trials, k) };
}

/** C(a, k)/C(n, k) as a product of k ratios (no factorials, no overflow); 0 when a < k. */
function chooseRatio(a: number, n: number, k: number): number {
  let ratio = 1;
  for (let i = 0; i < k; i++) {
    if (a - i <= 0) return 0;
    ratio *= (a - i) / (n - i);
  }
  return ratio;
}

/** A per-trial measure summed up: mean, sample standard deviation (null below 2 values), min and max. */
export interface Spread {
  count: number;
  mean: number;
  sd: number | null;
  min: number;
  max: number;
}

/** The mean and spread of the values; null when there are none. */
export function spreadOf(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const sd = values.length < 2
    ? null
    : Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1));
  return { count: values.length, mean, sd, min: Math.min(...values), max: Math.max(...values) };
}

/**
 * Dollars spent on a task's trials per pass. `unpriced` when any trial's cost is unknown (a
 * partial sum would understate it); `no-pass` when nothing passed (never ∞ or 0).
 */
export type CostPerPass =
  | { kind: "usd"; usd: number }
  | { kind: "no-pass"; spentUsd: number }
  | { kind: "unpriced" };

/** The cost per pass of trials that cost `costsUsd` (null: unpriced) and passed `passes` times. */
export function costPerPass(costsUsd: readonly (number | null)[], passes: number): CostPerPass {
  if (costsUsd.some((c) => c === null)) return { kind: "unpriced" };
  const spentUsd = (costsUsd as number[]).reduce((sum, c) => sum + c, 0);
  return passes === 0 ? { kind: "no-pass", spentUsd } : { kind: "usd", usd: spentUsd / passes };
}

/** Flaky: among the counted trials, at least one passed and at least one did not. */
export function isFlaky(passes: number, trials: number): boolean {
  assertCounts(passes, trials);
  return passes > 0 && passes < trials;
}

/** Reads `--pass-at 1,3`: distinct whole numbers from 1, in the order given; a message naming the bad part otherwise. */
export function parseKList(text: string): number[] | { error: string } {
  const parts = text.split(",").map((p) => p.trim());
  const ks: number[] = [];
  for (const part of parts) {
    if (!/^[1-9]\d*$/.test(part)) return { error: `expected whole numbers from 1 separated by commas, got ${JSON.stringify(part)} in ${JSON.stringify(text)}` };
    const k = Number(part);
    if (!Number.isSafeInteger(k)) return { error: `${JSON.stringify(part)} is too large` };
    if (!ks.includes(k)) ks.push(k);
  }
  return ks;
}

function assertCounts(passes: number, trials: number): void {
  if (!Number.isSafeInteger(passes) || !Number.isSafeInteger(trials) || passes < 0 || trials < 0 || passes > trials) {
    throw new RangeError(`trial counts: expected 0 <= passes <= trials, got ${passes} of ${trials}`);
  }
}

function assertK(k: number): void {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`k: expected a whole number from 1, got ${k}`);
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
