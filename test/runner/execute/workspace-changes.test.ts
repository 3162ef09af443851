/**
 * changes.patch: the workspace against its snapshot after setup, made with real git in temp
 * folders. Each patch is applied back (`git apply --check`, then `git apply`) onto a copy of the
 * base, and the result compared with the workspace, file by file (content, mode, link text).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, lstat, mkdir, readFile, readdir, readlink, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { changesSettings, type ChangesSettings } from "../../../src/runner/tasks/changes-settings.js";
import { seedFixtureIndex, snapshotWorkspace, writeChangesPatch, type ChangesBase, type ChangesPlace } from "../../../src/runner/execute/workspace-changes.js";
import { copyFixture } from "../../../src/runner/tasks/fixture-copy.js";
import type { ResultChanges } from "../../../src/runner/run-dir/task-result.js";
import { writeFiles } from "../../support/suite-files.js";
import { tempDir } from "../../support/temp-dir.js";
import { GIT_TEST_ENV, ageTree, treeEntries } from "../../support/file-tree.js";
import { LayerMounts, layerPaths } from "../../../src/runner/run-dir/layer-mounts.js";

const HOST_ENV = { PATH: process.env.PATH };

interface Bench {
  root: string;
  workspace: string;
  place: ChangesPlace;
  /** The workspace as it was at the snapshot, copied for applying the patch to. */
  baseCopy: string;
  base: ChangesBase;
}

/** A workspace holding `files` (the state after setup), snapshot, and a copy of it kept aside. */
async function bench(t: { after(fn: () => unknown): void }, files: Record<string, string>, settings: ChangesSettings, name = "workspace"): Promise<Bench> {
  const root = await tempDir(t);
  const workspace = join(root, name);
  await mkdir(workspace, { recursive: true });
  await writeFiles(workspace, files);
  return snapshotBench(root, workspace, settings);
}

async function snapshotBench(root: string, workspace: string, settings: ChangesSettings): Promise<Bench> {
  const place = { workspace, gitDir: join(root, "trial", "changes.git"), objectsDir: join(root, "changes-objects"), hostEnv: HOST_ENV };
  const base = await snapshotWorkspace(place, settings);
  const baseCopy = join(root, "applied");
  execFileSync("cp", ["-a", workspace, baseCopy]);
  return { root, workspace, place, baseCopy, base };
}

async function patchOf(b: Bench, settings: ChangesSettings, redact = (text: string) => text): Promise<{ record: ResultChanges; text: string; path: string }> {
  const path = join(b.root, "trial", "changes.patch");
  const record = await writeChangesPatch(b.place, b.base, settings, { path, relativePath: "trial/changes.patch", redact, write: (bytes) => writeFile(path, bytes) });
  return { record, text: await readFile(path, "utf8").catch(() => ""), path };
}

/** The patch of `change` made in a copy of `base` staged whole (a copied trial's), for comparing a layered trial's with. */
async function copiedPatch(t: { after(fn: () => unknown): void }, base: string, settings: ChangesSettings, change: (ws: string) => Promise<void>) {
  const whole = await bench(t, {}, settings, "copied");
  await rm(whole.workspace, { recursive: true });
  execFileSync("cp", ["-a", base, whole.workspace]);
  const wholeBase = await snapshotWorkspace(whole.place, settings);
  await change(whole.workspace);
  return patchOf({ ...whole, base: wholeBase }, settings);
}

/** `git apply` outside any repository, as `patch` would: `--check` first, then for real. */
function applyPatch(dir: string, patch: string, excludes: readonly string[] = []): void {
  const args = ["apply", ...excludes.map((e) => `--exclude=${e}`), patch];
  const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CEILING_DIRECTORIES: dir };
  execFileSync("git", [args[0]!, "--check", ...args.slice(1)], { cwd: dir, env, stdio: "pipe" });
  execFileSync("git", args, { cwd: dir, env, stdio: "pipe" });
}

/** Every entry under `dir` but `.git` folders: its kind, mode, and content or link text. */
async function tree(dir: string, skip: (rel: string) => boolean = () => false): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const rel of await treeEntries(dir)) {
    if (rel.split("/").includes(".git") || skip(rel)) continue;
    const stats = await lstat(join(dir, rel));
    if (stats.isDirectory()) continue;
    const mode = (stats.mode & 0o111) !== 0 ? "x" : "-";
    out[rel] = stats.isSymbolicLink() ? `link -> ${await readlink(join(dir, rel))}` : `${mode} ${(await readFile(join(dir, rel))).toString("base64")}`;
  }
  return out;
}

const LONG = Array.from({ length: 40 }, (_, i) => `line ${i} of a file long enough to be found renamed`).join("\n") + "\n";
const DEFAULTS = changesSettings(undefined);

