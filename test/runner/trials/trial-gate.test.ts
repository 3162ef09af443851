/** The gate of a repeated task and its early stop, against the arithmetic. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  EVERY_TRIAL, type TrialGate, fewestPassing, fewestTrialsToPass, gateDecision, gatePasses,
} from "../../../src/runner/trials/trial-gate.js";
import { seedFrom, seededRandom } from "../../support/seeded-random.js";

const rate = (min: number): TrialGate => ({ kind: "rate", min, judgedOn: "rate" });
const lower = (min: number): TrialGate => ({ kind: "rate", min, judgedOn: "lower" });

test("the default gate: every counted trial passed; nothing counted never passes", () => {
  assert.equal(gatePasses(EVERY_TRIAL, 1, 1), true);
  assert.equal(gatePasses(EVERY_TRIAL, 4, 5), false);
  assert.equal(gatePasses(EVERY_TRIAL, 0, 0), false);
});

test("a rate gate takes the rate at its minimum, a lower-bound gate the interval's lower end", () => {
  assert.equal(gatePasses(rate(0.8), 4, 5), true);
  assert.equal(gatePasses(rate(0.8), 3, 5), false);
  assert.equal(gatePasses(lower(0.8), 5, 5), false); // lower bound 0.566
  assert.equal(gatePasses(lower(0.8), 16, 16), true);
});

test("validate's arithmetic: at 0.8 on the lower bound it takes 16 of 16; 5 trials can never pass", () => {
  assert.equal(fewestTrialsToPass(lower(0.8)), 16);
  assert.equal(fewestPassing(lower(0.8), 5), null);
  assert.equal(fewestPassing(rate(0.8), 5), 4);
  assert.equal(fewestTrialsToPass(rate(1.01)), null);
});

test("the early stop: 0 of 3 with a 0.8 rate over 5 is decided failed; 2 of 3 is not decided", () => {
  assert.deepEqual(gateDecision(rate(0.8), { passes: 0, counted: 3, planned: 5 }), { decided: true, passed: false });
  assert.deepEqual(gateDecision(rate(0.8), { passes: 0, counted: 2, planned: 5 }), { decided: true, passed: false });
  assert.deepEqual(gateDecision(rate(0.8), { passes: 0, counted: 1, planned: 5 }), { decided: false });
  assert.deepEqual(gateDecision(rate(0.8), { passes: 2, counted: 3, planned: 5 }), { decided: false });
  assert.deepEqual(gateDecision(rate(0.6), { passes: 3, counted: 3, planned: 5 }), { decided: true, passed: true });
  assert.deepEqual(gateDecision(EVERY_TRIAL, { passes: 2, counted: 3, planned: 5 }), { decided: true, passed: false });
  assert.deepEqual(gateDecision(EVERY_TRIAL, { passes: 4, counted: 4, planned: 5 }), { decided: false });
});

test("a decided outcome is the one every way the remaining trials can go ends in (random plans)", () => {
  const random = seededRandom(seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED"));
  console.log(`seed ${random.seed} (RHEMA_TEST_SEED to replay)`);
  for (let round = 0; round < 300; round++) {
    const planned = random.int(1, 12);
    const counted = random.int(0, planned);
    const passes = random.int(0, counted);
    const gate = [EVERY_TRIAL, rate(random.int(1, 10) / 10), lower(random.int(1, 9) / 10)][random.int(0, 2)]!;
    const decision = gateDecision(gate, { passes, counted, planned });
    const finals = new Set<boolean>();
    for (let more = 0; more <= planned - counted; more++) finals.add(gatePasses(gate, passes + more, planned));
    if (decision.decided) assert.deepEqual([...finals], [decision.passed], JSON.stringify({ gate, passes, counted, planned }));
    else assert.equal(finals.size, 2, JSON.stringify({ gate, passes, counted, planned }));
  }
});
