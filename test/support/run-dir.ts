/** Reading a run directory back, for end-to-end tests. */
import { readFile, readdir, stat } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";

/** Every file under `dir` (workspaces included) with a hash of its bytes: "nothing changed" checks. */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.set(relative(dir, path), createHash("sha256").update(await readFile(path)).digest("hex") + ` ${(await stat(path)).mode & 0o777}`);
    }
  };
  await walk(dir);
  return out;
}

export async function readJson<T = Record<string, unknown>>(path: string): Promise<T> {
  return JSON.parse(await readFile(path, "utf8")) as T;
}