test("created, modified, deleted, renamed, mode-changed, link and binary files: the patch applies back onto the base and gives the workspace", async (t) => {
  const b = await bench(t, {
    "a.txt": "one\ntwo\nthree\n",
    "old-name.txt": LONG,
    "gone.txt": "bye\n",
    "run.sh": "echo hi\n",
    "dir with space/é 文件.txt": "unicode\n",
  }, DEFAULTS, "work space é");
  assert.ok("tree" in b.base, JSON.stringify(b.base));
  const ws = b.workspace;
  await writeFile(join(ws, "a.txt"), "one\n2\nthree\nfour\n");
  await mkdir(join(ws, "new", "deep"), { recursive: true });
  await writeFile(join(ws, "new", "deep", "b.txt"), "fresh\n");
  await rm(join(ws, "gone.txt"));
  await rename(join(ws, "old-name.txt"), join(ws, "new-name.txt"));
  await chmod(join(ws, "run.sh"), 0o755);
  await symlink("a.txt", join(ws, "to-a"));
  await writeFile(join(ws, "dir with space", "é 文件.txt"), "unicode, changed\n");
  await writeFile(join(ws, "blob.bin"), Buffer.from([0, 1, 2, 0, 255, 0, 9]));

  const { record, text, path } = await patchOf(b, DEFAULTS);
  assert.deepEqual(record, { path: "trial/changes.patch", files: 8, insertions: 5, deletions: 3, binary: 1, bytes: Buffer.byteLength(text), truncated: false, leftOut: 0 });
  assert.match(text, /^diff --git a\/old-name\.txt b\/new-name\.txt\nsimilarity index 100%\nrename from old-name\.txt\nrename to new-name\.txt$/m);
  assert.match(text, /^diff --git a\/run\.sh b\/run\.sh\nold mode 100644\nnew mode 100755$/m);
  assert.match(text, /^deleted file mode 100644$/m);
  assert.match(text, /^Binary files \/dev\/null and b\/blob\.bin differ$/m);
  // The link is recorded as a link (its text), never its target's content.
  assert.match(text, /^diff --git a\/to-a b\/to-a\nnew file mode 120000\n(?:.*\n){4}\+a\.txt\n\\ No newline at end of file$/m);
  assert.match(text, /dir with space\/é 文件\.txt/);

  applyPatch(b.baseCopy, path, ["blob.bin"]);
  assert.deepEqual(await tree(b.baseCopy), await tree(ws, (rel) => rel === "blob.bin"));
});

test("lockfiles, node_modules and build output are left out; include: brings a lockfile back; an added exclude is left out too", async (t) => {
  const settings = changesSettings({ include: ["package-lock.json"], exclude: ["*.log"] });
  const b = await bench(t, {
    "package-lock.json": '{"v":1}\n',
    "yarn.lock": "a@1\n",
    "node_modules/dep/index.js": "module.exports = 1;\n",
    "src/app.js": "let x = 1;\n",
  }, settings);
  const ws = b.workspace;
  await writeFile(join(ws, "package-lock.json"), '{"v":2}\n');
  await writeFile(join(ws, "yarn.lock"), "a@2\n");
  await writeFile(join(ws, "node_modules", "dep", "index.js"), "module.exports = 2;\n");
  await writeFiles(ws, { "dist/app.js": "built\n", "pkg/target/x.o": "obj\n", "sub/Cargo.lock": "lock\n", "debug.log": "noise\n", "src/app.js": "let x = 2;\n" });

  const { record, text, path } = await patchOf(b, settings);
  const named = [...text.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
  assert.deepEqual(named, ["package-lock.json", "src/app.js"]);
  assert.equal(record.path !== null && record.files, 2);
  applyPatch(b.baseCopy, path);
  const left = (rel: string) => /(^|\/)(yarn\.lock|node_modules|dist|target|Cargo\.lock|debug\.log)(\/|$)/.test(rel);
  assert.deepEqual(await tree(b.baseCopy, left), await tree(ws, left));
});

test("a patch over maxBytes ends at a file boundary with a marker naming the files left out, and what it kept applies", async (t) => {
  const settings = changesSettings({ maxBytes: 1000 });
  const b = await bench(t, { "keep.txt": "k\n" }, settings);
  const body = (i: number) => Array.from({ length: 8 }, (_, n) => `file ${i} line ${n} ${"x".repeat(30)}`).join("\n") + "\n";
  for (let i = 1; i <= 5; i++) await writeFile(join(b.workspace, `f${i}.txt`), body(i));

  const { record, text, path } = await patchOf(b, settings);
  assert.equal(record.path, "trial/changes.patch");
  assert.ok(record.path !== null && record.truncated && record.files === 5 && record.leftOut === 3, JSON.stringify(record));
  const marker = text.split("\n").filter((line) => line.startsWith("# rhema:"));
  assert.deepEqual(marker, ["# rhema: changes.patch cut at 1000 bytes (workspace.changes.maxBytes); 3 files left out: f3.txt, f4.txt, f5.txt"]);
  assert.ok(Buffer.byteLength(text) - Buffer.byteLength(marker[0]!) - 1 <= 1000);
  applyPatch(b.baseCopy, path);
  assert.deepEqual(Object.keys(await tree(b.baseCopy)), ["f1.txt", "f2.txt", "keep.txt"]);
});

test("a fixture that is a git repository: its .git is left alone, and its .gitignore and .gitattributes do not steer the patch", async (t) => {
  const root = await tempDir(t);
  const ws = join(root, "workspace");
  await writeFiles(ws, { "tracked.txt": "v1\n", ".gitignore": "*.log\n", ".gitattributes": "*.txt text eol=crlf filter=evil\n" });
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: ws, env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } }).toString();
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "base");
  const dotGit = async () => JSON.stringify(await readdirWithContent(join(ws, ".git")));
  const gitBefore = await dotGit();
  const b = await snapshotBench(root, ws, DEFAULTS);
  await writeFile(join(ws, "tracked.txt"), "v2\n");
  await writeFile(join(ws, "agent.log"), "written by the agent\n");

  const { text, path } = await patchOf(b, DEFAULTS);
  assert.doesNotMatch(text, /\.git\//);
  assert.match(text, /^diff --git a\/agent\.log b\/agent\.log$/m);
  assert.match(text, /^\+v2$/m, "no CRLF conversion from the workspace's .gitattributes");
  assert.equal(await dotGit(), gitBefore, "the workspace's .git is not written");
  assert.equal(git("status", "--porcelain"), " M tracked.txt\n", "the repository sees the change as it would without rhema");
  // The applying git would read the copy's .gitattributes (CRLF on write): set it aside meanwhile.
  const attributes = await readFile(join(b.baseCopy, ".gitattributes"));
  await rm(join(b.baseCopy, ".gitattributes"));
  applyPatch(b.baseCopy, path);
  await writeFile(join(b.baseCopy, ".gitattributes"), attributes);
  assert.deepEqual(await tree(b.baseCopy), await tree(ws));
});

