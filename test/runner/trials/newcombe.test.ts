/**
 * Newcombe's hybrid score interval (method 10) against the published worked examples, and against
 * an independent computation: Wilson bounds found as the roots of the score equation by bisection.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { newcombeDifference } from "../../../src/runner/trials/newcombe.js";

const near = (actual: number, expected: number, digits = 4): void =>
  assert.ok(Math.abs(actual - expected) <= 10 ** -digits / 2, `${actual} is not ${expected} to ${digits} places`);

/**
 * Newcombe 1998 (Statistics in Medicine 17:873–890), Table II, method 10, examples (a)–(h), as
 * p₁ − p₂ with p₁ the head. Checked against the same table as reproduced in the tests of R's
 * ratesci (petelaud/ratesci, tests/testthat: example (d), "Newcombe/'Score'/Square&add") and
 * propint (m-Py/propint: examples (a) and (b)). (The values (0.0342, 0.8534) for (c) and
 * (−0.0326, 0.1933) for (d) sometimes quoted are Miettinen–Nurminen's, method 7, not method 10.)
 */
const TABLE_II: [head: [number, number], base: [number, number], lower: number, upper: number][] = [
  [[56, 70], [48, 80], 0.0524, 0.3339],
  [[9, 10], [3, 10], 0.1705, 0.8090],
  [[6, 7], [2, 7], 0.0582, 0.8062],
  [[5, 56], [0, 29], -0.0381, 0.1926],
  [[0, 10], [0, 20], -0.1611, 0.2775],
  [[0, 10], [0, 10], -0.2775, 0.2775],
  [[10, 10], [0, 20], 0.6791, 1.0],
  [[10, 10], [0, 10], 0.6075, 1.0],
];

test("Newcombe's method 10 reproduces Table II of Newcombe 1998 to four decimals", () => {
  for (const [[c1, n1], [c2, n2], lower, upper] of TABLE_II) {
    const { difference, interval } = newcombeDifference({ passes: c1, trials: n1 }, { passes: c2, trials: n2 });
    assert.equal(difference, c1 / n1 - c2 / n2);
    near(interval.lower, lower);
    near(interval.upper, upper);
  }
});

/** A Wilson bound computed another way: the root of (p̂ − π)² = z²·π(1 − π)/n on one side of p̂, by bisection. */
function wilsonBoundByBisection(passes: number, trials: number, side: "lower" | "upper"): number {
  const p = passes / trials;
  const z = 1.959963984540054;
  const excess = (pi: number) => (p - pi) ** 2 - (z * z * pi * (1 - pi)) / trials;
  let [inside, outside] = side === "lower" ? [p, 0] : [p, 1];
  if (excess(outside) <= 0) return outside;
  for (let i = 0; i < 200; i++) {
    const mid = (inside + outside) / 2;
    if (excess(mid) > 0) outside = mid;
    else inside = mid;
  }
  return (inside + outside) / 2;
}

test("the interval equals square-and-add over Wilson bounds found by bisection", () => {
  for (const [c1, n1, c2, n2] of [[3, 5, 5, 5], [7, 9, 2, 11], [1, 3, 12, 40], [17, 20, 18, 20]] as const) {
    const p1 = c1 / n1;
    const p2 = c2 / n2;
    const [l1, u1, l2, u2] = [wilsonBoundByBisection(c1, n1, "lower"), wilsonBoundByBisection(c1, n1, "upper"), wilsonBoundByBisection(c2, n2, "lower"), wilsonBoundByBisection(c2, n2, "upper")];
    const { interval } = newcombeDifference({ passes: c1, trials: n1 }, { passes: c2, trials: n2 });
    near(interval.lower, p1 - p2 - Math.hypot(p1 - l1, u2 - p2), 9);
    near(interval.upper, p1 - p2 + Math.hypot(u1 - p1, p2 - l2), 9);
  }
});

test("the interval is refused for a side without a counted trial", () => {
  assert.throws(() => newcombeDifference({ passes: 0, trials: 0 }, { passes: 1, trials: 2 }), RangeError);
});
