/**
 * `mayExclude`: whether a layered trial's end must ask git which of its staged files an exclude
 * takes out. It may say yes when none is (a glob), never no when one is: checked against git's own
 * matching of the same pathspecs over an index of the same paths, for random paths and patterns
 * (seeded: RHEMA_TEST_SEED replays a run).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { changesSettings, mayExclude, patternPathspecs } from "../../../src/runner/tasks/changes-settings.js";
import { seedFrom, seededRandom } from "../../support/seeded-random.js";
import { tempDir } from "../../support/temp-dir.js";

const settings = (exclude: string[]) => ({ ...changesSettings(undefined), exclude });

test("a plain name matches a file of that name or a folder of that name above one, at any depth; a name ending in / only the folder", () => {
  assert.equal(mayExclude(settings(["node_modules"]), ["src/a.js", "README.md"]), false);
  assert.equal(mayExclude(settings(["node_modules"]), ["web/node_modules/x/y.js"]), true);
  assert.equal(mayExclude(settings(["package-lock.json"]), ["web/package-lock.json"]), true);
  assert.equal(mayExclude(settings(["package-lock.json"]), ["web/package-lock.json.bak"]), false);
  assert.equal(mayExclude(settings(["dist/"]), ["dist"]), false, "a file named dist is no folder");
  assert.equal(mayExclude(settings(["dist/"]), ["a/dist/b.js"]), true);
});

test("a path with a slash matches from the workspace's root: the file itself, or what lies under it", () => {
  assert.equal(mayExclude(settings(["gen/out"]), ["gen/out"]), true);
  assert.equal(mayExclude(settings(["gen/out"]), ["gen/out/a.txt"]), true);
  assert.equal(mayExclude(settings(["gen/out"]), ["src/gen/out"]), false);
  assert.equal(mayExclude(settings(["gen/out/"]), ["gen/out"]), false);
  assert.equal(mayExclude(settings(["gen/out/"]), ["gen/output.txt"]), false);
});

test("a glob, or a path git reads otherwise than written, always asks git", () => {
  for (const pattern of ["*.log", "a?c", "[ab]", "logs/**", "/root.txt", "./a", "a//b", "../x", "a\\b"]) {
    assert.equal(mayExclude(settings([pattern]), ["nothing/like/it"]), true, pattern);
  }
  assert.equal(mayExclude(settings([]), ["a"]), false, "no exclude: nothing to take out");
});

test("never says no where git's own matching of the exclude pathspecs finds a file: random paths and patterns", async (t) => {
  const seed = seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED");
  t.diagnostic(`seed ${seed} (set RHEMA_TEST_SEED to replay)`);
  const random = seededRandom(seed);
  const names = ["a", "b c", "é", "node_modules", "dist", "x.lock", "go.sum", "out"];
  const pick = <T>(items: readonly T[]): T => items[random.int(0, items.length - 1)]!;
  const dir = await tempDir(t);
  const env = { PATH: process.env.PATH, GIT_DIR: join(dir, "git"), GIT_INDEX_FILE: join(dir, "index"), GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
  execFileSync("git", ["init", "-q", "--bare", join(dir, "git")], { env });
  const emptyBlob = execFileSync("git", ["hash-object", "-t", "blob", "--stdin"], { env, input: "" }).toString("utf8").trim();
  for (let round = 0; round < 40; round++) {
    // Files without a folder of one's name at another (an index cannot hold both).
    const files = [...new Set(Array.from({ length: random.int(1, 4) }, () => Array.from({ length: random.int(1, 3) }, () => pick(names)).join("/")))]
      .filter((file, _, all) => !all.some((other) => other.startsWith(`${file}/`)));
    const patterns = Array.from({ length: random.int(1, 2) }, () => {
      const body = Array.from({ length: random.int(1, 2) }, () => pick(names)).join("/");
      return random.int(0, 1) === 0 ? body : `${body}/`;
    });
    execFileSync("git", ["read-tree", "--empty"], { env });
    execFileSync("git", ["update-index", "--add", "-z", "--index-info"], { env, input: files.map((file) => `100644 ${emptyBlob}\t${file}\0`).join("") });
    const matched = execFileSync("git", ["ls-files", "-z", "--", ...patterns.flatMap(patternPathspecs).map((spec) => `:(glob)${spec}`)], { env }).toString("utf8");
    const gitFinds = matched !== "";
    const says = mayExclude(settings(patterns), files);
    // Plain names and paths: the same answer as git's, both ways.
    assert.equal(says, gitFinds, `round ${round} (seed ${seed}): ${JSON.stringify({ files, patterns, matched })}`);
  }
});