test("the patch goes through the redactor; without git on PATH there is none, saying why", async (t) => {
  const b = await bench(t, { "a.txt": "x\n" }, DEFAULTS);
  await writeFile(join(b.workspace, "a.txt"), "token=SECRET-VALUE\n");
  const { text } = await patchOf(b, DEFAULTS, (s) => s.replaceAll("SECRET-VALUE", "[redacted:TOKEN]"));
  assert.match(text, /^\+token=\[redacted:TOKEN\]$/m);
  assert.doesNotMatch(text, /SECRET-VALUE/);

  const root = await tempDir(t);
  const place = { workspace: b.workspace, gitDir: join(root, "g"), objectsDir: join(root, "o"), hostEnv: { PATH: join(root, "no-bin") } };
  const base = await snapshotWorkspace(place, DEFAULTS);
  assert.deepEqual(base, { unavailable: "git was not found on PATH: changes.patch needs git" });
  const record = await writeChangesPatch(place, base, DEFAULTS, { path: join(root, "p"), relativePath: "p", redact: (s) => s, write: () => assert.fail("nothing to write") });
  assert.deepEqual(record, { path: null, reason: "git was not found on PATH: changes.patch needs git" });
});

test("nothing changed: an empty patch, zero figures", async (t) => {
  const b = await bench(t, { "a.txt": "x\n" }, DEFAULTS);
  const { record, text } = await patchOf(b, DEFAULTS);
  assert.equal(text, "");
  assert.deepEqual(record, { path: "trial/changes.patch", files: 0, insertions: 0, deletions: 0, binary: 0, bytes: 0, truncated: false, leftOut: 0 });
});

test("a layer holding nothing: an empty patch with zero figures and no git run (none is on PATH here)", async (t) => {
  const b = await bench(t, { "a.txt": "x\n" }, DEFAULTS);
  const path = join(b.root, "trial", "changes.patch");
  const noGit = { ...b.place, hostEnv: { PATH: join(b.root, "no-bin") } };
  const record = await writeChangesPatch(noGit, b.base, DEFAULTS, { path, relativePath: "trial/changes.patch", redact: (text) => text, write: (bytes) => writeFile(path, bytes) }, []);
  assert.deepEqual(record, { path: "trial/changes.patch", files: 0, insertions: 0, deletions: 0, binary: 0, bytes: 0, truncated: false, leftOut: 0 });
  assert.equal(await readFile(path, "utf8"), "");
  // With a path to look at, git is needed: without it, no patch, saying why.
  const withPath = await writeChangesPatch(noGit, b.base, DEFAULTS, { path, relativePath: "trial/changes.patch", redact: (text) => text, write: (bytes) => writeFile(path, bytes) }, ["a.txt"]);
  assert.match((withPath as { reason: string }).reason, /git was not found/);
});

async function readdirWithContent(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const rel of (await readdir(dir, { recursive: true })).sort()) {
    const stats = await lstat(join(dir, rel));
    out[rel] = stats.isFile() ? `${stats.mtimeMs} ${(await readFile(join(dir, rel))).toString("base64")}` : "dir";
  }
  return out;
}

