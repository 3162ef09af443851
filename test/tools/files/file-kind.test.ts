import assert from "node:assert/strict";
import { test } from "node:test";
import { looksBinary, sniffFileKind } from "../../../src/tools/files/file-kind.js";

test("recognises the images a model can see by their magic bytes", () => {
  assert.deepEqual(sniffFileKind(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])), { kind: "image", mediaType: "image/png" });
  assert.deepEqual(sniffFileKind(Buffer.from([0xff, 0xd8, 0xff, 0xdb])), { kind: "image", mediaType: "image/jpeg" });
  assert.deepEqual(sniffFileKind(Buffer.from("GIF87a...")), { kind: "image", mediaType: "image/gif" });
  assert.deepEqual(sniffFileKind(Buffer.from("RIFF\0\0\0\0WEBPVP8L")), { kind: "image", mediaType: "image/webp" });
});

test("describes common binaries and calls text text", () => {
  assert.deepEqual(sniffFileKind(Buffer.from("%PDF-1.7\n\0\0")), { kind: "binary", description: "PDF document" });
  assert.deepEqual(sniffFileKind(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0])), { kind: "binary", description: "zip archive (or jar, docx, xlsx)" });
  assert.deepEqual(sniffFileKind(Buffer.from("BMW is a car\n")), { kind: "text" });
  assert.deepEqual(sniffFileKind(Buffer.from("tabs\tand\r\nnewlines\f\x1b[0m")), { kind: "text" });
});

test("a NUL byte or many control characters mean binary", () => {
  assert.equal(looksBinary(Buffer.from("abc\0def")), true);
  assert.equal(looksBinary(Buffer.from([1, 2, 3, 4, 97, 98, 99, 100, 101, 102])), true);
  assert.equal(looksBinary(Buffer.from("plain text, ünïcödé")), false);
});
