/**
 * A fixture's stamp: what a shared setup saw of `workspace.from`, cheaply — each entry's path,
 * kind, size, modification time and mode (a link's text too), never the files' bytes. Touching
 * or resizing a file changes it; a file rewritten with the same size within the same mtime tick
 * does not (the price of not reading 200 MB per run). Entries are walked in sorted order, links
 * not followed, so the same tree gives the same stamp.
 */
import { createHash } from "node:crypto";
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import { join } from "node:path";

/** The sha256 (hex) of the fixture's entries as (path, kind, size, mtime, mode) lines. */
export async function fixtureStamp(from: string): Promise<string> {
  const hash = createHash("sha256");
  const root = await realpath(from);
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const abs = join(dir, name);
      const path = rel === "" ? name : `${rel}/${name}`;
      const stats = await lstat(abs, { bigint: true });
      const kind = stats.isDirectory() ? "d" : stats.isSymbolicLink() ? "l" : stats.isFile() ? "f" : "o";
      const link = kind === "l" ? await readlink(abs) : "";
      hash.update(JSON.stringify([path, kind, stats.size.toString(), stats.mtimeNs.toString(), Number(stats.mode & 0o7777n), link]) + "\n");
      if (kind === "d") await walk(abs, path);
    }
  };
  const rootStats = await lstat(root, { bigint: true });
  hash.update(JSON.stringify([".", Number(rootStats.mode & 0o7777n)]) + "\n");
  await walk(root, "");
  return hash.digest("hex");
}
