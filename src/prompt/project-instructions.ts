/**
 * Project instructions (AGENTS.md) from the workspace root, read the way the tools read: only a
 * regular file whose real path (links resolved) lies inside the workspace. A link out of it —
 * `AGENTS.md -> /proc/self/environ` put rhema's whole environment into the system prompt and
 * the session — a FIFO, a device (`-> /dev/zero` read without end and aborted rhema) or a folder
 * is passed over as if there were none. The read is bounded before it starts: the file is
 * opened without following a link and without blocking (O_NOFOLLOW | O_NONBLOCK), checked to
 * be a regular file on the open descriptor, and at most the cap (plus a character's tail) is
 * read — a few microseconds however large the file, so the constructor's synchronous read
 * never stalls the event loop.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { MAX_PROJECT_INSTRUCTIONS_BYTES } from "./system-prompt.js";

/** The files taken as project instructions, in order of preference; the first found is used. */
export const PROJECT_INSTRUCTION_FILES = ["AGENTS.md"] as const;

export interface ProjectInstructions {
  file: string;
  text: string;
}

/** Why a file could not be read although it is a regular file inside the workspace (permissions, I/O). */
export class ProjectInstructionsReadError extends Error {}

/**
 * The first project-instruction file in `workspace` (canonical) that is a regular file inside
 * it, its text cut at `MAX_PROJECT_INSTRUCTIONS_BYTES` with a note; null when there is none.
 */
export function readProjectInstructions(workspace: string): ProjectInstructions | null {
  for (const file of PROJECT_INSTRUCTION_FILES) {
    const text = readInside(workspace, file);
    if (text !== null) return { file, text };
  }
  return null;
}

function readInside(workspace: string, file: string): string | null {
  let real: string;
  try {
    real = realpathSync(join(workspace, file));
  } catch {
    return null; // missing, dangling, or a loop: none here
  }
  const rel = relative(workspace, real);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP" || code === "ENXIO") return null;
    throw new ProjectInstructionsReadError(`cannot read ${file} in the workspace: ${(err as Error).message}`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return null;
    return readCapped(fd, info.size);
  } finally {
    closeSync(fd);
  }
}

/** At most the cap's bytes (and up to 3 more to finish a character), decoded; longer files get a note with their size. */
function readCapped(fd: number, sizeBytes: number): string {
  const limit = Math.min(sizeBytes, MAX_PROJECT_INSTRUCTIONS_BYTES + 3);
  const buffer = Buffer.alloc(limit);
  let read = 0;
  while (read < limit) {
    const n = readSync(fd, buffer, read, limit - read, read);
    if (n === 0) break;
    read += n;
  }
  const bytes = buffer.subarray(0, read);
  if (sizeBytes <= MAX_PROJECT_INSTRUCTIONS_BYTES && read <= MAX_PROJECT_INSTRUCTIONS_BYTES) return bytes.toString("utf8");
  const cut = bytes.subarray(0, MAX_PROJECT_INSTRUCTIONS_BYTES).toString("utf8").replace(/\uFFFD$/, "");
  return `${cut}\n[… cut at ${MAX_PROJECT_INSTRUCTIONS_BYTES} bytes of ${Math.max(sizeBytes, read)}]`;
}