test("a fixture's index is kept from the first copy and seeds the next: each trial's base still holds what its setup changed, same size and all", async (t) => {
  const root = await tempDir(t);
  const fixture = join(root, "fixture");
  await mkdir(join(fixture, "src"), { recursive: true });
  await writeFiles(fixture, { "src/a.txt": "x\n", "src/b.txt": "b\n" });
  const past = new Date("2021-01-01T00:00:00Z");
  for (const file of ["src/a.txt", "src/b.txt"]) await utimes(join(fixture, file), past, past);
  const settings = changesSettings(undefined);
  const trial = async (name: string, setupText: string, agent: (ws: string) => Promise<void>) => {
    const workspace = join(root, name, "workspace");
    await copyFixture(fixture, workspace);
    const place = { workspace, gitDir: join(root, name, "changes.git"), objectsDir: join(root, "changes-objects"), fixtureIndexesDir: join(root, "changes-indexes"), hostEnv: HOST_ENV };
    assert.notEqual(await seedFixtureIndex(place, settings, fixture), null);
    await writeFile(join(workspace, "src/a.txt"), setupText); // setup: the same size as the fixture's
    const base = await snapshotWorkspace(place, settings, { seeded: true });
    await agent(workspace);
    const path = join(root, name, "changes.patch");
    await writeChangesPatch(place, base, settings, { path, relativePath: "changes.patch", redact: (s) => s, write: (bytes) => writeFile(path, bytes) });
    return readFile(path, "utf8");
  };
  const first = await trial("one", "y\n", (ws) => writeFile(join(ws, "c.txt"), "new\n"));
  const kept = (await readdir(join(root, "changes-indexes"))).map((name) => name.replace(/^[0-9a-f]{32}/, "<key>")).sort();
  assert.deepEqual(kept, ["<key>", "<key>.tree"], "the fixture's index is kept, its tree beside it");
  assert.match(first, /^diff --git a\/c\.txt b\/c\.txt\nnew file mode/);
  assert.doesNotMatch(first, /a\.txt/, "setup's change is in the base, not the agent's patch");
  const second = await trial("two", "z\n", (ws) => rm(join(ws, "src/b.txt")));
  assert.match(second, /^diff --git a\/src\/b\.txt b\/src\/b\.txt\ndeleted file mode/);
  assert.doesNotMatch(second, /a\.txt/, "the seeded index did not hide setup's change from the base");
});

test("a kept index's tree is the snapshot of a workspace known unchanged since seeding: no git runs for it, and the patch after the agent is the same as with a full snapshot", async (t) => {
  const root = await tempDir(t);
  const fixture = join(root, "fixture");
  await mkdir(join(fixture, "src"), { recursive: true });
  await writeFiles(fixture, { "src/a.txt": "a\n", "src/b.txt": "b\n", "package-lock.json": "{}\n" });
  const settings = changesSettings(undefined);
  const placeOf = (name: string, workspace: string, path = process.env.PATH) => ({ workspace, gitDir: join(root, name, "changes.git"), objectsDir: join(root, "changes-objects"), fixtureIndexesDir: join(root, "changes-indexes"), hostEnv: { PATH: path } });
  const trial = async (name: string) => {
    const workspace = join(root, name, "workspace");
    await copyFixture(fixture, workspace);
    return { workspace, seed: await seedFixtureIndex(placeOf(name, workspace), settings, fixture) };
  };
  const first = await trial("one");
  const full = await snapshotWorkspace(placeOf("one", first.workspace), settings, { seeded: true });
  assert.deepEqual(first.seed, full, "the first trial's seed carries the tree it staged, the fixture's snapshot");
  const second = await trial("two");
  assert.deepEqual(second.seed, full, "a later trial's seed carries the kept tree");
  // Without git on PATH only a snapshot that runs no git can be taken.
  const noGit = placeOf("two", second.workspace, join(root, "no-git"));
  assert.deepEqual(await snapshotWorkspace(noGit, settings, { seeded: true, unchangedTree: second.seed!.tree! }), full);
  assert.deepEqual(await snapshotWorkspace(noGit, settings, { seeded: true }), { unavailable: "git was not found on PATH: changes.patch needs git" });
  await writeFile(join(second.workspace, "src/a.txt"), "changed by the agent\n");
  const path = join(root, "two", "changes.patch");
  await writeChangesPatch(placeOf("two", second.workspace), full, settings, { path, relativePath: "changes.patch", redact: (s) => s, write: (bytes) => writeFile(path, bytes) });
  assert.match(await readFile(path, "utf8"), /^diff --git a\/src\/a\.txt b\/src\/a\.txt\n(?:.*\n)*-a\n\+changed by the agent\n$/);
});

