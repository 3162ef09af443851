/** Trial labels say only what tells a trial from its siblings; folders never hold '#' or '@'; labels read back. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type TrialKey, compareTrials, expandTrials, parseTrialLabel, trialFolderSegments, trialLabel,
} from "../../../src/runner/trials/trial-key.js";

const key = (over: Partial<TrialKey> = {}): TrialKey => ({ suite: "shop", id: "fix-cart", variant: null, repeat: 1, ...over });

test("a task's only trial keeps its task label; repeats add #n, variants @name", () => {
  assert.equal(trialLabel(key(), { repeats: 1, variants: false }), "shop/fix-cart");
  assert.equal(trialLabel(key({ repeat: 3 }), { repeats: 5, variants: false }), "shop/fix-cart#3");
  assert.equal(trialLabel(key({ variant: "sonnet", repeat: 3 }), { repeats: 5, variants: true }), "shop/fix-cart@sonnet#3");
  assert.equal(trialLabel(key({ variant: "sonnet" }), { repeats: 1, variants: true }), "shop/fix-cart@sonnet");
});

test("folders are suite/id/variant-or-default/n, with no '#' or '@'", () => {
  assert.deepEqual(trialFolderSegments(key({ repeat: 12 })), ["shop", "fix-cart", "default", "12"]);
  assert.deepEqual(trialFolderSegments(key({ variant: "v.2", repeat: 1 })), ["shop", "fix-cart", "v.2", "1"]);
  for (const segment of trialFolderSegments(key({ variant: "x", repeat: 2 }))) assert.doesNotMatch(segment, /[#@/]/);
});

test("every label reads back to its trial; anything else is not a label", () => {
  for (const [k, context] of [
    [key(), { repeats: 1, variants: false }],
    [key({ repeat: 3 }), { repeats: 5, variants: false }],
    [key({ variant: "v-1", repeat: 2 }), { repeats: 2, variants: true }],
  ] as const) {
    const parsed = parseTrialLabel(trialLabel(k, context));
    assert.deepEqual(parsed, { ...k, repeat: context.repeats > 1 ? k.repeat : null });
  }
  for (const bad of ["", "shop", "shop/", "/x", "shop/x#0", "shop/x#", "shop/x@", "shop/x#1@v", "shop/x y", "shop/.x", "a/b/c"]) {
    assert.equal(parseTrialLabel(bad), null, `read ${JSON.stringify(bad)} as a label`);
  }
});

test("trials expand per variant and repeat, in one order: no variant first, repeats by number (10 after 9)", () => {
  const trials = expandTrials([{ suite: "b", id: "t", repeats: 1 }, { suite: "a", id: "t", repeats: 10 }]);
  assert.equal(trials.length, 11);
  assert.deepEqual(trials.slice(8, 11).map((t) => [t.suite, t.repeat]), [["a", 9], ["a", 10], ["b", 1]]);
  const withVariants = expandTrials([{ suite: "a", id: "t", repeats: 2 }], ["y", "x"]);
  assert.deepEqual(withVariants.map((t) => `${t.variant}#${t.repeat}`), ["x#1", "x#2", "y#1", "y#2"]);
  assert.ok(compareTrials(key({ variant: null }), key({ variant: "a" })) < 0);
  assert.throws(() => expandTrials([{ suite: "a", id: "t", repeats: 0 }]), /0 repeats/);
});
