import assert from "node:assert/strict";
import { test } from "node:test";
import { bundledRipgrep, recordSplitter, ripgrepLocator, ripgrepMajorVersion, stripDotSlash } from "../../../src/tools/search/ripgrep.js";

test("the bundled rg from @vscode/ripgrep is there and runs", async () => {
  const rg = await bundledRipgrep();
  assert.ok(rg, "@vscode/ripgrep's binary is missing");
  assert.ok(((await ripgrepMajorVersion(rg)) ?? 0) >= 13);
});

test("the locator takes rg on PATH when it is recent enough, else the bundled one", async () => {
  const found = await ripgrepLocator("auto")();
  const onPath = ((await ripgrepMajorVersion("rg")) ?? 0) >= 13;
  assert.equal(found, onPath ? "rg" : await bundledRipgrep());
});

test("the locator honours 'js' and an explicit binary, and asks once", async () => {
  assert.equal(await ripgrepLocator("js")(), null);
  const locate = ripgrepLocator({ binary: "/opt/rg" });
  assert.equal(await locate(), "/opt/rg");
  assert.equal(locate(), locate());
});

test("a binary that does not run has no version", async () => {
  assert.equal(await ripgrepMajorVersion("/nonexistent/rg"), null);
});

test("recordSplitter splits across chunks and cuts nothing short", () => {
  const records: string[] = [];
  const splitter = recordSplitter(0, (r) => records.push(r));
  splitter.push(Buffer.from("a/b\0c"));
  splitter.push(Buffer.from("d\0"));
  splitter.push(Buffer.from("é"));
  splitter.push(Buffer.from("\0tail"));
  splitter.end();
  assert.deepEqual(records, ["a/b", "cd", "é", "tail"]);
});

test("stripDotSlash removes rg's ./ prefix only", () => {
  assert.equal(stripDotSlash("./a/b"), "a/b");
  assert.equal(stripDotSlash(".hidden/x"), ".hidden/x");
});
