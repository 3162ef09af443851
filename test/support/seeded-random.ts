/**
 * Seeded randomness for tests that draw random choices (kill times, orders): a seed taken from
 * the environment, else a fresh one, and a small PRNG (mulberry32) so the same seed replays the
 * same draws. A test prints the seed it used, so a failure can be run again as it was.
 */
import { randomInt } from "node:crypto";

const MAX_SEED = 2 ** 32 - 1;

export interface SeededRandom {
  readonly seed: number;
  /** A number in [0, 1). */
  next(): number;
  /** A whole number from `min` to `max`, both included. */
  int(min: number, max: number): number;
}

/** The seed in `value` (an environment variable named `name`), or a fresh random one when unset. */
export function seedFrom(value: string | undefined, name: string): number {
  if (value === undefined || value === "") return randomInt(MAX_SEED + 1);
  const seed = Number(value);
  if (!/^\d+$/.test(value) || seed > MAX_SEED) {
    throw new Error(`${name} must be a whole number from 0 to ${MAX_SEED}, got "${value}"`);
  }
  return seed;
}

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return { seed, next, int: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}
