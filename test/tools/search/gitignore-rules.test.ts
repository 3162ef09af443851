import assert from "node:assert/strict";
import { test } from "node:test";
import { foldersAbove, inheritedMatchers, isIgnored, makeMatcher, rebaseRule, ripgrepIgnoreText } from "../../../src/tools/search/gitignore-rules.js";
import { tempDir } from "../../support/temp-dir.js";
import { makeTree } from "../tool-harness.js";

test("foldersAbove lists the workspace root down to the parent of the search root", () => {
  assert.deepEqual(foldersAbove(""), []);
  assert.deepEqual(foldersAbove("src"), [""]);
  assert.deepEqual(foldersAbove("a/b/c"), ["", "a", "a/b"]);
});

test("the deepest .gitignore with an opinion decides", () => {
  const matchers = [makeMatcher("", "*.log\nbuild/\n"), makeMatcher("app", "!keep.log\n/local/\n")];
  assert.equal(isIgnored(matchers, "x.log", false), true);
  assert.equal(isIgnored(matchers, "app/keep.log", false), false);
  assert.equal(isIgnored(matchers, "app/other.log", false), true);
  assert.equal(isIgnored(matchers, "app/local", true), true);
  assert.equal(isIgnored(matchers, "app/sub/local", true), false);
  assert.equal(isIgnored(matchers, "app/build", true), true);
  assert.equal(isIgnored(matchers, "app/build", false), false);
});

test("matching is case-sensitive, as git on Linux", () => {
  assert.equal(isIgnored([makeMatcher("", "Build/\n")], "build", true), false);
});

test("rebaseRule prefixes anchored rules with their folder and leaves unanchored ones", () => {
  assert.equal(rebaseRule("", "/dist"), "/dist");
  assert.equal(rebaseRule("pkg", "*.log"), "*.log");
  assert.equal(rebaseRule("pkg", "cache/"), "cache/");
  assert.equal(rebaseRule("pkg", "/cache/"), "/pkg/cache/");
  assert.equal(rebaseRule("pkg", "app/*.gen.js"), "/pkg/app/*.gen.js");
  assert.equal(rebaseRule("pkg", "!/app/keep.js"), "!/pkg/app/keep.js");
  assert.equal(rebaseRule("a[1]", "/x"), "/a\\[1\\]/x");
  assert.equal(rebaseRule("pkg", "# comment"), null);
  assert.equal(rebaseRule("pkg", "   "), null);
});

test("ripgrepIgnoreText joins the inherited rules shallowest first", () => {
  const text = ripgrepIgnoreText([makeMatcher("", "*.log\n"), makeMatcher("pkg", "/out/\n!keep.log\n")]);
  assert.equal(text, "*.log\n/pkg/out/\n!keep.log\n");
  assert.equal(ripgrepIgnoreText([]), "");
});

test("inheritedMatchers drops the rules above a search root they ignore", async (t) => {
  const ws = await tempDir(t);
  await makeTree(ws, { ".gitignore": "node_modules/\n", "pkg/.gitignore": "*.tmp\n", "pkg/node_modules/m/a.js": "" });
  assert.deepEqual((await inheritedMatchers(ws, "pkg/sub")).map((m) => m.dir), ["", "pkg"]);
  assert.deepEqual(await inheritedMatchers(ws, "pkg/node_modules/m"), []);
  assert.deepEqual(await inheritedMatchers(ws, ""), []);
});
