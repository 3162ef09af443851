/**
 * Glob overlap: whether two path globs could match a common path. It must never say no when
 * there is one (checked against picomatch on random globs and paths; the seed is printed and
 * taken from RHEMA_TEST_SEED), and it says no where the globs plainly part.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import picomatch from "picomatch";
import { couldHoldMatch, expandBraces, globsOverlap } from "../../../src/policy/match/glob-overlap.js";

test("a glob operand meets the deny glob it could expand to", () => {
  for (const operand of [".e*", ".en?", ".[e]nv", "?env", "{.x,.env}", "*", "**/*", "*/*", ".e{n,x}v", "[.]env", "src/.e*", "**"]) {
    assert.equal(globsOverlap(operand, "**/.env"), true, operand);
  }
  for (const operand of ["*.ts", "src/*.ts", "{a,b}.md", ".env.example", "?.js", "[ab].ts"]) {
    assert.equal(globsOverlap(operand, "**/.env"), false, operand);
  }
  assert.equal(globsOverlap(".gith*/*", ".github/**"), true);
  // picomatch matches `x/**/***` against `x` itself (seed 77093 of the random test below found it).
  assert.equal(globsOverlap("[ab]a[ab]/**/***", "baa"), true);
  assert.equal(globsOverlap("src/***", "src"), true);
  assert.equal(globsOverlap("src/*", ".github/**"), false);
});

test("a folder could hold what a glob matches under it, or be it", () => {
  assert.equal(couldHoldMatch(".", "**/.env"), true);
  assert.equal(couldHoldMatch("src", "**/.env"), true);
  assert.equal(couldHoldMatch("src", ".github/**"), false);
  assert.equal(couldHoldMatch(".github/workflows", ".github/**"), true);
  assert.equal(couldHoldMatch(".", ".github/**"), true);
  assert.equal(couldHoldMatch("docs", "src/**/*.ts"), false);
});

test("braces expand to their words, sequences included, and give up past the limit", () => {
  assert.deepEqual(expandBraces("a{b,c}d"), ["abd", "acd"]);
  assert.deepEqual(expandBraces("{a,{b,c}}"), ["a", "b", "c"]);
  assert.deepEqual(expandBraces("x{1..3}"), ["x1", "x2", "x3"]);
  assert.deepEqual(expandBraces("{a..c}"), ["a", "b", "c"]);
  assert.deepEqual(expandBraces("{a}"), ["{a}"]);
  assert.equal(expandBraces("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", 64), null);
});

/** A small, seeded generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("never says no when a common path exists (random globs checked against picomatch)", (t) => {
  const seed = Number(process.env.RHEMA_TEST_SEED ?? Date.now() % 1_000_000);
  t.diagnostic(`seed ${seed} (set RHEMA_TEST_SEED to repeat)`);
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const segment = (glob: boolean): string => {
    const length = 1 + Math.floor(next() * 3);
    let out = "";
    for (let i = 0; i < length; i++) out += glob ? pick(["a", "b", ".", "*", "?", "[ab]", "[!a]", "a"]) : pick(["a", "b", "."]);
    return out;
  };
  const globOf = (): string => Array.from({ length: 1 + Math.floor(next() * 3) }, () => (next() < 0.15 ? "**" : segment(true))).join("/");
  const pathOf = (): string => Array.from({ length: 1 + Math.floor(next() * 3) }, () => segment(false)).join("/");
  const paths = Array.from({ length: 300 }, pathOf).filter((p) => !p.split("/").some((s) => s === "." || s === ".."));
  for (let round = 0; round < 400; round++) {
    const a = globOf();
    const b = globOf();
    const ma = picomatch(a, { dot: true });
    const mb = picomatch(b, { dot: true });
    const common = paths.find((p) => ma(p) && mb(p));
    if (common !== undefined) assert.equal(globsOverlap(a, b), true, `seed ${seed}: ${a} and ${b} both match ${common}`);
  }
});
