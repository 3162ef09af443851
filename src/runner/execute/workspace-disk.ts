/**
 * A task's disk figure (issue 24): the blocks its workspace holds, counted as `du` counts them —
 * every entry's allocated blocks (st_blocks × 512; holes take none), folders and links included,
 * a file with several hard links inside the workspace counted once. On the copy mechanism that is
 * what the task's copy, its setup and the agent wrote.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoCode } from "../../core/errors.js";

/** Folders read at once. */
const FOLDERS_AT_ONCE = 16;

/** Allocated bytes under `root` (itself included), du-style; null when `root` is gone. */
export async function allocatedBytes(root: string): Promise<number | null> {
  const rootStats = await lstat(root).catch((err: unknown) => {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  });
  if (rootStats === null) return null;
  const seen = new Set<string>();
  let bytes = rootStats.blocks * 512;
  if (!rootStats.isDirectory()) return bytes;
  const pending = [root];
  const countFolder = async (folder: string): Promise<void> => {
    const names = await readdir(folder).catch((err: unknown) => {
      // A folder the agent removed, or made unreadable, while it was counted: what was counted stands.
      if (["ENOENT", "EACCES", "ENOTDIR"].includes(errnoCode(err) ?? "")) return [] as string[];
      throw err;
    });
    for (const name of names) {
      const path = join(folder, name);
      const stats = await lstat(path).catch(() => null);
      if (stats === null) continue;
      if (stats.nlink > 1 && !stats.isDirectory()) {
        const inode = `${stats.dev}:${stats.ino}`;
        if (seen.has(inode)) continue;
        seen.add(inode);
      }
      bytes += stats.blocks * 512;
      if (stats.isDirectory()) pending.push(path);
    }
  };
  let active = 0;
  await new Promise<void>((resolveAll, rejectAll) => {
    const pump = (): void => {
      while (active < FOLDERS_AT_ONCE && pending.length > 0) {
        active++;
        countFolder(pending.pop()!).then(() => {
          active--;
          if (active === 0 && pending.length === 0) resolveAll();
          else pump();
        }, rejectAll);
      }
    };
    pump();
  });
  return bytes;
}
