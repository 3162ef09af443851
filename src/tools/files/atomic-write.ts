/**
 * Atomic replacement of a workspace file (temp file, fsync, rename): a crash leaves the old
 * content or the new, never half of each. These are the user's files, not private data: an
 * existing file keeps its mode, a new one gets 0644.
 */
import { stat } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";

const NEW_FILE_MODE = 0o644;

/** Writes `data` to the canonical path `abs`, keeping the mode of the file it replaces. */
export async function writeWorkspaceFile(abs: string, data: string | Buffer): Promise<void> {
  const mode = await stat(abs).then((s) => s.mode & 0o7777, () => NEW_FILE_MODE);
  await writeFileAtomic(abs, data, { mode });
}
