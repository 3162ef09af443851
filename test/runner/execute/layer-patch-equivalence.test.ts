/**
 * A layered trial's patch is staged from its layer's paths alone (a scratch index holding only
 * them); a copied trial's from its whole workspace. Both must give the same patch for the same
 * changes. Random bases and changes (seeded: RHEMA_TEST_SEED replays a run) are made in a copied
 * workspace and in a layered one — a real kernel overlay and its `layerPaths` as root; as another
 * user, a copy of the base with the changed paths listed — and the two patches compared, byte for
 * byte. Then a trial whose paths are too many for one command line (diffed by their top folders,
 * or over the whole workspace when those are too many as well),
 * a fixture that is a repository holding another, where the agent commits in both, and a layer
 * that holds nothing but the workspace's own `.git`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, lstat, mkdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { changesSettings, type ChangesSettings } from "../../../src/runner/tasks/changes-settings.js";
import { seedFixtureIndex, snapshotWorkspace, writeChangesPatch, type ChangesBase, type ChangesPlace } from "../../../src/runner/execute/workspace-changes.js";
import { LayerMounts, layerPaths } from "../../../src/runner/run-dir/layer-mounts.js";
import { seedFrom, seededRandom, type SeededRandom } from "../../support/seeded-random.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";
import { GIT_TEST_ENV, ageTree, treeEntries } from "../../support/file-tree.js";

const HOST_ENV = { PATH: process.env.PATH };
const AS_ROOT = process.getuid?.() === 0;
// No cap: the whole patch is compared.
const SETTINGS = changesSettings({ include: ["package-lock.json"], maxBytes: 64 * 1024 * 1024 });

/** Names with spaces, unicode and the excluded ones among them. */
const NAMES = ["a", "b c", "é", "文件", "src", "lib", "node_modules", "package-lock.json", "yarn.lock", "dist", "x.txt"];

const pick = <T>(random: SeededRandom, items: readonly T[]): T => items[random.int(0, items.length - 1)]!;
const lines = (random: SeededRandom, tag: string): string => Array.from({ length: random.int(1, 30) }, (_, i) => `${tag} line ${i} ${random.int(0, 9)}`).join("\n") + "\n";

/** A random base: files (text, binary, executable), links, folders up to three deep. */
async function makeBase(random: SeededRandom, dir: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const depth = random.int(0, 2);
    const path = join(dir, ...Array.from({ length: depth }, () => pick(random, NAMES)), `${pick(random, NAMES)}${i % 3 === 0 ? "" : `-${i}`}`);
    const kind = random.int(0, 9);
    try {
      await mkdir(dirname(path), { recursive: true });
      if (kind === 0) await symlink(pick(random, ["a", "../x.txt", "/etc/hostname", "missing"]), path);
      else if (kind === 1) await writeFile(path, Buffer.from([0, random.int(0, 255), 0, 7]));
      else await writeFile(path, lines(random, `base ${i}`), { mode: kind === 2 ? 0o755 : 0o644 });
    } catch {
      // A name that a file already holds as a folder's, or the reverse: left out.
    }
  }
  await ageTree(dir);
}

/** Random changes, as an agent makes them. */
async function change(random: SeededRandom, ws: string, ops: number): Promise<void> {
  for (let i = 0; i < ops; i++) {
    const all = await treeEntries(ws);
    const existing = all.length > 0 ? pick(random, all) : "a";
    const fresh = join(...Array.from({ length: random.int(0, 2) }, () => pick(random, NAMES)), `${pick(random, NAMES)}-new-${i}`);
    const at = (rel: string) => join(ws, rel);
    try {
      switch (random.int(0, 7)) {
        case 0: await writeFile(at(existing), lines(random, `changed ${i}`)); break;
        case 1: await rm(at(existing), { recursive: true, force: true }); break;
        // As `mv` does: an overlay refuses to rename a base folder (EXDEV), which mv then copies.
        case 2: await mkdir(dirname(at(fresh)), { recursive: true }); execFileSync("mv", ["-T", at(existing), at(fresh)], { stdio: "ignore" }); break;
        // A file's mode (a folder made unreadable is no change a patch can show).
        case 3: if ((await lstat(at(existing))).isFile()) await chmod(at(existing), random.int(0, 1) === 0 ? 0o755 : 0o644); break;
        case 4: await rm(at(existing), { recursive: true, force: true }); await mkdir(at(existing)); await writeFile(join(at(existing), "inside"), `${i}\n`); break;
        case 5: await symlink(pick(random, ["a", "x.txt", "/proc/self"]), at(fresh)).catch(async () => { await mkdir(dirname(at(fresh)), { recursive: true }); await symlink("a", at(fresh)); }); break;
        default: await mkdir(dirname(at(fresh)), { recursive: true }); await writeFile(at(fresh), lines(random, `new ${i}`)); break;
      }
    } catch {
      // A change that does not apply here (a folder written as a file, a path under a file): none made.
    }
  }
}

