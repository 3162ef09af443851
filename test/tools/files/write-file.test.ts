import assert from "node:assert/strict";
import { chmod, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { writeFileTool } from "../../../src/tools/files/write-file.js";
import { tempDir } from "../../support/temp-dir.js";
import { callTool, toolContext, toolErrorOf } from "../tool-harness.js";

const tool = writeFileTool();

test("creates a file and its parent folders, saying the bytes written", async (t) => {
  const ws = await tempDir(t);
  const result = await callTool(tool, { path: "src/deep/er/é.txt", content: "héllo\n" }, toolContext(ws));
  assert.deepEqual(result, { content: "Wrote 7 bytes to src/deep/er/é.txt (new file)." });
  assert.equal(await readFile(join(ws, "src/deep/er/é.txt"), "utf8"), "héllo\n");
});

test("a new file gets mode 0644", async (t) => {
  const ws = await tempDir(t);
  const old = process.umask(0o077);
  t.after(() => process.umask(old));
  await callTool(tool, { path: "new.txt", content: "x" }, toolContext(ws));
  assert.equal((await stat(join(ws, "new.txt"))).mode & 0o777, 0o644);
});

test("replacing a file keeps its mode and leaves no temp file behind", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "run.sh"), "old");
  await chmod(join(ws, "run.sh"), 0o755);
  const result = await callTool(tool, { path: "run.sh", content: "#!/bin/sh\necho new\n" }, toolContext(ws));
  assert.deepEqual(result, { content: "Wrote 19 bytes to run.sh (replaced 3 bytes)." });
  assert.equal((await stat(join(ws, "run.sh"))).mode & 0o777, 0o755);
  assert.deepEqual(await readdir(ws), ["run.sh"]);
});

test("refuses to write over a folder or through a file used as a folder", async (t) => {
  const ws = await tempDir(t);
  await mkdir(join(ws, "dir"));
  await writeFile(join(ws, "file"), "x");
  assert.equal(await toolErrorOf(callTool(tool, { path: "dir", content: "" }, toolContext(ws))), "dir is a directory; give a file path");
  assert.match(await toolErrorOf(callTool(tool, { path: "file/inner.txt", content: "" }, toolContext(ws))), /a parent of it is a file/);
  assert.equal(await toolErrorOf(callTool(tool, { path: ".", content: "" }, toolContext(ws))), "`path` names the workspace root, not a file");
});

test("a missing or non-string content is an error naming the field", async (t) => {
  const ws = await tempDir(t);
  assert.equal(await toolErrorOf(callTool(tool, { path: "a" }, toolContext(ws))), "Invalid input for `write_file`: `content` is required");
  assert.equal(await toolErrorOf(callTool(tool, { path: "a", content: 3 }, toolContext(ws))), "Invalid input for `write_file`: `content` must be a string (got 3)");
});

test("plan gives the resolved workspace-relative path", async (t) => {
  const ws = await tempDir(t);
  assert.deepEqual(await tool.plan!({ path: "a/../b/c.txt", content: "" }, toolContext(ws)), { paths: ["b/c.txt"] });
});
