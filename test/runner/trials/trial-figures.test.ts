/** Trial figures against numbers worked out by hand, and pass@k / pass^k against brute-force enumeration. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  costPerPass, isFlaky, parseKList, passAtK, passPowerK, passRate, spreadOf, wilsonInterval,
} from "../../../src/runner/trials/trial-figures.js";
import { seedFrom, seededRandom } from "../../support/seeded-random.js";

const near = (actual: number, expected: number, digits = 4): void =>
  assert.ok(Math.abs(actual - expected) < 10 ** -digits / 2, `${actual} is not ${expected} to ${digits} places`);

test("the Wilson interval matches the published values and is exact at 0 and n", () => {
  const three = wilsonInterval(3, 5);
  near(three.lower, 0.2307);
  near(three.upper, 0.8824);
  const all = wilsonInterval(5, 5);
  near(all.lower, 0.5655);
  assert.equal(all.upper, 1);
  const none = wilsonInterval(0, 5);
  assert.equal(none.lower, 0);
  near(none.upper, 0.4345);
  near(wilsonInterval(16, 16).lower, 0.8064);
  near(wilsonInterval(15, 15).lower, 0.7961);
});

test("the pass rate is null with no counted trial, else c/n with its interval", () => {
  assert.equal(passRate(0, 0), null);
  const rate = passRate(4, 5)!;
  assert.equal(rate.rate, 0.8);
  assert.ok(rate.interval.lower < 0.8 && rate.interval.upper > 0.8);
});

test("pass@k and pass^k by hand: 3 of 5, 2 of 10", () => {
  assert.deepEqual(passAtK(3, 5, 1), { k: 1, value: 0.6 });
  assert.deepEqual(passAtK(3, 5, 3), { k: 3, value: 1 }); // only 2 failures: any 3 hold a pass
  near(passPowerK(3, 5, 3).value!, 0.1); // C(3,3)/C(5,3) = 1/10
  near(passAtK(2, 10, 3).value!, 1 - 56 / 120); // 1 − C(8,3)/C(10,3)
  near(passPowerK(2, 10, 2).value!, 1 / 45); // C(2,2)/C(10,2)
  assert.deepEqual(passPowerK(2, 10, 3), { k: 3, value: 0 });
});

test("k above n cannot be estimated and says n<k, never a number", () => {
  assert.deepEqual(passAtK(2, 2, 3), { k: 3, value: null, why: "n<k" });
  assert.deepEqual(passPowerK(0, 0, 1), { k: 1, value: null, why: "n<k" });
});

/** The share of k-subsets of the trials with at least one pass (any) or only passes (all). */
function enumerate(outcomes: boolean[], k: number): { any: number; all: number } {
  let subsets = 0;
  let any = 0;
  let all = 0;
  const walk = (from: number, chosen: boolean[]): void => {
    if (chosen.length === k) {
      subsets++;
      if (chosen.some(Boolean)) any++;
      if (chosen.every(Boolean)) all++;
      return;
    }
    for (let i = from; i < outcomes.length; i++) walk(i + 1, [...chosen, outcomes[i]!]);
  };
  walk(0, []);
  return { any: any / subsets, all: all / subsets };
}

test("pass@k and pass^k equal the share of k-subsets with a pass / with only passes (random outcomes)", () => {
  const random = seededRandom(seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED"));
  console.log(`seed ${random.seed} (RHEMA_TEST_SEED to replay)`);
  for (let round = 0; round < 200; round++) {
    const n = random.int(1, 10);
    const outcomes = Array.from({ length: n }, () => random.next() < 0.5);
    const c = outcomes.filter(Boolean).length;
    const k = random.int(1, n);
    const expected = enumerate(outcomes, k);
    near(passAtK(c, n, k).value!, expected.any, 9);
    near(passPowerK(c, n, k).value!, expected.all, 9);
  }
});

test("spread: mean, sample SD (none for one value), min and max", () => {
  assert.equal(spreadOf([]), null);
  assert.deepEqual(spreadOf([7]), { count: 1, mean: 7, sd: null, min: 7, max: 7 });
  const s = spreadOf([2, 4, 4, 4, 5, 5, 7, 9])!;
  assert.equal(s.mean, 5);
  near(s.sd!, Math.sqrt(32 / 7));
  assert.deepEqual([s.min, s.max], [2, 9]);
});

test("cost per pass: dollars over passes, 'no pass' with none, unpriced when any trial is", () => {
  const perPass = costPerPass([0.1, 0.2, 0.3], 2);
  assert.equal(perPass.kind, "usd");
  near(perPass.kind === "usd" ? perPass.usd : NaN, 0.3, 12);
  assert.deepEqual(costPerPass([0.1, 0.2], 0), { kind: "no-pass", spentUsd: 0.1 + 0.2 });
  assert.deepEqual(costPerPass([0.1, null], 1), { kind: "unpriced" });
});

test("flaky means it both passed and failed", () => {
  assert.equal(isFlaky(0, 3), false);
  assert.equal(isFlaky(3, 3), false);
  assert.equal(isFlaky(1, 3), true);
  assert.equal(isFlaky(0, 0), false);
});

test("counts outside 0 <= c <= n and k below 1 are programming errors, thrown", () => {
  assert.throws(() => passRate(4, 3), RangeError);
  assert.throws(() => passAtK(1, 3, 0), RangeError);
  assert.throws(() => wilsonInterval(1.5, 3), RangeError);
});

test("--pass-at reads distinct whole numbers and names the bad part", () => {
  assert.deepEqual(parseKList("1,3"), [1, 3]);
  assert.deepEqual(parseKList(" 3, 1,3 "), [3, 1]);
  for (const bad of ["", "0", "1,,3", "a", "1.5", "-1", "1;3"]) {
    const parsed = parseKList(bad);
    assert.ok(!Array.isArray(parsed), `accepted ${JSON.stringify(bad)}`);
    assert.match(parsed.error, /expected whole numbers/);
  }
});
