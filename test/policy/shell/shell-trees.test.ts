/**
 * Walking a folder read whole: everything under it, the targets of the links inside when links
 * are followed (and where they leave the workspace), a bound that marks the walk incomplete, and
 * an interest that skips folders that cannot matter and stops at the first denied path.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { walkTree } from "../../../src/policy/shell/shell-trees.js";
import { tempDir } from "../../support/temp-dir.js";

async function fixture(t: Parameters<typeof tempDir>[0]): Promise<{ ws: string; outside: string }> {
  const root = await tempDir(t, "rhema-trees-");
  const ws = join(root, "ws");
  await mkdir(join(ws, "src", "deep"), { recursive: true });
  await mkdir(join(ws, "big"), { recursive: true });
  await mkdir(join(root, "out"));
  await writeFile(join(ws, "src", "a.ts"), "");
  await writeFile(join(ws, "src", "deep", ".env"), "");
  for (let i = 0; i < 50; i++) await writeFile(join(ws, "big", `f${i}`), "");
  await symlink(join(root, "out"), join(ws, "src", "away"));
  await symlink(join(ws, "big"), join(ws, "src", "big-link"));
  return { ws: await realpath(ws), outside: await realpath(join(root, "out")) };
}

test("without following links a walk lists what is under the folder, links as names", async (t) => {
  const { ws } = await fixture(t);
  const tree = await walkTree(ws, ["src"], false, { entries: 1000 });
  assert.deepEqual(tree.kind === "walked" && [...tree.entries].sort(), ["src", "src/a.ts", "src/away", "src/big-link", "src/deep", "src/deep/.env"]);
  assert.deepEqual(tree.kind === "walked" && tree.outside, []);
});

test("following links, a walk reads what they lead to and notes where they leave the workspace", async (t) => {
  const { ws, outside } = await fixture(t);
  const tree = await walkTree(ws, ["src"], true, { entries: 1000 });
  assert.ok(tree.kind === "walked");
  assert.deepEqual(tree.outside, [outside]);
  assert.ok(tree.entries.includes("big/f0"), "the linked folder is read too");
});

test("past its bound a walk says it is incomplete", async (t) => {
  const { ws } = await fixture(t);
  const tree = await walkTree(ws, ["big"], false, { entries: 10 });
  assert.equal(tree.kind === "walked" && tree.complete, false);
});

test("with an interest, folders that cannot hold a denied path are skipped, and the first denied path ends the walk", async (t) => {
  const { ws } = await fixture(t);
  const interest = { couldHold: (folder: string) => folder !== "big", denies: (path: string) => path.endsWith(".env") };
  const tree = await walkTree(ws, ["."], false, { entries: 1000 }, interest);
  assert.deepEqual(tree.kind === "walked" && [tree.entries, tree.complete], [["src/deep/.env"], true]);
  const budget = { entries: 1000 };
  const skipped = await walkTree(ws, ["big"], false, budget, interest);
  assert.deepEqual(skipped.kind === "walked" && [skipped.entries, skipped.complete], [[], true]);
  assert.equal(budget.entries, 1000, "nothing under big/ was read");
});
