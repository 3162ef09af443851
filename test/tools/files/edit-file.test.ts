import assert from "node:assert/strict";
import { chmod, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { editFileTool } from "../../../src/tools/files/edit-file.js";
import { tempDir } from "../../support/temp-dir.js";
import { callTool, toolContext, toolErrorOf } from "../tool-harness.js";

const tool = editFileTool();
const SOURCE = ["function add(a, b) {", "  return a - b;", "}", "", "function sub(a, b) {", "  return a - b;", "}", ""].join("\n");

async function workspaceWith(t: Parameters<typeof tempDir>[0], content = SOURCE): Promise<string> {
  const ws = await tempDir(t);
  await writeFile(join(ws, "math.js"), content);
  return ws;
}

test("replaces one exact occurrence and names its line", async (t) => {
  const ws = await workspaceWith(t);
  const input = { path: "math.js", old: "function add(a, b) {\n  return a - b;", new: "function add(a, b) {\n  return a + b;" };
  assert.deepEqual(await callTool(tool, input, toolContext(ws)), { content: "Edited math.js: replaced 1 occurrence (line 1)." });
  assert.equal(await readFile(join(ws, "math.js"), "utf8"), SOURCE.replace("a - b", "a + b"));
});

test("several matches without replaceAll is an error naming their line numbers", async (t) => {
  const ws = await workspaceWith(t);
  const message = await toolErrorOf(callTool(tool, { path: "math.js", old: "return a - b;", new: "return 0;" }, toolContext(ws)));
  assert.equal(message, "`old` matches 2 places in math.js (lines 2, 6); include more surrounding lines to make it unique, or set replaceAll: true");
  assert.equal(await readFile(join(ws, "math.js"), "utf8"), SOURCE);
});

test("replaceAll replaces every occurrence", async (t) => {
  const ws = await workspaceWith(t);
  const result = await callTool(tool, { path: "math.js", old: "a - b", new: "b - a", replaceAll: true }, toolContext(ws));
  assert.deepEqual(result, { content: "Edited math.js: replaced 2 occurrences (lines 2, 6)." });
  assert.equal(await readFile(join(ws, "math.js"), "utf8"), SOURCE.replaceAll("a - b", "b - a"));
});

test("no match is an error showing the closest lines", async (t) => {
  const ws = await workspaceWith(t);
  const message = await toolErrorOf(callTool(tool, { path: "math.js", old: "function sub(x, y) {\n  return x - y;", new: "" }, toolContext(ws)));
  assert.equal(
    message,
    "No exact match for `old` in math.js. The closest text (lines 5-6):\n5\tfunction sub(a, b) {\n6\t  return a - b;\n" +
      "Copy the text exactly as read_file shows it (without the line numbers).",
  );
});

test("a match that differs only in indentation says so", async (t) => {
  const ws = await workspaceWith(t);
  const message = await toolErrorOf(callTool(tool, { path: "math.js", old: "function add(a, b) {\nreturn a - b;", new: "x" }, toolContext(ws)));
  assert.match(message, /The closest text \(lines 1-2\):\n1\tfunction add\(a, b\) \{\n2\t  return a - b;\nThey differ from `old` only in whitespace/);
});

test("nothing similar says so", async (t) => {
  const ws = await workspaceWith(t);
  const message = await toolErrorOf(callTool(tool, { path: "math.js", old: "zzzz qqqq", new: "x" }, toolContext(ws)));
  assert.equal(message, "No exact match for `old` in math.js. Nothing in the file looks like it; read the file again with read_file.");
});

test("the replacement is literal: $& and $1 are not patterns", async (t) => {
  const ws = await workspaceWith(t, "price = X\n");
  await callTool(tool, { path: "math.js", old: "X", new: "$& $1 $$" }, toolContext(ws));
  assert.equal(await readFile(join(ws, "math.js"), "utf8"), "price = $& $1 $$\n");
});

test("an LF `old` matches a CRLF file, and the new text gets CRLF", async (t) => {
  const ws = await workspaceWith(t, "a\r\nb\r\nc\r\n");
  await callTool(tool, { path: "math.js", old: "a\nb", new: "A\nB" }, toolContext(ws));
  assert.equal(await readFile(join(ws, "math.js"), "utf8"), "A\r\nB\r\nc\r\n");
});

test("keeps the file's mode and leaves no temp file", async (t) => {
  const ws = await workspaceWith(t);
  await chmod(join(ws, "math.js"), 0o600);
  await callTool(tool, { path: "math.js", old: "add", new: "plus" }, toolContext(ws));
  assert.equal((await stat(join(ws, "math.js"))).mode & 0o777, 0o600);
  assert.deepEqual(await readdir(ws), ["math.js"]);
});

test("refuses an empty or unchanged `old`, a missing file and a non-UTF-8 file", async (t) => {
  const ws = await workspaceWith(t);
  await writeFile(join(ws, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  assert.match(await toolErrorOf(callTool(tool, { path: "math.js", old: "", new: "x" }, toolContext(ws))), /^`old` is empty/);
  assert.equal(await toolErrorOf(callTool(tool, { path: "math.js", old: "a", new: "a" }, toolContext(ws))), "`old` and `new` are the same; nothing would change");
  assert.equal(await toolErrorOf(callTool(tool, { path: "nope.js", old: "a", new: "b" }, toolContext(ws))), "No such file: nope.js (to create a file, use write_file)");
  assert.match(await toolErrorOf(callTool(tool, { path: "latin1.txt", old: "caf", new: "b" }, toolContext(ws))), /latin1\.txt is not UTF-8 text/);
  assert.equal(
    await toolErrorOf(callTool(tool, { path: "math.js", old: "a", new: "b", replaceAll: "yes" }, toolContext(ws))),
    "Invalid input for `edit_file`: `replaceAll` must be true or false (got \"yes\")",
  );
});
