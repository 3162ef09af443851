import assert from "node:assert/strict";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { byCodeUnits, listFiles, narrowRoot } from "../../../src/tools/search/workspace-files.js";
import { tempDir } from "../../support/temp-dir.js";
import { searchFixture } from "../search-fixture.js";
import { searchBackends } from "../tool-harness.js";

test("every backend lists the same files for the same tree", async (t) => {
  const ws = await tempDir(t);
  await searchFixture(ws);
  const signal = new AbortController().signal;
  const listings = new Map<string, string[]>();
  for (const backend of await searchBackends()) {
    const rg = typeof backend.choice === "object" ? backend.choice.binary : null;
    for (const root of ["", "src", "src/sub", "lib", "node_modules"]) {
      listings.set(`${backend.name} ${root}`, (await listFiles({ workspace: ws, root, rg, signal })).sort(byCodeUnits));
    }
  }
  for (const root of ["", "src", "src/sub", "lib", "node_modules"]) {
    const js = listings.get(`js ${root}`);
    for (const [key, files] of listings) if (key.endsWith(` ${root}`)) assert.deepEqual(files, js, key);
  }
});

test("narrowRoot goes down to a real folder named by the pattern's fixed part only", async (t) => {
  const ws = await tempDir(t);
  await mkdir(join(ws, "src/app"), { recursive: true });
  await symlink("src", join(ws, "link"));
  assert.equal(await narrowRoot(ws, "", "src/app"), "src/app");
  assert.equal(await narrowRoot(ws, "src", "app"), "src/app");
  assert.equal(await narrowRoot(ws, "", "link/app"), "");
  assert.equal(await narrowRoot(ws, "", "missing"), "");
  assert.equal(await narrowRoot(ws, "", "../x"), "");
  assert.equal(await narrowRoot(ws, "", "a\\*b"), "");
});

test("byCodeUnits orders by code unit, not locale", () => {
  assert.deepEqual(["b", "B", "a", "_", "é"].sort(byCodeUnits), ["B", "_", "a", "b", "é"]);
});
