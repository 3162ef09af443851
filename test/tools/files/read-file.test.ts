import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { READ_MAX_BYTES, readFileTool } from "../../../src/tools/files/read-file.js";
import { tempDir } from "../../support/temp-dir.js";
import { callTool, textOf, toolContext, toolErrorOf } from "../tool-harness.js";

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
const tool = readFileTool();
const lines = (n: number, from = 1): string => Array.from({ length: n }, (_, i) => `line ${i + from}`).join("\n") + "\n";

test("returns numbered lines", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "a.txt"), "alpha\nbeta\r\ngamma");
  const result = await callTool(tool, { path: "a.txt" }, toolContext(ws));
  assert.deepEqual(result, { content: "1\talpha\n2\tbeta\n3\tgamma" });
});

test("pads line numbers to the widest one shown", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "a.txt"), lines(12));
  const text = textOf(await callTool(tool, { path: "a.txt", offset: 8, limit: 3 }, toolContext(ws)));
  assert.equal(text, " 8\tline 8\n 9\tline 9\n10\tline 10\n… 2 more lines; call read_file with offset=11 to read on");
});

test("stops at 2000 lines by default and says how to read on", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "big.txt"), lines(2600));
  const text = textOf(await callTool(tool, { path: "big.txt" }, toolContext(ws)));
  const rows = text.split("\n");
  assert.equal(rows.length, 2001);
  assert.equal(rows[1999], "2000\tline 2000");
  assert.equal(rows[2000], "… 600 more lines; call read_file with offset=2001 to read on");
});

test("caps the output bytes and names the offset to continue from", async (t) => {
  const ws = await tempDir(t);
  const long = Array.from({ length: 1600 }, (_, i) => `${"x".repeat(100)} ${i + 1}`).join("\n") + "\n";
  await writeFile(join(ws, "wide.txt"), long);
  const text = textOf(await callTool(tool, { path: "wide.txt" }, toolContext(ws)));
  assert.ok(Buffer.byteLength(text) <= READ_MAX_BYTES + 200, `output ${Buffer.byteLength(text)} bytes`);
  const note = text.split("\n").at(-1)!;
  const m = /^… (\d+) more lines \(output capped at 50000 bytes\); call read_file with offset=(\d+) to read on$/.exec(note);
  assert.ok(m, note);
  const next = Number(m[2]);
  assert.equal(Number(m[1]), 1600 - (next - 1));
  const rest = textOf(await callTool(tool, { path: "wide.txt", offset: next, limit: 1 }, toolContext(ws)));
  assert.ok(rest.startsWith(`${next}\t${"x".repeat(100)} ${next}`), rest.slice(0, 200));
});

test("cuts very long lines and says so", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "min.js"), `${"a".repeat(100_000)}\nshort\n`);
  const text = textOf(await callTool(tool, { path: "min.js" }, toolContext(ws)));
  const [first, second, note] = text.split("\n");
  assert.equal(first, `1\t${"a".repeat(2000)} … [line cut]`);
  assert.equal(second, "2\tshort");
  assert.match(note!, /lines longer than 2000 characters were cut/);
});

test("describes a binary file instead of dumping it", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "prog"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0]));
  await writeFile(join(ws, "blob.bin"), Buffer.from([1, 2, 0, 3, 4, 0, 255]));
  assert.equal(
    textOf(await callTool(tool, { path: "prog" }, toolContext(ws))),
    "prog is a binary file (ELF executable or library, 14 bytes); not shown. Use shell (e.g. `file`, `xxd prog | head`) to inspect it.",
  );
  assert.match(textOf(await callTool(tool, { path: "blob.bin" }, toolContext(ws))), /^blob\.bin is a binary file \(binary data, 7 bytes\)/);
});

test("returns png, jpeg, gif and webp files as image blocks", async (t) => {
  const ws = await tempDir(t);
  const images: Array<[string, Buffer, string]> = [
    ["dot.png", PNG_1X1, "image/png"],
    ["a.jpg", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]), "image/jpeg"],
    ["a.gif", Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1"), "image/gif"],
    ["a.webp", Buffer.concat([Buffer.from("RIFF"), Buffer.from([4, 0, 0, 0]), Buffer.from("WEBPVP8 ")]), "image/webp"],
  ];
  for (const [name, bytes, mediaType] of images) {
    await writeFile(join(ws, name), bytes);
    const result = await callTool(tool, { path: name }, toolContext(ws));
    assert.deepEqual(result, {
      content: [
        { type: "text", text: `${name}: ${mediaType}, ${bytes.length} bytes` },
        { type: "image", mediaType, data: bytes.toString("base64") },
      ],
    });
  }
});

test("says a file is empty", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "empty"), "");
  assert.equal(textOf(await callTool(tool, { path: "empty" }, toolContext(ws))), "empty is empty (0 bytes).");
});

test("an offset past the end is an error naming the line count", async (t) => {
  const ws = await tempDir(t);
  await writeFile(join(ws, "a.txt"), lines(3));
  assert.equal(await toolErrorOf(callTool(tool, { path: "a.txt", offset: 9 }, toolContext(ws))), "offset 9 is past the end of a.txt (3 lines)");
});

test("a missing file, a folder and a bad field are errors the model can act on", async (t) => {
  const ws = await tempDir(t);
  await mkdir(join(ws, "dir"));
  assert.equal(await toolErrorOf(callTool(tool, { path: "nope.txt" }, toolContext(ws))), "No such file: nope.txt");
  assert.match(await toolErrorOf(callTool(tool, { path: "dir" }, toolContext(ws))), /dir is a directory; use list_dir/);
  assert.equal(
    await toolErrorOf(callTool(tool, { path: "a", offset: 0 }, toolContext(ws))),
    "Invalid input for `read_file`: `offset` must be an integer from 1 and up (got 0)",
  );
  assert.equal(
    await toolErrorOf(callTool(tool, { path: "a", limit: 5000 }, toolContext(ws))),
    "Invalid input for `read_file`: `limit` must be an integer from 1 to 2000 (got 5000)",
  );
  assert.equal(await toolErrorOf(callTool(tool, { path: 7 }, toolContext(ws))), "Invalid input for `read_file`: `path` must be a string (got 7)");
  assert.equal(await toolErrorOf(callTool(tool, {}, toolContext(ws))), "Invalid input for `read_file`: `path` is required");
  assert.equal(
    await toolErrorOf(callTool(tool, { file: "a" }, toolContext(ws))),
    "Invalid input for `read_file`: `path` is required; unknown field `file` (fields: path, offset, limit)",
  );
});

test("plan resolves the path, workspace-relative", async (t) => {
  const ws = await tempDir(t);
  await mkdir(join(ws, "src"));
  assert.deepEqual(await tool.plan!({ path: "./src/../src/new.ts" }, toolContext(ws)), { paths: ["src/new.ts"] });
});
