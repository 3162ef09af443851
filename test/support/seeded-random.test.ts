/** The tests' seeded randomness: one seed, one sequence; seeds come from the environment or fresh. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { seedFrom, seededRandom } from "./seeded-random.js";

const draws = (seed: number, n: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => random.int(250, 949));
};

test("the same seed replays the same draws, and another seed draws others", () => {
  assert.deepEqual(draws(12345, 50), draws(12345, 50));
  assert.notDeepEqual(draws(12345, 50), draws(12346, 50));
});

test("whole numbers stay within their bounds and reach both ends", () => {
  const random = seededRandom(7);
  const seen = new Set(Array.from({ length: 2000 }, () => random.int(1, 6)));
  assert.deepEqual([...seen].sort(), [1, 2, 3, 4, 5, 6]);
  for (let k = 0; k < 1000; k++) {
    const x = random.next();
    assert.ok(x >= 0 && x < 1, String(x));
  }
});

test("a seed is read from the environment, or made fresh when none is given", () => {
  assert.equal(seedFrom("12345", "CHAOS_SEED"), 12345);
  assert.equal(seedFrom("0", "CHAOS_SEED"), 0);
  assert.equal(seedFrom(String(2 ** 32 - 1), "CHAOS_SEED"), 2 ** 32 - 1);
  for (const fresh of [seedFrom(undefined, "CHAOS_SEED"), seedFrom("", "CHAOS_SEED")]) {
    assert.ok(Number.isInteger(fresh) && fresh >= 0 && fresh < 2 ** 32, String(fresh));
  }
});

test("a seed that is not a whole number from 0 to 2^32-1 is a clear error naming the variable", () => {
  for (const bad of ["abc", "-1", "1.5", "1e3", " 7", String(2 ** 32)]) {
    assert.throws(() => seedFrom(bad, "CHAOS_SEED"), { message: `CHAOS_SEED must be a whole number from 0 to 4294967295, got "${bad}"` });
  }
});