/**
 * What a layer over `base` would list for `view` (layerPaths), found by comparing them: each
 * entry but folders that the base lacks or has otherwise (kind, mode, content, link text), each
 * folder where the base has something else, and each base entry the view lacks.
 */
async function changedPaths(base: string, view: string): Promise<string[]> {
  const describe = async (root: string, rel: string): Promise<string | null> => {
    const stats = await lstat(join(root, rel)).catch(() => null);
    if (stats === null) return null;
    if (stats.isDirectory()) return "folder";
    if (stats.isSymbolicLink()) return `link ${await readlink(join(root, rel))}`;
    return `file ${stats.mode & 0o777} ${(await readFile(join(root, rel))).toString("base64")}`;
  };
  const changed = new Set<string>();
  for (const rel of await treeEntries(view)) {
    const [was, is] = [await describe(base, rel), await describe(view, rel)];
    if (was !== is && !(is === "folder" && was === null)) changed.add(rel);
  }
  for (const rel of await treeEntries(base)) if ((await describe(view, rel)) === null) changed.add(rel);
  return [...changed].sort();
}

/** The patch of a place's changes since `base`, as a trial's end writes it. */
async function patchText(place: ChangesPlace, base: ChangesBase, settings: ChangesSettings, onlyPaths?: readonly string[]): Promise<string> {
  const path = join(place.gitDir, "..", "changes.patch");
  const record = await writeChangesPatch(place, base, settings, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, onlyPaths);
  assert.notEqual(record.path, null, `a patch was made: ${JSON.stringify(record)}`);
  return readFile(path, "utf8");
}

/** A copied trial over `base`: its workspace staged whole, before and after `changes`. */
async function copiedPatch(root: string, base: string, changes: (ws: string) => Promise<void>): Promise<string> {
  const workspace = join(root, "copied/workspace");
  await mkdir(dirname(workspace), { recursive: true });
  execFileSync("cp", ["-a", base, workspace]);
  const place: ChangesPlace = { workspace, gitDir: join(root, "copied/changes.git"), objectsDir: join(root, "copied/objects"), hostEnv: HOST_ENV };
  const snapshot = await snapshotWorkspace(place, SETTINGS);
  await changes(workspace);
  return patchText(place, snapshot, SETTINGS);
}

/**
 * A layered trial over `base`: as root a kernel overlay mounted over it and its layer's paths;
 * as another user a copy of it (the same sizes and mtimes) and the paths found changed in it.
 */
async function layeredPatch(root: string, base: string, changes: (ws: string) => Promise<void>): Promise<string> {
  const run = join(root, "layered");
  const target = join(run, "tasks/t/workspace");
  const layer = { kind: "overlay" as const, lower: base, upper: join(run, "tasks/t/layer/upper"), work: join(run, "tasks/t/layer/work"), target };
  const mounts = new LayerMounts(run);
  if (AS_ROOT) await mounts.mount(layer);
  else {
    await mkdir(dirname(target), { recursive: true });
    execFileSync("cp", ["-a", base, target]);
  }
  try {
    const place: ChangesPlace = { workspace: target, base, gitDir: join(run, "tasks/t/changes.git"), objectsDir: join(run, "changes-objects"), fixtureIndexesDir: join(run, "changes-indexes"), hostEnv: HOST_ENV };
    const seeded = (await seedFixtureIndex(place, SETTINGS, base)) !== null;
    const snapshot = await snapshotWorkspace(place, SETTINGS, { seeded });
    await changes(target);
    return await patchText(place, snapshot, SETTINGS, AS_ROOT ? await layerPaths(layer) : await changedPaths(base, target));
  } finally {
    if (AS_ROOT) await mounts.unmount(target);
  }
}

test(`a layered trial's patch, from its layer's paths alone, is the one its whole workspace gives: random bases and changes (${AS_ROOT ? "kernel overlay" : "a copy as the view"})`, async (t) => {
  const seed = seedFrom(process.env.RHEMA_TEST_SEED, "RHEMA_TEST_SEED");
  t.diagnostic(`seed ${seed} (set RHEMA_TEST_SEED to replay)`);
  for (let round = 0; round < 6; round++) {
    const root = await tempDir(t);
    const base = join(root, "base");
    await mkdir(base);
    await makeBase(seededRandom(seed + round), base);
    // The same draws for both: the same changes.
    const ops = 4 + round * 3;
    const copied = await copiedPatch(root, base, (ws) => change(seededRandom(seed + 1000 + round), ws, ops));
    const layered = await layeredPatch(root, base, (ws) => change(seededRandom(seed + 1000 + round), ws, ops));
    assert.equal(layered, copied, `round ${round} (seed ${seed})`);
  }
});

