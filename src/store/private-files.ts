/**
 * The one place conversation-shaped data is written: files 0600 in folders 0700, atomically
 * (temp + fsync + rename, then the folder fsynced so the rename survives a power cut).
 * Every store (sessions, journals, event logs, results, reports) goes through here, and here
 * too the temp files of writes a kill cut short (named `<file>.<digits>`) are found and removed.
 */
import { randomInt } from "node:crypto";
import { mkdir, open, readdir, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates `dir` (and missing parents) 0700 — the umask can only narrow that. A folder that exists
 * keeps its mode: it may be the user's (`--out /`, a report's `/tmp`, a merge target), and
 * re-moding it once turned a machine's `/` and `/tmp` into 0700. What rhema writes inside is
 * private all the same: its files are 0600 and the folders it makes 0700.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * How much of an atomic write is on disk when it returns. `full`: its contents and its rename (the
 * folder fsynced): it survives a power cut. `contents`: its contents only — after a power cut the
 * file is the old one or the new one whole, never torn; the rename is made durable by the next
 * fsync of its folder (one sync fewer, for a record that may fall back to the one before).
 */
export type Durability = "full" | "contents";

/** Writes `data` to `path` atomically with mode 0600, its folder made private first. */
export async function writePrivateFileAtomic(path: string, data: string | Buffer, durability: Durability = "full"): Promise<void> {
  await ensurePrivateDir(dirname(path));
  await replaceFileAtomic(path, data, { mode: PRIVATE_FILE_MODE, fsync: true });
  if (durability === "full") await fsyncDir(dirname(path));
}

/**
 * Replaces `path` with `data` whole: written to `<path>.<uint32>` (a name `removeAtomicTemps`
 * knows) created with `mode` (the umask can only narrow it), fsync'd unless `fsync` is false,
 * then renamed over `path`; on failure the temp file goes. What write-file-atomic does, without
 * its per-write costs (an exit handler added and removed, a hashed temp name, promisified
 * calls): the runner writes a state file at every boundary, and those were a sixth of a task's
 * start-up CPU.
 */
export async function replaceFileAtomic(path: string, data: string | Buffer, opts: { mode: number; fsync: boolean }): Promise<void> {
  const temp = `${path}.${randomInt(2 ** 32)}`;
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, "wx", opts.mode);
    await handle.writeFile(data);
    if (opts.fsync) await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, path);
  } catch (err) {
    await handle?.close().catch(() => {});
    await rm(temp, { force: true }).catch(() => {});
    throw err;
  }
}

/** Writes a value as pretty JSON (two spaces, trailing newline), atomically, 0600. */
export async function writePrivateJson(path: string, value: unknown, durability: Durability = "full"): Promise<void> {
  await writePrivateFileAtomic(path, JSON.stringify(value, null, 2) + "\n", durability);
}

/** Opens `path` for appending, creating it 0600 in a private folder. */
export async function openPrivateAppend(path: string): Promise<FileHandle> {
  await ensurePrivateDir(dirname(path));
  const handle = await open(path, "a", PRIVATE_FILE_MODE);
  await handle.chmod(PRIVATE_FILE_MODE);
  return handle;
}

export async function fsyncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

/** A temp file of an atomic write of `name`: `<name>.<uint32>` (`replaceFileAtomic`, write-file-atomic), or a lock's `<name>.<pid>`. */
export function isAtomicTempOf(entry: string, name: string): boolean {
  return entry.length > name.length + 1 && entry.startsWith(`${name}.`) && /^\d+$/.test(entry.slice(name.length + 1));
}

/**
 * Removes from `dir` the temp files that interrupted atomic writes of the files `names` left
 * behind (a SIGKILL skips the writer's own cleanup). Only call it while no write to
 * those files is under way (the caller holds the run's lock). Returns the names removed; a
 * missing folder has none.
 */
export async function removeAtomicTemps(dir: string, names: readonly string[]): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const stale = entries.filter((entry) => names.some((name) => isAtomicTempOf(entry, name))).sort();
  for (const entry of stale) await rm(join(dir, entry), { force: true });
  return stale;
}

/**
 * Writes all of `data`: a full disk can make a write return short without an error, and the
 * counter must never count a record whose line did not reach the journal whole.
 */
export async function writeFully(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    if (bytesWritten === 0) throw Object.assign(new Error("no space left on device, write"), { code: "ENOSPC" });
    offset += bytesWritten;
  }
}
