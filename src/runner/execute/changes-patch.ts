/**
 * A trial's changes.patch as text, from what git prints (workspace-changes.ts runs git): the
 * file list of `--numstat -z` and the patch of `-p`, cut to the cap
 * at a file boundary. Pure and streaming: the patch's bytes go through `PatchCap` as they come,
 * and a file section past the cap is dropped as it streams, so a 78 MB lockfile someone opted in
 * costs no more memory than the cap.
 *
 * Both come from one git process (`diff-tree -z --numstat -p`, split by `NumstatThenPatch`) and
 * list the files in one order (one `diff --git` section per numstat entry), which is how the
 * marker names the files a cut left out.
 */

/** One file of the change, from `--numstat -z`: lines added and removed (null for a binary file), its path (and where it was renamed from). */
export interface ChangedFile {
  path: string;
  /** A rename's or copy's source; absent otherwise. */
  from?: string;
  added: number | null;
  removed: number | null;
}

/** The figures result.json and the reports show. */
export interface PatchStats {
  files: number;
  insertions: number;
  deletions: number;
  /** Files named but not inlined (git saw them as binary). */
  binary: number;
}

/** Names listed on the marker line; the rest are counted. */
const MARKER_NAMES = 20;
const HEADER = Buffer.from("diff --git ");

/** `git diff-tree -r -z --numstat` output as its files. */
export function parseNumstat(out: Buffer): ChangedFile[] {
  const fields = out.toString("utf8").split("\0");
  const files: ChangedFile[] = [];
  for (let i = 0; i < fields.length; i++) {
    const head = fields[i]!;
    if (head === "") continue;
    // The path is all after the second tab: a file name may hold tabs of its own.
    const [added, removed] = head.split("\t", 2);
    const inlinePath = head.split("\t").slice(2).join("\t");
    const count = (v: string | undefined) => (v === undefined || v === "-" ? null : Number(v));
    if (inlinePath !== "") {
      files.push({ path: inlinePath, added: count(added), removed: count(removed) });
      continue;
    }
    // A rename: `added\tremoved\t` then the source and the destination as fields of their own.
    const from = fields[++i] ?? "";
    const path = fields[++i] ?? "";
    files.push({ path, from, added: count(added), removed: count(removed) });
  }
  return files;
}

/**
 * `git diff-tree -z --numstat -p` split as it streams: the numstat records come first, ended by
 * an empty one, then the patch, handed to `onPatch` chunk by chunk (a capped patch is never held
 * whole). The records are kept (one short record a file) and read by `files()` at the end. No
 * change at all prints nothing: no records, no patch.
 */
export class NumstatThenPatch {
  private head: Buffer = Buffer.alloc(0);
  /** Where the next record starts in `head`: the ones before are whole. */
  private scanned = 0;
  private inPatch = false;

  constructor(private readonly onPatch: (chunk: Buffer) => void) {}

  push(chunk: Buffer): void {
    if (this.inPatch) {
      this.onPatch(chunk);
      return;
    }
    this.head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
    for (;;) {
      const end = this.head.indexOf(0, this.scanned);
      if (end === -1) return;
      if (end === this.scanned) {
        // The empty record: the patch starts after it.
        const patch = this.head.subarray(end + 1);
        this.head = this.head.subarray(0, end);
        this.inPatch = true;
        if (patch.length > 0) this.onPatch(patch);
        return;
      }
      // Every field of a record is non-empty (a rename's source and destination too): only the end is empty.
      this.scanned = end + 1;
    }
  }

  /** The files the records name (call once git has ended). */
  files(): ChangedFile[] {
    return parseNumstat(this.head);
  }
}

export function patchStats(files: readonly ChangedFile[]): PatchStats {
  return {
    files: files.length,
    insertions: files.reduce((sum, f) => sum + (f.added ?? 0), 0),
    deletions: files.reduce((sum, f) => sum + (f.removed ?? 0), 0),
    binary: files.filter((f) => f.added === null).length,
  };
}

/** What `PatchCap` kept: the patch's bytes and how many file sections made it in. */
export interface CappedPatch {
  bytes: Buffer;
  /** File sections kept whole, from the first. */
  keptFiles: number;
  truncated: boolean;
}

/**
 * Streams a patch through, keeping whole file sections while they fit in `maxBytes` (after
 * `redact`); from the first section that does not fit, nothing more is kept.
 */
export class PatchCap {
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private keptFiles = 0;
  private full = false;
  /** The section being read: its lines so far, or null once it grew past what could still fit. */
  private section: Buffer[] | null = null;
  private sectionBytes = 0;
  private inSection = false;
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes: number, private readonly redact: (text: string) => string) {}

  push(chunk: Buffer): void {
    let data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10)) {
      this.line(data.subarray(0, nl + 1));
      data = data.subarray(nl + 1);
    }
    this.carry = Buffer.from(data);
  }

  end(): CappedPatch {
    if (this.carry.length > 0) this.line(this.carry);
    this.carry = Buffer.alloc(0);
    this.closeSection();
    return { bytes: Buffer.concat(this.kept), keptFiles: this.keptFiles, truncated: this.full };
  }

  private line(line: Buffer): void {
    if (line.subarray(0, HEADER.length).equals(HEADER)) {
      this.closeSection();
      this.inSection = true;
      this.section = this.full ? null : [];
      this.sectionBytes = 0;
    }
    if (!this.inSection || this.section === null) return;
    this.sectionBytes += line.length;
    // Redaction barely changes a size: a section already past the room left will not fit.
    if (this.keptBytes + this.sectionBytes > this.maxBytes * 2) this.section = null;
    else this.section.push(Buffer.from(line));
  }

  private closeSection(): void {
    if (!this.inSection) return;
    this.inSection = false;
    const lines = this.section;
    this.section = null;
    if (this.full) return;
    const redacted = lines === null ? null : redactBytes(Buffer.concat(lines), this.redact);
    if (redacted === null || this.keptBytes + redacted.length > this.maxBytes) {
      this.full = true;
      return;
    }
    this.kept.push(redacted);
    this.keptBytes += redacted.length;
    this.keptFiles++;
  }
}

/**
 * The line that ends a cut patch, naming what was left out. It starts with `#`, outside any
 * hunk, so `git apply` reads the kept files and ignores it.
 */
export function truncationMarker(maxBytes: number, leftOut: readonly ChangedFile[]): string {
  const names = leftOut.slice(0, MARKER_NAMES).map((f) => (f.from === undefined ? f.path : `${f.from} => ${f.path}`));
  const more = leftOut.length - names.length;
  const list = names.join(", ") + (more > 0 ? `, and ${more} more` : "");
  const files = leftOut.length === 1 ? "1 file" : `${leftOut.length} files`;
  return `# rhema: changes.patch cut at ${maxBytes} bytes (workspace.changes.maxBytes); ${files} left out: ${list}\n`;
}

/** Redacts a section as text: UTF-8 when it is UTF-8, else byte for byte (latin1), so other bytes pass unchanged. */
function redactBytes(section: Buffer, redact: (text: string) => string): Buffer {
  const utf8 = section.toString("utf8");
  if (Buffer.byteLength(utf8) === section.length && Buffer.from(utf8, "utf8").equals(section)) return Buffer.from(redact(utf8), "utf8");
  return Buffer.from(redact(section.toString("latin1")), "latin1");
}
