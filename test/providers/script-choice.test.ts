/** The choice of a trial's script among a scripted model's alternatives: pure, keyed by (seed, trial), weighted. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ScriptAlternative } from "../../src/providers/script.js";
import { chooseScript, chooseScriptIndex, scriptDraw, weightedIndex, type ScriptTrial } from "../../src/providers/script-choice.js";
import { seedFrom, seededRandom } from "../support/seeded-random.js";

const trial = (repeat: number, over: Partial<ScriptTrial> = {}): ScriptTrial => ({ suite: "s", id: "t", variant: null, repeat, ...over });
const alternatives = (...weights: (number | undefined)[]): ScriptAlternative[] =>
  weights.map((weight, i) => ({ script: [{ say: `alternative ${i}` }], ...(weight === undefined ? {} : { weight }) }));

test("the draw of a trial is pinned: the same (seed, key) gives the same number in every build", () => {
  // Written down once: a change here changes which alternative every resumed trial replays.
  assert.equal(scriptDraw("", trial(1)), 0.8639725329907186);
  assert.equal(scriptDraw("42", trial(3, { variant: "fast" })), 0.6929107000368688);
  assert.equal(scriptDraw("42", trial(3, { variant: "fast" })), scriptDraw("42", trial(3, { variant: "fast" })));
});

test("the flaky example of docs/tasks.md (seed 3, arithmetic/flaky-fix) draws alternatives 1, 1, 2, 2, 1 for its five trials", () => {
  const model = { scripts: alternatives(undefined, undefined) };
  const picks = [1, 2, 3, 4, 5].map((repeat) => chooseScriptIndex(model, "3", { suite: "arithmetic", id: "flaky-fix", variant: null, repeat }));
  assert.deepEqual(picks, [0, 0, 1, 1, 0]);
});

test("every part of the key and the seed enters the draw", () => {
  const base = scriptDraw("7", trial(2));
  const changed: Record<string, number> = {
    seed: scriptDraw("8", trial(2)),
    suite: scriptDraw("7", trial(2, { suite: "s2" })),
    id: scriptDraw("7", trial(2, { id: "t2" })),
    variant: scriptDraw("7", trial(2, { variant: "v" })),
    repeat: scriptDraw("7", trial(3)),
  };
  for (const [part, u] of Object.entries(changed)) assert.notEqual(u, base, `changing the ${part} left the draw as it was`);
  // The spelling is unambiguous: a seed that ends where the suite begins is another key.
  assert.notEqual(scriptDraw("a", trial(1, { suite: "bc" })), scriptDraw("ab", trial(1, { suite: "c" })));
  assert.notEqual(scriptDraw("", trial(1, { variant: "null" })), scriptDraw("", trial(1)));
});

test("the same trial chooses the same alternative every time; a model with one script plays it", () => {
  const model = { scripts: alternatives(1, 1, 1) };
  for (let repeat = 1; repeat <= 50; repeat++) {
    const first = chooseScript(model, "seed", trial(repeat));
    for (let again = 0; again < 3; again++) assert.equal(chooseScript(model, "seed", trial(repeat)), first);
  }
  const script = [{ say: "only" }];
  assert.equal(chooseScript({ script }, "seed", trial(9)), script);
  assert.equal(chooseScriptIndex({ script }, "seed", trial(9)), null);
});

test("over many trials the shares of the draw approach the weights (bound: 5 standard deviations of a binomial share)", () => {
  const random = seededRandom(seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED"));
  console.log(`seed ${random.seed} (RHEMA_TEST_SEED to replay)`);
  const taskSeed = String(random.int(0, 2 ** 32 - 1));
  const weights = [1, 2, 5];
  const model = { scripts: alternatives(...weights) };
  const trials = 2000;
  const counts = weights.map(() => 0);
  for (let n = 1; n <= trials; n++) {
    // Keys of several tasks, variants and repeats, as a run's trials are.
    const key = trial(n, { id: `t${n % 7}`, variant: n % 3 === 0 ? "v" : null });
    counts[chooseScriptIndex(model, taskSeed, key)!]! += 1;
  }
  // Each share is a binomial proportion (sha256 taken as a random function): p = w/Σw, σ = √(p(1−p)/N).
  // |share − p| > 5σ has a probability below 6e-7 per alternative, so below 2e-6 for the test.
  const total = weights.reduce((a, b) => a + b, 0);
  for (const [i, weight] of weights.entries()) {
    const p = weight / total;
    const sigma = Math.sqrt((p * (1 - p)) / trials);
    const share = counts[i]! / trials;
    assert.ok(Math.abs(share - p) <= 5 * sigma, `alternative ${i}: share ${share} is more than 5σ (${(5 * sigma).toFixed(4)}) from ${p} (task seed ${taskSeed}, counts ${counts.join("/")})`);
  }
});

test("pick: repeat cycles through the alternatives from the first, whatever the weights and the seed", () => {
  const model = { scripts: alternatives(100, 1, 1), pick: "repeat" as const };
  const picked = Array.from({ length: 7 }, (_, i) => chooseScriptIndex(model, String(i), trial(i + 1)));
  assert.deepEqual(picked, [0, 1, 2, 0, 1, 2, 0]);
  assert.equal(chooseScript(model, "", trial(5))[0]!.say, "alternative 1");
});

test("weightedIndex cuts [0, 1) into pieces in proportion to the weights, the ends included", () => {
  assert.deepEqual([0, 0.1999, 0.2, 0.9999, 1 - 2 ** -48].map((u) => weightedIndex([1, 4], u)), [0, 0, 1, 1, 1]);
  assert.deepEqual([0, 0.5, 0.75].map((u) => weightedIndex([0.5, 0.25, 0.25], u)), [0, 1, 2]);
});

test("input the schema rejects is a RangeError, not a silent pick", () => {
  assert.throws(() => chooseScript({}, "", trial(1)), RangeError);
  assert.throws(() => chooseScript({ scripts: [] }, "", trial(1)), RangeError);
  assert.throws(() => chooseScript({ scripts: alternatives(1, 0) }, "", trial(1)), /weight 0/);
  assert.throws(() => chooseScript({ scripts: alternatives(1), pick: "repeat" }, "", trial(0)), /repeat 0/);
});