test("a trial's index is the kept one linked, and git writing the trial's index never changes the kept one", async (t) => {
  const root = await tempDir(t);
  const fixture = join(root, "fixture");
  await mkdir(fixture, { recursive: true });
  await writeFiles(fixture, { "a.txt": "a\n", "b.txt": "b\n" });
  // Older than the kept index: no entry is racily clean, so a snapshot with nothing changed writes no index.
  const past = new Date("2021-01-01T00:00:00Z");
  for (const file of ["a.txt", "b.txt"]) await utimes(join(fixture, file), past, past);
  const settings = changesSettings(undefined);
  const indexes = join(root, "changes-indexes");
  const trial = async (name: string) => {
    const workspace = join(root, name, "workspace");
    await copyFixture(fixture, workspace);
    const place = { workspace, gitDir: join(root, name, "changes.git"), objectsDir: join(root, "changes-objects"), fixtureIndexesDir: indexes, hostEnv: HOST_ENV };
    await seedFixtureIndex(place, settings, fixture);
    return { workspace, place, base: await snapshotWorkspace(place, settings, { seeded: true }) };
  };
  await trial("one");
  const keptName = (await readdir(indexes)).find((name) => !name.endsWith(".tree"))!;
  const keptBefore = await readFile(join(indexes, keptName));
  const two = await trial("two");
  assert.equal((await lstat(join(two.place.gitDir, "index"))).ino, (await lstat(join(indexes, keptName))).ino, "linked, not copied");
  await writeFile(join(two.workspace, "a.txt"), "the agent's\n");
  await writeFile(join(two.workspace, "c.txt"), "new\n");
  const path = join(root, "two", "changes.patch");
  await writeChangesPatch(two.place, two.base, settings, { path, relativePath: "changes.patch", redact: (s) => s, write: (bytes) => writeFile(path, bytes) });
  assert.match(await readFile(path, "utf8"), /^diff --git a\/a\.txt b\/a\.txt\n(?:.*\n)*diff --git a\/c\.txt b\/c\.txt\nnew file mode/);
  assert.deepEqual(await readFile(join(indexes, keptName)), keptBefore, "the kept index is as it was");
  assert.notEqual((await lstat(join(two.place.gitDir, "index"))).ino, (await lstat(join(indexes, keptName))).ino, "git replaced the trial's link with an index of its own");
});

test("a layered workspace's patch, staged from its layer's paths alone, applies back onto the base and gives the workspace: deleted folders, a folder deleted and made again, a file made a folder and a folder made a file included", { skip: process.getuid?.() !== 0 && "mounting a kernel overlay needs root (CI runs as root)" }, async (t) => {
  const root = await tempDir(t);
  const lower = join(root, "run/prepared/base/workspace");
  await mkdir(lower, { recursive: true });
  await writeFiles(lower, {
    "a.txt": "one\n", "old-name.txt": LONG, "gone/x.txt": "x\n", "remade/y.txt": "y\n", "remade/z.txt": "z\n", "keep/k.txt": "k\n", "node_modules/m.js": "m\n",
    "file-made-folder": "was a file\n", "folder-made-file/f.txt": "was in a folder\n",
  });
  const mounts = new LayerMounts(join(root, "run"));
  const layer = { kind: "overlay" as const, lower, upper: join(root, "run/tasks/t/layer/upper"), work: join(root, "run/tasks/t/layer/work"), target: join(root, "run/tasks/t/workspace") };
  await mounts.mount(layer);
  try {
    const b = await snapshotBench(join(root, "run"), layer.target, DEFAULTS);
    const ws = layer.target;
    await writeFile(join(ws, "a.txt"), "one\ntwo\n");
    await rename(join(ws, "old-name.txt"), join(ws, "new-name.txt"));
    await rm(join(ws, "gone"), { recursive: true });
    await rm(join(ws, "remade"), { recursive: true });
    await mkdir(join(ws, "remade"));
    await writeFile(join(ws, "remade/new.txt"), "new\n");
    await rm(join(ws, "file-made-folder"));
    await mkdir(join(ws, "file-made-folder"));
    await writeFile(join(ws, "file-made-folder/inside.txt"), "now in a folder\n");
    await rm(join(ws, "folder-made-file"), { recursive: true });
    await writeFile(join(ws, "folder-made-file"), "now a file\n");
    await writeFile(join(ws, "node_modules/m.js"), "changed but excluded\n");
    const onlyPaths = await layerPaths(layer);
    assert.ok(!onlyPaths.includes("keep/k.txt"), "an untouched file is not among the layer's paths");
    const path = join(root, "run/tasks/t/changes.patch");
    const record = await writeChangesPatch(b.place, b.base, DEFAULTS, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, onlyPaths);
    assert.equal(record.path, "changes.patch");
    assert.doesNotMatch(await readFile(path, "utf8"), /node_modules/, "the excludes hold");
    assert.match(await readFile(path, "utf8"), /^diff --git a\/file-made-folder b\/file-made-folder\ndeleted file mode/m, "the file a folder took the place of is deleted");
    applyPatch(b.baseCopy, path);
    assert.deepEqual(await tree(b.baseCopy, (rel) => rel.startsWith("node_modules")), await tree(ws, (rel) => rel.startsWith("node_modules")));
  } finally {
    await mounts.unmount(layer.target);
  }
});

