/**
 * A generated fixture shaped like a dependency tree, for bench:workspace and the copy's timing:
 * `files` regular files over `totalBytes` in nested package folders, with relative links
 * (`.bin/` style), hard links (a pnpm-style store) and one sparse file. Deterministic for a seed.
 */
import { link, mkdir, open, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { seededRandom } from "../../test/support/seeded-random.js";

export interface FixtureShape {
  files: number;
  totalBytes: number;
  seed: number;
}

export const BENCH_FIXTURE: FixtureShape = { files: 20_000, totalBytes: 200 * 1024 * 1024, seed: 24 };

/** Writes the fixture under `root` (made if missing); returns what it holds. */
export async function makeFixture(root: string, shape: FixtureShape): Promise<{ files: number; links: number; hardLinks: number; bytes: number }> {
  const { next } = seededRandom(shape.seed);
  const perPackage = 20;
  const packages = Math.ceil(shape.files / perPackage);
  // Sizes drawn skewed (many small, a few large), then scaled to the total.
  const weights = Array.from({ length: shape.files }, () => Math.pow(next(), 3) + 0.01);
  const scale = shape.totalBytes / weights.reduce((a, b) => a + b, 0);
  const block = Buffer.alloc(1 << 20);
  for (let i = 0; i < block.length; i++) block[i] = 32 + Math.floor(next() * 90);
  let written = 0;
  let bytes = 0;
  let links = 0;
  let hardLinks = 0;
  for (let p = 0; p < packages && written < shape.files; p++) {
    const dir = join(root, "packages", `pkg-${p % 50}`, "deps", `dep-${p}`, p % 3 === 0 ? "lib/util" : "lib");
    await mkdir(dir, { recursive: true });
    for (let f = 0; f < perPackage && written < shape.files; f++, written++) {
      const size = Math.max(1, Math.round(weights[written]! * scale));
      const offset = Math.floor(next() * (block.length - Math.min(size, block.length)));
      const content = size <= block.length ? block.subarray(offset, offset + size) : Buffer.concat(Array.from({ length: Math.ceil(size / block.length) }, () => block)).subarray(0, size);
      await writeFile(join(dir, `file-${f}.js`), content);
      bytes += size;
    }
    if (p % 10 === 0) {
      await mkdir(join(root, "packages", ".bin"), { recursive: true });
      await symlink(join("..", `pkg-${p % 50}`, "deps", `dep-${p}`, p % 3 === 0 ? "lib/util" : "lib", "file-0.js"), join(root, "packages", ".bin", `dep-${p}`));
      links++;
    }
    if (p % 20 === 5) {
      await link(join(dir, "file-1.js"), join(dir, "file-1.hardlink.js"));
      hardLinks++;
    }
  }
  const sparse = await open(join(root, "sparse.bin"), "w");
  await sparse.write("data", 0);
  await sparse.truncate(64 * 1024 * 1024);
  await sparse.close();
  return { files: written, links, hardLinks, bytes };
}
