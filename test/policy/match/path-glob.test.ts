/** Path globs: what a policy may not use, and how workspace paths match. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileGlobs, firstMatchingGlob, globProblem } from "../../../src/policy/match/path-glob.js";

test("globs that cannot work are refused with a reason", () => {
  assert.equal(globProblem("src/**"), null);
  assert.equal(globProblem("**/*.{ts,tsx}"), null);
  const bad: Array<[string, string]> = [
    ["", "cannot be empty"], ["/etc/**", "is absolute"], ["~/x", "is absolute"], ["C:/x", "is absolute"],
    ["./src/**", "starts with ./"], ["!src/**", "negation is not supported"], ["src\\**", "backslash"],
    ["../x", 'contains ".."'], ["src/../x", 'contains ".."'], ["src/[a", "unclosed `[`"], ["src/{a,b", "unclosed `{`"],
    ["src/a]", "unclosed `]`"],
  ];
  for (const [glob, says] of bad) assert.ok(globProblem(glob)?.includes(says), `${glob}: ${globProblem(glob)}`);
});

test("globs match dot paths, a folder glob covers the folder, and only ** covers the root", () => {
  const match = compileGlobs([".github/**", "**/.env"]);
  assert.equal(match(".github"), true);
  assert.equal(match(".github/workflows/ci.yml"), true);
  assert.equal(match(".env"), true);
  assert.equal(match("a/b/.env"), true);
  assert.equal(match(".envrc"), false);
  assert.equal(match("."), false);
  assert.equal(compileGlobs(["**"])("."), true);
  assert.equal(compileGlobs(["**"])(".git/config"), true);
  assert.equal(firstMatchingGlob(["src/**", "**/.env"], "src/.env"), "src/**");
});