/** Whether the object `id` is in the place's store. */
function stored(place: ChangesPlace, id: string): boolean {
  try {
    execFileSync("git", ["cat-file", "-e", id], { env: { PATH: process.env.PATH, GIT_DIR: place.gitDir, GIT_OBJECT_DIRECTORY: place.objectsDir }, stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** The id git gives `path`'s content (a file, not a link). */
function blobId(path: string): string {
  return execFileSync("git", ["hash-object", "--no-filters", path], { env: { PATH: process.env.PATH } }).toString("utf8").trim();
}

test("over a layered workspace's base the object store keeps what the trial changed, not the base: its files are staged by id, and a patch writes the base files it shows from the base; it applies back with every kind of change", async (t) => {
  const root = await tempDir(t);
  // The base a layer is mounted over, and the view of it: here a copy (same sizes and mtimes), so no mount is needed and any user runs this.
  const base = join(root, "run/prepared/base/workspace");
  await mkdir(base, { recursive: true });
  await writeFiles(base, {
    "a.txt": "one\ntwo\nthree\n", "old-name.txt": LONG, "gone/x.txt": "x\n", "run.sh": "echo hi\n", "untouched.txt": "never read again\n",
    "package-lock.json": "{\"v\":1}\n", "dir with space/é 文件.txt": "unicode\n", "node_modules/m.js": "m\n",
  });
  await writeFile(join(base, "blob.bin"), Buffer.from([0, 1, 2, 0, 255]));
  await symlink("a.txt", join(base, "link"));
  execFileSync("git", ["init", "-q", join(base, "nested")]);
  await ageTree(base);
  const settings = changesSettings({ include: ["package-lock.json"] });
  const workspace = join(root, "run/tasks/t/workspace");
  await mkdir(join(root, "run/tasks/t"), { recursive: true });
  execFileSync("cp", ["-a", base, workspace]);
  const objectsDir = join(root, "run/changes-objects");
  const place: ChangesPlace = { workspace, base, gitDir: join(root, "run/tasks/t/changes.git"), objectsDir, fixtureIndexesDir: join(root, "run/changes-indexes"), hostEnv: HOST_ENV };
  const seed = await seedFixtureIndex(place, settings, base);
  assert.ok(seed?.tree, "the base's index is kept with its tree");
  const snapshot = await snapshotWorkspace(place, settings, { seeded: true });
  assert.deepEqual(snapshot, { tree: seed.tree, baseFiles: base }, "the snapshot of the unchanged view is the base's tree");
  for (const file of ["a.txt", "untouched.txt", "blob.bin", "package-lock.json"]) assert.equal(stored(place, blobId(join(base, file))), false, `${file}: no base file is stored before a patch needs it`);
  const loose = (await readdir(objectsDir, { recursive: true })).filter((name) => /^[0-9a-f]{2}\/[0-9a-f]+$/.test(name));
  assert.deepEqual(loose, [], "the base's trees are packed, none loose");
  assert.equal((await readdir(join(objectsDir, "pack"))).filter((name) => name.endsWith(".pack")).length, 1);

  await writeFile(join(workspace, "a.txt"), "one\n2\nthree\n");
  await rename(join(workspace, "old-name.txt"), join(workspace, "new-name.txt"));
  await rm(join(workspace, "gone"), { recursive: true });
  await chmod(join(workspace, "run.sh"), 0o755);
  await writeFile(join(workspace, "blob.bin"), Buffer.from([9, 0, 9]));
  await rm(join(workspace, "link"));
  await symlink("run.sh", join(workspace, "link"));
  await writeFile(join(workspace, "package-lock.json"), "{\"v\":2}\n");
  await writeFile(join(workspace, "dir with space/é 文件.txt"), "unicode, changed\n");
  await writeFile(join(workspace, "made.txt"), "new\n");
  const onlyPaths = ["a.txt", "blob.bin", "dir with space/é 文件.txt", "gone", "link", "made.txt", "new-name.txt", "old-name.txt", "package-lock.json", "run.sh"];
  const path = join(root, "run/tasks/t/changes.patch");
  const index = join(place.gitDir, "index");
  const indexBefore = await lstat(index);
  const record = await writeChangesPatch(place, snapshot, settings, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, onlyPaths);
  assert.equal(record.path, "changes.patch", JSON.stringify(record));
  const indexAfter = await lstat(index);
  assert.deepEqual([indexAfter.ino, indexAfter.mtimeMs], [indexBefore.ino, indexBefore.mtimeMs], "the trial's index is as it was (a link to the kept one but in the first trial): the patch staged on a scratch copy");
  const text = await readFile(path, "utf8");
  // A trial whose git folder is lost: the patch starts from the snapshot's tree, and is the same.
  await rm(place.gitDir, { recursive: true });
  await writeChangesPatch(place, snapshot, settings, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, onlyPaths);
  assert.equal(await readFile(path, "utf8"), text, "the same patch without the trial's index");
  assert.match(text, /^similarity index 100%\nrename from old-name\.txt\nrename to new-name\.txt$/m);
  assert.match(text, /^-\{"v":1\}\n\+\{"v":2\}$/m);
  assert.match(text, /^Binary files a\/blob\.bin and b\/blob\.bin differ$/m);
  assert.equal(stored(place, blobId(join(base, "untouched.txt"))), false, "a base file the trial left alone is never stored");
  assert.equal(stored(place, blobId(join(base, "a.txt"))), true, "a base file the patch shows is stored");
  const applied = join(root, "applied");
  execFileSync("cp", ["-a", base, applied]);
  applyPatch(applied, path, ["blob.bin"]);
  const skip = (rel: string) => rel === "blob.bin" || rel.startsWith("node_modules") || rel.startsWith("nested");
  assert.deepEqual(await tree(applied, skip), await tree(workspace, skip));
});

test("a layered workspace's base that changed under a trial gives no patch, saying why, rather than a wrong one", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "base");
  await mkdir(base, { recursive: true });
  await writeFiles(base, { "a.txt": "one\n" });
  await ageTree(base);
  const workspace = join(root, "workspace");
  execFileSync("cp", ["-a", base, workspace]);
  const place: ChangesPlace = { workspace, base, gitDir: join(root, "t/changes.git"), objectsDir: join(root, "objects"), fixtureIndexesDir: join(root, "indexes"), hostEnv: HOST_ENV };
  await seedFixtureIndex(place, DEFAULTS, base);
  const snapshot = await snapshotWorkspace(place, DEFAULTS, { seeded: true });
  await writeFile(join(workspace, "a.txt"), "two\n");
  await writeFile(join(base, "a.txt"), "not what was staged\n");
  const path = join(root, "t/changes.patch");
  const record = await writeChangesPatch(place, snapshot, DEFAULTS, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, ["a.txt"]);
  assert.equal(record.path, null);
  assert.match(record.reason ?? "", /git diff-(?:tree|index) exited \d+: .*unable to read/s);
});

test("a nested repository shows as its commit, and one without a commit is left out rather than failing the snapshot: copied and layered workspaces alike", async (t) => {
  for (const layered of [false, true]) {
    const root = await tempDir(t);
    const base = join(root, "base");
    await mkdir(base, { recursive: true });
    await writeFiles(base, { "a.txt": "a\n", "with-commit/w.txt": "w\n" });
    execFileSync("git", ["init", "-q", join(base, "empty-repo")]);
    execFileSync("git", ["init", "-q", join(base, "with-commit")]);
    const inRepo = { cwd: join(base, "with-commit"), env: GIT_TEST_ENV };
    execFileSync("git", ["add", "w.txt"], inRepo);
    execFileSync("git", ["commit", "-qm", "one"], inRepo);
    const commit = execFileSync("git", ["rev-parse", "HEAD"], inRepo).toString("utf8").trim();
    const workspace = join(root, "workspace");
    execFileSync("cp", ["-a", base, workspace]);
    const place: ChangesPlace = { workspace, gitDir: join(root, "t/changes.git"), objectsDir: join(root, "objects"), fixtureIndexesDir: join(root, "indexes"), hostEnv: HOST_ENV, ...(layered ? { base } : {}) };
    const seeded = (await seedFixtureIndex(place, DEFAULTS, layered ? base : workspace)) !== null;
    const snapshot = await snapshotWorkspace(place, DEFAULTS, { seeded });
    assert.ok("tree" in snapshot, `${layered ? "layered" : "copied"}: ${JSON.stringify(snapshot)}`);
    const listed = execFileSync("git", ["ls-tree", "-r", snapshot.tree], { env: { PATH: process.env.PATH, GIT_DIR: place.gitDir, GIT_OBJECT_DIRECTORY: place.objectsDir } }).toString("utf8");
    assert.match(listed, new RegExp(`^160000 commit ${commit}\twith-commit$`, "m"));
    assert.doesNotMatch(listed, /empty-repo/);
    await writeFile(join(workspace, "a.txt"), "b\n");
    const path = join(root, "t/changes.patch");
    const record = await writeChangesPatch(place, snapshot, DEFAULTS, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, layered ? ["a.txt"] : undefined);
    assert.equal(record.path !== null && record.files, 1, JSON.stringify(record));
  }
});

test("a layered workspace's patch leaves out what the excludes leave out, as a whole-workspace snapshot's does: a changed, a deleted and a new excluded file, a folder deleted whole beside excluded files, a folder of excluded files made a file; an include brings its file back", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "run/prepared/base/workspace");
  await mkdir(base, { recursive: true });
  await writeFiles(base, {
    "package-lock.json": "{\"v\":1}\n", "yarn.lock": "a@1\n", "src.js": "let x = 1;\n",
    "node_modules/dep/a.js": "a\n", "node_modules/dep/b.js": "b\n",
    "old/keep.js": "kept\n", "old/node_modules/m.js": "m\n", "old/dist/o.js": "o\n",
    "swap/node_modules/n.js": "n\n", "swap/build/x.o": "x\n",
  });
  await ageTree(base);
  const settings = changesSettings({ include: ["package-lock.json"] });
  // The same changes in a layered trial's view and in a copied trial's workspace.
  const change = async (ws: string) => {
    await writeFiles(ws, { "package-lock.json": "{\"v\":2}\n", "yarn.lock": "a@2\n", "src.js": "let x = 2;\n", "node_modules/dep/a.js": "A\n", "node_modules/new.js": "new\n" });
    await rm(join(ws, "node_modules/dep/b.js"));
    await rm(join(ws, "old"), { recursive: true });
    await rm(join(ws, "swap"), { recursive: true });
    await writeFile(join(ws, "swap"), "a file now\n");
  };
  const workspace = join(root, "run/tasks/t/workspace");
  await mkdir(join(root, "run/tasks/t"), { recursive: true });
  execFileSync("cp", ["-a", base, workspace]);
  const layered: ChangesPlace = { workspace, base, gitDir: join(root, "run/tasks/t/changes.git"), objectsDir: join(root, "run/changes-objects"), fixtureIndexesDir: join(root, "run/changes-indexes"), hostEnv: HOST_ENV };
  await seedFixtureIndex(layered, settings, base);
  const layeredBase = await snapshotWorkspace(layered, settings, { seeded: true });
  await change(workspace);
  // What the layer would hold, and the deletions it would list (layerPaths): no folder, the deleted ones by name.
  const onlyPaths = ["node_modules/dep/a.js", "node_modules/dep/b.js", "node_modules/new.js", "old", "package-lock.json", "src.js", "swap", "yarn.lock"];
  const patchPath = join(root, "run/tasks/t/changes.patch");
  const record = await writeChangesPatch(layered, layeredBase, settings, { path: patchPath, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(patchPath, bytes) }, onlyPaths);
  assert.equal(record.path, "changes.patch", JSON.stringify(record));

  const wholePatch = await copiedPatch(t, base, settings, change);

  const text = await readFile(patchPath, "utf8");
  assert.equal(text, wholePatch.text, "the same patch as staging the whole workspace with the excludes");
  const named = [...text.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
  // Excluded files were never in the snapshot: a change to them, or their folder's, is no change to show.
  assert.deepEqual(named, ["old/keep.js", "package-lock.json", "src.js", "swap"]);
});

test("an included file in an excluded folder made a folder, one made an empty folder, and a folder made a file: the copied workspace's patch shows each, as the layered one does", async (t) => {
  const root = await tempDir(t);
  const base = join(root, "base");
  await mkdir(base, { recursive: true });
  // `package-lock.json` is excluded by default (its folder's files too); the include brings them back.
  await writeFiles(base, { "package-lock.json/a.txt": "a\n", "package-lock.json/b.txt": "b\n", "package-lock.json/c/x.txt": "x\n", "src.js": "1\n" });
  await ageTree(base);
  const settings = changesSettings({ include: ["package-lock.json"] });
  const change = async (ws: string) => {
    await rm(join(ws, "package-lock.json/a.txt"));
    await mkdir(join(ws, "package-lock.json/a.txt"));
    await writeFile(join(ws, "package-lock.json/a.txt/inside"), "inside\n");
    await rm(join(ws, "package-lock.json/b.txt"));
    await mkdir(join(ws, "package-lock.json/b.txt"));
    await rm(join(ws, "package-lock.json/c"), { recursive: true });
    await writeFile(join(ws, "package-lock.json/c"), "a file now\n");
  };
  const wholePatch = await copiedPatch(t, base, settings, change);
  assert.notEqual(wholePatch.record.path, null, JSON.stringify(wholePatch.record));
  const named = [...wholePatch.text.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
  assert.deepEqual(named, ["package-lock.json/a.txt", "package-lock.json/a.txt/inside", "package-lock.json/b.txt", "package-lock.json/c", "package-lock.json/c/x.txt"]);

  const workspace = join(root, "layered");
  execFileSync("cp", ["-a", base, workspace]);
  const layered: ChangesPlace = { workspace, base, gitDir: join(root, "t/changes.git"), objectsDir: join(root, "objects"), fixtureIndexesDir: join(root, "indexes"), hostEnv: HOST_ENV };
  await seedFixtureIndex(layered, settings, base);
  const layeredBase = await snapshotWorkspace(layered, settings, { seeded: true });
  await change(workspace);
  const path = join(root, "t/changes.patch");
  await writeChangesPatch(layered, layeredBase, settings, { path, relativePath: "changes.patch", redact: (x) => x, write: (bytes) => writeFile(path, bytes) }, ["package-lock.json/a.txt", "package-lock.json/a.txt/inside", "package-lock.json/b.txt", "package-lock.json/c", "package-lock.json/c/x.txt"]);
  assert.equal(await readFile(path, "utf8"), wholePatch.text);
});
