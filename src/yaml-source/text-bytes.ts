/**
 * Input files are text: the one check, for every file rhema reads as input (task files, policy
 * files, the pricing file, `.rhemaignore`), that bytes are UTF-8 and not binary, before they are
 * parsed. A file that is not is never decoded lossily (a Latin-1 `café` must not become
 * `caf\uFFFD` in a prompt): it is a problem located at its first bad byte, `line:column` counted
 * in characters as an editor counts them. A byte-order-marked UTF-16 or UTF-32 file is named as
 * such; a NUL byte (a binary file, or UTF-16 without a mark) is not text either.
 */
/** A 1-based place in the text (yaml-source's SourcePosition, kept here so neither imports the other). */
interface TextPosition {
  line: number;
  column: number;
}

/** Why bytes are not UTF-8 text, and where. `message` starts with "not UTF-8 text". */
export interface EncodingProblem extends TextPosition {
  message: string;
}

export type DecodedText = { ok: true; text: string } | { ok: false; problem: EncodingProblem };

const NOT_TEXT = "not UTF-8 text";
const SAVE_AS_UTF8 = "save the file as UTF-8";

/** Byte-order marks of the encodings that are text but not UTF-8; UTF-32 first (its LE mark starts like UTF-16's). */
const FOREIGN_MARKS: readonly { mark: readonly number[]; name: string }[] = [
  { mark: [0xff, 0xfe, 0x00, 0x00], name: "UTF-32 (little-endian)" },
  { mark: [0x00, 0x00, 0xfe, 0xff], name: "UTF-32 (big-endian)" },
  { mark: [0xff, 0xfe], name: "UTF-16 (little-endian)" },
  { mark: [0xfe, 0xff], name: "UTF-16 (big-endian)" },
];

/**
 * The text of `bytes` (a UTF-8 byte-order mark dropped), or where and why it is not UTF-8 text.
 * Pure; never throws.
 */
export function decodeUtf8Text(bytes: Uint8Array): DecodedText {
  const foreign = FOREIGN_MARKS.find(({ mark }) => mark.every((byte, i) => bytes[i] === byte));
  if (foreign) {
    return { ok: false, problem: { line: 1, column: 1, message: `${NOT_TEXT}: it is ${foreign.name}, by its byte-order mark; ${SAVE_AS_UTF8}` } };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const bad = firstInvalidUtf8Byte(bytes) ?? 0;
    const byte = (bytes[bad] ?? 0).toString(16).padStart(2, "0");
    return { ok: false, problem: { ...positionOf(bytes, bad), message: `${NOT_TEXT} (byte 0x${byte}); ${SAVE_AS_UTF8}` } };
  }
  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    return { ok: false, problem: { ...positionOf(bytes, nul), message: `${NOT_TEXT}: a NUL byte (a binary file, or UTF-16 without a byte-order mark?)` } };
  }
  return { ok: true, text };
}

/** Where byte `offset` is, counting lines by `\n` and columns in characters of the (valid) text before it. */
function positionOf(bytes: Uint8Array, offset: number): TextPosition {
  const before = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, offset));
  const lineStart = before.lastIndexOf("\n") + 1;
  let line = 1;
  for (let i = 0; i < lineStart; i++) if (before.charCodeAt(i) === 10) line++;
  return { line, column: [...before.slice(lineStart)].length + 1 };
}

/**
 * The offset of the first byte that makes `bytes` invalid UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or null when all of it is valid. A sequence cut short is
 * reported at its lead byte.
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array): number | null {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const [length, min, max] = sequenceShape(lead);
    if (length === 0 || i + length > bytes.length) return i;
    const second = bytes[i + 1]!;
    if (second < min || second > max) return i;
    for (let k = 2; k < length; k++) {
      const next = bytes[i + k]!;
      if (next < 0x80 || next > 0xbf) return i;
    }
    i += length;
  }
  return null;
}

/** A lead byte's sequence length and the range its second byte must be in; length 0: not a lead byte. */
function sequenceShape(lead: number): [number, number, number] {
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf];
  if (lead === 0xe0) return [3, 0xa0, 0xbf];
  if (lead === 0xed) return [3, 0x80, 0x9f];
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf];
  if (lead === 0xf0) return [4, 0x90, 0xbf];
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf];
  if (lead === 0xf4) return [4, 0x80, 0x8f];
  return [0, 0, 0];
}
