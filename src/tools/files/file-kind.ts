/**
 * What a file is, judged from its first bytes: text, one of the image types a model can see,
 * or some other binary (with a short description for the model instead of a dump).
 */
import type { ImageMediaType } from "../../core/messages.js";

export type FileKind =
  | { kind: "text" }
  | { kind: "image"; mediaType: ImageMediaType }
  | { kind: "binary"; description: string };

/** How many leading bytes `sniffFileKind` wants to see. */
export const SNIFF_BYTES = 8192;

interface Magic { offset: number; bytes: readonly number[]; name: string }

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

const IMAGE_MAGIC: ReadonlyArray<{ test: (b: Buffer) => boolean; mediaType: ImageMediaType }> = [
  { test: (b) => startsWith(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), mediaType: "image/png" },
  { test: (b) => startsWith(b, 0, [0xff, 0xd8, 0xff]), mediaType: "image/jpeg" },
  { test: (b) => startsWith(b, 0, ascii("GIF87a")) || startsWith(b, 0, ascii("GIF89a")), mediaType: "image/gif" },
  { test: (b) => startsWith(b, 0, ascii("RIFF")) && startsWith(b, 8, ascii("WEBP")), mediaType: "image/webp" },
];

const BINARY_MAGIC: readonly Magic[] = [
  { offset: 0, bytes: [0x7f, 0x45, 0x4c, 0x46], name: "ELF executable or library" },
  { offset: 0, bytes: ascii("%PDF"), name: "PDF document" },
  { offset: 0, bytes: [0x50, 0x4b, 0x03, 0x04], name: "zip archive (or jar, docx, xlsx)" },
  { offset: 0, bytes: [0x1f, 0x8b], name: "gzip data" },
  { offset: 0, bytes: ascii("BZh"), name: "bzip2 data" },
  { offset: 0, bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], name: "xz data" },
  { offset: 0, bytes: [0x28, 0xb5, 0x2f, 0xfd], name: "zstd data" },
  { offset: 257, bytes: ascii("ustar"), name: "tar archive" },
  { offset: 0, bytes: [0x00, 0x61, 0x73, 0x6d], name: "WebAssembly module" },
  { offset: 0, bytes: ascii("SQLite format 3"), name: "SQLite database" },
  { offset: 0, bytes: [0xca, 0xfe, 0xba, 0xbe], name: "Java class or Mach-O universal binary" },
  { offset: 0, bytes: [0xcf, 0xfa, 0xed, 0xfe], name: "Mach-O binary" },
  { offset: 0, bytes: ascii("MZ"), name: "Windows executable" },
  { offset: 0, bytes: ascii("BM"), name: "BMP image" },
  { offset: 0, bytes: [0x00, 0x00, 0x01, 0x00], name: "ICO image" },
  { offset: 0, bytes: [0xff, 0xfe], name: "UTF-16 (little-endian) text" },
  { offset: 0, bytes: [0xfe, 0xff], name: "UTF-16 (big-endian) text" },
];

/** Judges a file from its first bytes (up to SNIFF_BYTES of them). */
export function sniffFileKind(head: Buffer): FileKind {
  for (const image of IMAGE_MAGIC) if (image.test(head)) return { kind: "image", mediaType: image.mediaType };
  if (!looksBinary(head)) return { kind: "text" };
  const magic = BINARY_MAGIC.find((m) => startsWith(head, m.offset, m.bytes));
  return { kind: "binary", description: magic?.name ?? "binary data" };
}

/** A NUL byte, or more than one byte in ten being a control character, means binary. */
export function looksBinary(head: Buffer): boolean {
  if (head.includes(0)) return true;
  let control = 0;
  for (const byte of head) {
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b && byte !== 0x08) {
      control++;
    }
  }
  return control * 10 > head.length;
}

function startsWith(buf: Buffer, offset: number, bytes: readonly number[]): boolean {
  if (buf.length < offset + bytes.length) return false;
  return bytes.every((b, i) => buf[offset + i] === b);
}
