import assert from "node:assert/strict";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { LIST_MAX_ENTRIES, listDirTool } from "../../../src/tools/files/list-dir.js";
import { tempDir } from "../../support/temp-dir.js";
import { callTool, makeTree, planTool, textOf, toolContext, toolErrorOf } from "../tool-harness.js";

const tool = listDirTool();

test("lists entries with kind and size, sorted by name, .git left out", async (t) => {
  const base = await tempDir(t);
  const ws = join(base, "ws");
  await makeTree(ws, { ".git/HEAD": "ref", "b.txt": "12345", "A.md": "x", "src/index.ts": "", ".env.example": "K=" });
  await writeFile(join(base, "outside.txt"), "x");
  await symlink("src", join(ws, "code"));
  await symlink("b.txt", join(ws, "link.txt"));
  await symlink(join(base, "outside.txt"), join(ws, "out"));
  await symlink("missing", join(ws, "broken"));
  const text = textOf(await callTool(tool, {}, toolContext(ws)));
  assert.equal(text, [
    "file    2  .env.example",
    "file    1  A.md",
    "file    5  b.txt",
    "symlink -  broken -> missing (broken)",
    "symlink -  code -> src (dir)",
    "symlink -  link.txt -> b.txt (file, 5 bytes)",
    `symlink -  out -> ${join(base, "outside.txt")} (outside the workspace)`,
    "dir     -  src/",
  ].join("\n"));
});

test("lists a subfolder and says when a folder is empty", async (t) => {
  const ws = await tempDir(t);
  await makeTree(ws, { "src/a.ts": "abc" });
  await mkdir(join(ws, "empty"));
  assert.equal(textOf(await callTool(tool, { path: "src" }, toolContext(ws))), "file    3  a.ts");
  assert.equal(textOf(await callTool(tool, { path: "empty" }, toolContext(ws))), "empty is an empty folder.");
});

test("caps the listing with a note", async (t) => {
  const ws = await tempDir(t);
  for (let i = 0; i < LIST_MAX_ENTRIES + 5; i++) await writeFile(join(ws, `f${String(i).padStart(4, "0")}`), "");
  const rows = textOf(await callTool(tool, { path: "." }, toolContext(ws))).split("\n");
  assert.equal(rows.length, LIST_MAX_ENTRIES + 1);
  assert.equal(rows.at(-1), "… 5 more entries not shown; use glob with a pattern to narrow the listing");
});

test("a file or a missing folder is an error", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "a.txt"), "");
  assert.equal(await toolErrorOf(callTool(tool, { path: "a.txt" }, toolContext(ws))), "a.txt is a file, not a folder; use read_file");
  assert.equal(await toolErrorOf(callTool(tool, { path: "nope" }, toolContext(ws))), "No such folder: nope");
});

test("plan gives '.' for the root, also when the call sends no input", async (t) => {
  const ws = await tempDir(t);
  assert.deepEqual(await planTool(tool, {}, toolContext(ws)), { paths: ["."] });
  assert.deepEqual(await planTool(tool, undefined, toolContext(ws)), { paths: ["."] });
  assert.deepEqual(await planTool(tool, { path: null }, toolContext(ws)), { paths: ["."] });
});
