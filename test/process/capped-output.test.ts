import assert from "node:assert/strict";
import { test } from "node:test";
import { HeadTailBuffer } from "../../src/process/capped-output.js";

test("keeps everything while it fits", () => {
  const out = new HeadTailBuffer(4, 4);
  out.push(Buffer.from("abc"));
  out.push(Buffer.from("defgh"));
  assert.equal(out.text(), "abcdefgh");
  assert.equal(out.omittedBytes, 0);
});

test("keeps head and tail with a marker saying what was dropped", () => {
  const out = new HeadTailBuffer(4, 4);
  for (const piece of ["0123", "4567", "89ab", "cdef", "ghij"]) out.push(Buffer.from(piece));
  assert.equal(out.totalBytes, 20);
  assert.equal(out.text(), "0123\n… [12 bytes of output omitted; 20 bytes in all] …\nghij");
});

test("does not split a UTF-8 character at either edge", () => {
  const out = new HeadTailBuffer(4, 4);
  out.push(Buffer.from("abcé"));
  out.push(Buffer.from("x".repeat(10)));
  out.push(Buffer.from("éyzw"));
  const text = out.text();
  assert.ok(text.startsWith("abc\n…"), text);
  assert.ok(text.endsWith("…\nyzw"), text);
  assert.ok(!text.includes("\ufffd"), text);
});

test("memory stays bounded: the tail keeps at most one extra chunk", () => {
  const out = new HeadTailBuffer(10, 10);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  for (let i = 0; i < 200; i++) out.push(chunk);
  assert.equal(out.totalBytes, 200 * 64 * 1024);
  assert.equal(out.text().length, 10 + 10 + `\n… [${200 * 64 * 1024 - 20} bytes of output omitted; ${200 * 64 * 1024} bytes in all] …\n`.length);
});