test("a layered trial with paths too many for one command line is diffed by its top folders: the same patch, and what it left alone in those folders shows no change", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "base");
  await mkdir(base);
  const kept: Record<string, string> = {};
  for (let i = 0; i < 50; i++) kept[`many/untouched-${i}.txt`] = `left alone ${i}\n`;
  await writeFiles(base, { ...kept, "many/changed.txt": "one\n", "many/gone.txt": "gone\n", "other/o.txt": "o\n", "top.txt": "t\n" });
  await ageTree(base);
  // 1,500 new files of long names: over 256 KB of pathspecs.
  const changes = async (ws: string): Promise<void> => {
    for (let i = 0; i < 1500; i++) {
      const rel = `many/${"n".repeat(180)}-${i}.txt`;
      await writeFile(join(ws, rel), `${i}\n`);
    }
    await writeFile(join(ws, "many/changed.txt"), "two\n");
    await rm(join(ws, "many/gone.txt"));
    await writeFile(join(ws, "top.txt"), "T\n");
  };
  const copied = await copiedPatch(root, base, changes);
  const layered = await layeredPatch(root, base, changes);
  assert.equal(layered, copied);
  assert.doesNotMatch(layered, /untouched-|other\/o\.txt/, "nothing left alone is in the patch");
  assert.match(layered, /^deleted file mode 100644$/m);
  assert.equal([...layered.matchAll(/^diff --git /gm)].length, 1503);
});

test("a layered trial whose paths, and even their top folders, are too many for one command line is diffed over the whole workspace: the same patch", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "base");
  await writeFiles(base, { "kept/k.txt": "left alone\n", "changed.txt": "one\n", "gone.txt": "gone\n" });
  await ageTree(base);
  // 1,500 new files at the top, of long names: their top folders are the files themselves, over 256 KB.
  const changes = async (ws: string): Promise<void> => {
    for (let i = 0; i < 1500; i++) await writeFile(join(ws, `${"t".repeat(180)}-${i}.txt`), `${i}\n`);
    await writeFile(join(ws, "changed.txt"), "two\n");
    await rm(join(ws, "gone.txt"));
  };
  const copied = await copiedPatch(root, base, changes);
  const layered = await layeredPatch(root, base, changes);
  assert.equal(layered, copied);
  assert.doesNotMatch(layered, /kept\/k\.txt/);
  assert.equal([...layered.matchAll(/^diff --git /gm)].length, 1502);
});

test("a fixture that is a repository holding a nested one: the agent's commits at the root show as their files alone (the workspace's own .git is never staged), one in the nested repository as its new commit — layered as copied", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "base");
  await writeFiles(base, { "a.txt": "a\n", "vendor/lib/f.c": "int x;\n", "vendor/lib/g.c": "int g;\n" });
  const env = { ...GIT_TEST_ENV, GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z" };
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env, stdio: "pipe" });
  git(join(base, "vendor/lib"), "init", "-q");
  git(join(base, "vendor/lib"), "add", "-A");
  git(join(base, "vendor/lib"), "commit", "-qm", "one");
  git(base, "init", "-q");
  git(base, "add", "a.txt");
  git(base, "commit", "-qm", "one");
  await ageTree(base);
  const changes = async (ws: string): Promise<void> => {
    await writeFile(join(ws, "a.txt"), "b\n");
    git(ws, "commit", "-qam", "two");
    await writeFile(join(ws, "vendor/lib/f.c"), "int y;\n");
    git(join(ws, "vendor/lib"), "commit", "-qam", "two");
    // Changed in the nested repository but not committed: no change of its commit.
    await writeFile(join(ws, "vendor/lib/g.c"), "int h;\n");
  };
  const copied = await copiedPatch(root, base, changes);
  const layered = await layeredPatch(root, base, changes);
  assert.equal(layered, copied);
  const named = [...layered.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
  assert.deepEqual(named, ["a.txt", "vendor/lib"]);
  assert.match(layered, /^\+Subproject commit [0-9a-f]{40}$/m);
});

test("a layer holding nothing but the workspace's own .git (set up by git init and a commit, the agent's commit with no file changed): an empty patch, as the copied workspace's", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "base");
  await writeFiles(base, { "CHANGELOG.md": "# Changes\n" });
  await ageTree(base);
  const env = GIT_TEST_ENV;
  const changes = async (ws: string): Promise<void> => {
    execFileSync("git", ["init", "-q"], { cwd: ws, env });
    execFileSync("git", ["add", "-A"], { cwd: ws, env });
    execFileSync("git", ["commit", "-qm", "init"], { cwd: ws, env });
    execFileSync("git", ["commit", "-q", "--allow-empty", "-m", "the agent's"], { cwd: ws, env });
  };
  const copied = await copiedPatch(root, base, changes);
  const layered = await layeredPatch(root, base, changes);
  assert.equal(copied, "");
  assert.equal(layered, "");
});
