/** Real temp folders (and tmpfs mounts) for tests, removed when the test ends. */
import { execFileSync, spawnSync } from "node:child_process";
import { mountPointsUnder } from "../../src/runner/run-dir/layer-mounts.js";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";

export async function tempDir(t: TestContext | { after(fn: () => unknown): void }, prefix = "rhema-test-"): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  // A mount a failed test left inside (a layered workspace) goes first: rm would delete through it.
  t.after(async () => {
    for (const point of (await mountPointsUnder(dir)).sort().reverse()) spawnSync("umount", ["-l", point]);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** A tmpfs mounted for the test and unmounted after it; null where mounting is not allowed. */
export async function mountTmpfs(t: { after(fn: () => unknown): void }, options: string): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), "rhema-mnt-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  t.after(async () => {
    execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}
