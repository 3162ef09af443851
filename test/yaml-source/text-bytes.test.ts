import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeUtf8Text, firstInvalidUtf8Byte } from "../../src/yaml-source/text-bytes.js";
import { seedFrom, seededRandom } from "../support/seeded-random.js";

const fatal = new TextDecoder("utf-8", { fatal: true });

function validByDecoder(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The longest prefix TextDecoder accepts ends where the scanner says the first bad byte is. */
function firstBadByDecoder(bytes: Uint8Array): number | null {
  if (validByDecoder(bytes)) return null;
  let good = 0;
  for (let end = 1; end <= bytes.length; end++) {
    // A prefix that ends inside a valid sequence is "invalid" only because it is cut: step over it.
    if (validByDecoder(bytes.subarray(0, end))) good = end;
  }
  return good;
}

test("every class of invalid UTF-8 is found at its first bad byte", () => {
  const cases: [string, number[], number | null][] = [
    ["ASCII", [0x61, 0x62], null],
    ["2-, 3-, 4-byte sequences", [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], null],
    ["a lone continuation byte", [0x61, 0x80], 1],
    ["Latin-1 é", [0x63, 0xe9, 0x0a], 1],
    ["an overlong 2-byte form", [0xc0, 0xaf], 0],
    ["an overlong 3-byte form", [0xe0, 0x80, 0xaf], 0],
    ["a surrogate", [0xed, 0xa0, 0x80], 0],
    ["above U+10FFFF", [0xf4, 0x90, 0x80, 0x80], 0],
    ["0xff", [0x61, 0x62, 0xff], 2],
    ["a sequence cut by the end", [0x61, 0xe2, 0x82], 1],
    ["a sequence cut by ASCII", [0xe2, 0x41, 0x41], 0],
  ];
  for (const [name, bytes, expected] of cases) {
    assert.equal(firstInvalidUtf8Byte(Uint8Array.from(bytes)), expected, name);
    assert.equal(validByDecoder(Uint8Array.from(bytes)), expected === null, `${name}: TextDecoder agrees`);
  }
});

test("the scanner agrees with TextDecoder (fatal) on random bytes", () => {
  const seed = seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED");
  const random = seededRandom(seed);
  // Bytes drawn mostly from the interesting ranges: ASCII, continuation bytes, lead bytes.
  const pool = [0x41, 0x0a, 0x80, 0x9f, 0xa0, 0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xc0, 0xff];
  for (let round = 0; round < 2000; round++) {
    const bytes = Uint8Array.from({ length: random.int(1, 8) }, () => (random.next() < 0.5 ? pool[random.int(0, pool.length - 1)]! : random.int(0, 255)));
    assert.equal(firstInvalidUtf8Byte(bytes), firstBadByDecoder(bytes), `seed ${seed}: ${Buffer.from(bytes).toString("hex")}`);
  }
});

test("a located problem counts lines by \\n and columns in characters; marks name UTF-16 and UTF-32", () => {
  assert.deepEqual(decodeUtf8Text(Buffer.from("a: 1\r\nb: \u00e9\u00e9 \xff", "latin1")), {
    ok: false, problem: { line: 2, column: 4, message: "not UTF-8 text (byte 0xe9); save the file as UTF-8" },
  });
  assert.deepEqual(decodeUtf8Text(Buffer.concat([Buffer.from("a: \u{1F600}x "), Buffer.from([0xff])])), {
    ok: false, problem: { line: 1, column: 7, message: "not UTF-8 text (byte 0xff); save the file as UTF-8" },
  });
  assert.equal(decodeUtf8Text(Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0])).ok, false);
  assert.match(JSON.stringify(decodeUtf8Text(Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]))), /UTF-32 \(little-endian\)/);
  assert.deepEqual(decodeUtf8Text(Buffer.from("\ufeffa: café\n")), { ok: true, text: "a: café\n" });
});
