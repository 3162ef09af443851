/**
 * The agent's changes as a patch (issue 24, on today's copied workspaces): the workspace is
 * snapshot once right after setup, and after the turn `changes.patch` is the git diff of the
 * workspace against that snapshot — created, deleted, renamed files, mode changes, links as
 * links, binary files named ("Binary files … differ"), never inlined.
 *
 * Git plumbing does the work with everything of its own outside the workspace:
 *
 *   GIT_DIR               the trial's `changes.git/` (an index and nothing else of note)
 *   GIT_WORK_TREE         the workspace; its own `.git` (a fixture that is a repository) is
 *                         never read or written — git passes over every `.git` inside a work tree
 *   GIT_OBJECT_DIRECTORY  the run's `changes-objects/`, shared by every trial: a fixture's files
 *                         are written there once per run, and each further trial only hashes them
 *
 * The workspace is the agent's, so nothing of it may steer git: no system or user config is read,
 * `info/attributes` (which outranks the workspace's `.gitattributes`) turns off filters and line-end
 * conversions, `.gitignore` files are overridden (`add -f`: an ignored file the agent wrote is
 * still a change), and hooks do not exist. A nested repository below the root shows as its
 * commit (a gitlink), or not at all without one; FIFOs and sockets are passed over.
 *
 * What is left out (`workspace.changes`, changes-settings.ts) is never hashed at all.
 *
 * The folder a workspace began as (`ChangesPlace.base`: a layered workspace's read-only base, or
 * the fixture a copy was made from) is there already, so its files' contents are not stored again
 * as objects: its index is staged by id alone, and a patch writes the base files it shows from the
 * base (`writeBaseBlobs`). Trees over missing blobs are written with `--missing-ok`; a diff that
 * needs one and cannot find it fails, and the trial has no patch.
 *
 * A fixture is hashed once per run: the first trial stages it by id right after its copy, before
 * setup, and keeps that index (`changes-indexes/`); later trials start from it (seedFixtureIndex: a hard link,
 * which git replaces when it writes), and since a copy keeps sizes and mtimes, `git add` hashes
 * only what setup changed. Stat data is
 * compared on size and whole-second mtime only (`core.checkStat=minimal`): inodes, owners and
 * ctimes differ from copy to copy. An entry git found racily clean when it wrote the index is
 * marked so (its size zeroed) and is read again, whatever the copy's times.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, link, lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { errnoCode } from "../../core/errors.js";
import { runOffThread } from "../../process/off-thread-command.js";
import type { ChangesSettings } from "../tasks/changes-settings.js";
import { excludePathspecs, includePathspecs, mayExclude, patternPathspecs } from "../tasks/changes-settings.js";
import { NumstatThenPatch, PatchCap, patchStats, truncationMarker } from "./changes-patch.js";
import type { ResultChanges } from "../run-dir/task-result.js";
import { asOutputError } from "../run-dir/output-guard.js";

/** Where a trial's snapshot and patch live. */
export interface ChangesPlace {
  workspace: string;
  /** The trial's git folder (`changes.git/`). */
  gitDir: string;
  /** The run's shared object store (`changes-objects/`). */
  objectsDir: string;
  /** The environment git runs with: only its PATH is read. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The run's fixture indexes (`changes-indexes/`); absent: none kept. */
  fixtureIndexesDir?: string;
  /**
   * The folder the workspace began as, whose files' contents need not be kept in the object store:
   * a layered workspace's read-only base (the folder its layer is mounted over), or the fixture a
   * copy was made from. Its index is staged with their ids alone (`update-index --info-only`), and
   * a patch writes, from this folder, only the few base files it shows changed (`writeBaseBlobs`)
   * — a run's objects hold what its tasks changed, not the fixture again. A fixture changed since
   * its copy no longer holds what the ids say: the patch then fails, naming the object, and the
   * trial has none (never a wrong one). Absent: every file is stored (a shared setup's or a git
   * workspace's copy, a resumed copy).
   */
  base?: string;
  /** The index git stages into; absent: the trial's (`index` in its git folder). */
  indexFile?: string;
}

/**
 * The snapshot after setup: a tree in the object store (`baseFiles`: the `ChangesPlace.base` its
 * unstored files are read from), or why none could be taken.
 */
export type ChangesBase = { tree: string; baseFiles?: string } | { unavailable: string };

/** Git could not do it (not installed, or it failed): the patch is unavailable, the trial goes on. */
export class ChangesUnavailable extends Error {}

const STDERR_CHARS = 2_000;
/**
 * Settings given on every call, so no config file of the machine's or the workspace's counts.
 * `core.looseCompression=1`: a fixture's objects are written once, fast, and read rarely.
 */
const GIT_SETTINGS = [
  "core.quotePath=false", "core.autocrlf=false", "core.safecrlf=false", "core.fileMode=true", "core.symlinks=true",
  "core.looseCompression=1", "gc.auto=0", "diff.renames=true", "diff.noprefix=false", "diff.mnemonicPrefix=false",
  "core.attributesFile=/dev/null", "core.excludesFile=/dev/null", "core.hooksPath=/dev/null", "core.fsmonitor=false",
  // The snapshot holds the workspace's content: the owner's alone, as everything in the run directory (objects 0400, the rest 0600).
  "core.sharedRepository=0600",
  // A fixture's index is reused on each copy (seedFixtureIndex): a copy keeps sizes and mtimes, not inodes, owners or ctimes.
  "core.checkStat=minimal", "core.trustctime=false",
].flatMap((setting) => ["-c", setting]);

/** Outranks the workspace's `.gitattributes`: no filter, conversion or diff driver of the agent's runs. */
const NEUTRAL_ATTRIBUTES = "* -text -ident -filter -working-tree-encoding !eol !diff\n";

export interface SnapshotOptions {
  /** The trial's index was seeded (seedFixtureIndex): a stat cache, so only what changed since is hashed. */
  seeded?: boolean;
  /**
   * The seeded index's tree, given only when the workspace is known to hold exactly what that
   * index was staged from — a fresh layer over an unchanging base, no setup run in it: the
   * snapshot is that tree, and no git runs (over a large fixture, `git add` matching the excludes
   * against every path takes most of a second).
   */
  unchangedTree?: string;
}

/**
 * Records the workspace as it is now: the base every later `writeChangesPatch` diffs against.
 * Safe to repeat (it is taken again only while setup is not recorded done).
 */
export async function snapshotWorkspace(place: ChangesPlace, settings: ChangesSettings, opts: SnapshotOptions = {}): Promise<ChangesBase> {
  try {
    // Nothing to stage: the workspace is what the seeded index was staged from.
    const baseFiles = place.base !== undefined ? { baseFiles: place.base } : {};
    if (opts.seeded && opts.unchangedTree !== undefined && existsSync(join(place.gitDir, "index"))) return { tree: opts.unchangedTree, ...baseFiles };
    // A seeded index (seedFixtureIndex) is a stat cache: whatever setup changed since is hashed again.
    if (!(opts.seeded && existsSync(join(place.gitDir, "index")))) await prepareGitDir(place);
    return { tree: await stageWorkspace(place, settings), ...baseFiles };
  } catch (err) {
    if (err instanceof ChangesUnavailable) return { unavailable: err.message };
    throw asOutputError(err, place.gitDir, "write");
  }
}

/**
 * Right after the fixture is copied, before setup: the trial's index made from the fixture's
 * index of this run when there is one (linked to it; the workspace, a copy or a layer, has the
 * fixture's sizes and mtimes, so git hashes nothing again), else staged from the workspace and
 * kept for the next trials. Keyed by the fixture's real path (a layered trial's: its base's) and the changes settings (what is staged). The seeded index, with the
 * tree it was staged as (null when not known), when the trial's index is there for
 * `snapshotWorkspace({ seeded: true })`; null when git could not make it.
 */
export async function seedFixtureIndex(place: ChangesPlace, settings: ChangesSettings, fixture: string): Promise<SeededIndex | null> {
  if (place.fixtureIndexesDir === undefined) return null;
  const key = createHash("sha256").update(JSON.stringify([await realpath(fixture), excludePathspecs(settings), includePathspecs(settings)])).digest("hex").slice(0, 32);
  const kept = join(place.fixtureIndexesDir, key);
  try {
    await prepareGitDir(place);
    const index = join(place.gitDir, "index");
    // Trials copying the fixture at once wait for the first one's index rather than each hashing it all.
    // (No await between the look-up and the set below when none is under way: two trials never both start one.)
    const underWay = buildsUnderWay.get(kept);
    if (underWay !== undefined) await underWay;
    if (existsSync(kept)) {
      // A link, not a copy (a 20,000-file index is 2 MB a trial): git never writes an index in
      // place — it renames index.lock over it — so nothing a trial's git does reaches the kept one.
      await link(kept, index).catch(() => copyFile(kept, index));
      // A kept index without its tree (an older rhema's): still a stat cache.
      const tree = await readFile(`${kept}${TREE_SUFFIX}`, "utf8").catch(() => null);
      return { tree: tree !== null && /^[0-9a-f]{40,64}$/.test(tree.trim()) ? tree.trim() : null };
    }
    const build = keepFixtureIndex(place, settings, kept);
    buildsUnderWay.set(kept, build.catch(() => {}));
    try {
      return { tree: await build };
    } finally {
      buildsUnderWay.delete(kept);
    }
  } catch (err) {
    if (err instanceof ChangesUnavailable) return null;
    throw asOutputError(err, place.gitDir, "write");
  }
}

/** A trial's index seeded from its fixture's: `tree`, what that index was staged as (null: not known). */
export interface SeededIndex {
  tree: string | null;
}

/** Fixture indexes being made in this process, by where they are kept: a cache of work under way, not state. */
const buildsUnderWay = new Map<string, Promise<unknown>>();

/** The tree staged from a kept index's copy, kept beside it (`<kept>.tree`). */
const TREE_SUFFIX = ".tree";

/** Stages the fresh copy into the trial's index and keeps a copy of that index at `kept`, its tree beside it (each atomic); returns the tree. */
async function keepFixtureIndex(place: ChangesPlace, settings: ChangesSettings, kept: string): Promise<string> {
  const tree = place.base === undefined ? await stageWorkspace(place, settings) : await stageBaseIds(place, place.base, settings);
  if (place.base !== undefined) await packTrees(place, tree);
  await mkdir(dirname(kept), { recursive: true, mode: 0o700 });
  // The tree first: an index found kept always has its tree, unless an older rhema kept it.
  for (const [from, to] of [[null, `${kept}${TREE_SUFFIX}`], [join(place.gitDir, "index"), kept]] as const) {
    const temporary = `${to}.${process.pid}.tmp`;
    if (from === null) await writeFile(temporary, tree + "\n", { mode: 0o600 });
    else await copyFile(from, temporary);
    await rename(temporary, to);
  }
  return tree;
}

export interface PatchTarget {
  /** Where changes.patch goes, and the writer that puts it there (atomic, 0600). */
  path: string;
  write(bytes: Buffer): Promise<void>;
  redact(text: string): string;
  /** How results name it: relative to the run directory. */
  relativePath: string;
}

/**
 * Diffs the workspace against `base` and writes changes.patch; what result.json records of it.
 * `onlyPaths`: the only paths that can differ from the snapshot (a layered trial's: what its layer
 * holds and what it deleted, layer-mounts.ts `layerPaths`) — git looks at them alone instead of
 * matching the excludes against every path of the workspace.
 */
export async function writeChangesPatch(place: ChangesPlace, base: ChangesBase, settings: ChangesSettings, target: PatchTarget, onlyPaths?: readonly string[]): Promise<ResultChanges> {
  if ("unavailable" in base) return { path: null, reason: base.unavailable };
  // The workspace's own `.git` is never staged (a whole-workspace stage passes over it as well).
  const stageable = onlyPaths?.filter((path) => path.split("/")[0] !== ".git");
  if (stageable !== undefined && stageable.length === 0) {
    // A layer holding nothing (no write, no deletion, by setup or the agent) but in the
    // workspace's own `.git`: the workspace is its base, as its snapshot was, and no git need run
    // (each git a process: over a large suite, the spawns are most of what a trial's end costs
    // rhema's own process).
    await target.write(Buffer.alloc(0));
    return { path: target.relativePath, ...patchStats([]), bytes: 0, truncated: false, leftOut: 0 };
  }
  const scratchIndex = join(place.gitDir, SCRATCH_INDEX);
  try {
    const sides: DiffSides = stageable === undefined
      ? { kind: "trees", from: base.tree, to: await stageWorkspace(place, settings) }
      : await stageLayerPaths({ ...place, indexFile: scratchIndex }, settings, base.tree, stageable);
    // A layered trial's diff shows base files only where it has a path the base holds.
    if (place.base !== undefined && (stageable === undefined || (await anyIn(place.base, stageable)))) await writeBaseBlobs(place, place.base, sides);
    const cap = new PatchCap(settings.maxBytes, target.redact);
    // The file list and the patch from one git process: its records first, then the patch.
    const split = new NumstatThenPatch((chunk) => cap.push(chunk));
    await runDiff(place, sides, ["-r", "-z", "--numstat", "-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv"], (chunk) => split.push(chunk));
    const files = split.files();
    const capped = cap.end();
    const leftOut = files.slice(capped.keptFiles);
    const bytes = capped.truncated ? Buffer.concat([capped.bytes, Buffer.from(truncationMarker(settings.maxBytes, leftOut))]) : capped.bytes;
    await target.write(bytes);
    return {
      path: target.relativePath, ...patchStats(files), bytes: bytes.length,
      truncated: capped.truncated, leftOut: capped.truncated ? leftOut.length : 0,
    };
  } catch (err) {
    if (err instanceof ChangesUnavailable) return { path: null, reason: err.message };
    throw err;
  } finally {
    if (stageable !== undefined) await rm(scratchIndex, { force: true });
  }
}

/**
 * What a patch compares: the snapshot's tree with the workspace's (staged whole into the trial's
 * index), or with a scratch index holding only `paths` (a layered trial's: stageLayerPaths).
 */
type DiffSides =
  | { kind: "trees"; from: string; to: string }
  | { kind: "index"; from: string; indexFile: string; paths: readonly string[] };

/** A git diff of the two sides: `diff-tree`, or `diff-index --cached` limited to the index's paths. */
function runDiff(place: ChangesPlace, sides: DiffSides, flags: readonly string[], onStdout?: (chunk: Buffer) => void): Promise<Buffer> {
  if (sides.kind === "trees") return runGit(place, ["diff-tree", ...flags, sides.from, sides.to], onStdout);
  return runGit(place, ["diff-index", "--cached", ...flags, sides.from, "--", ...sides.paths], onStdout, { indexFile: sides.indexFile });
}

/** The scratch index a layered trial's end stages on, in its git folder; removed after. */
const SCRATCH_INDEX = "patch.index";
/**
 * Past this many bytes of pathspecs a layered trial's diff names the top folders of its paths
 * instead of each path: a command line has room for ~2 MB in all and 128 KB an argument.
 */
const PATHSPEC_BYTES = 256 * 1024;
const tooLong = (pathspecs: readonly string[]): boolean => pathspecs.reduce((bytes, spec) => bytes + Buffer.byteLength(spec) + 1, 0) > PATHSPEC_BYTES;

/**
 * A layered trial's changes staged on a scratch index that holds its `onlyPaths` alone (the only
 * paths that can differ from the snapshot, whose tree is `snapshotTree`: layer-mounts.ts
 * `layerPaths`), as the view has them; the diff is the snapshot's tree against that index,
 * limited to the same paths. So git reads no path the trial left alone, nor the base's index
 * (20,000 entries, 2 MB: staged on a copy of it, each of a trial's git commands read and wrote it
 * all, most of what a trial's end cost). A path the view no longer has stays out of the index: the
 * diff shows it deleted, with what it held.
 *
 * Each path literally (no glob of the agent's file names) and with no exclude: git walks only
 * their folders. (Given with the excludes, whose globs begin with `**`, git walks every folder of
 * the view.) Then what the excludes leave out, unless an include keeps it, leaves the index again.
 * The snapshot holds no excluded path (it was staged with the excludes), so none shows deleted.
 *
 * Paths too many for a command line are diffed by their top folders (or, too many as well, over
 * the whole workspace): the index then also holds what the snapshot has there outside
 * `onlyPaths`, unchanged.
 */
async function stageLayerPaths(scratch: ChangesPlace & { indexFile: string }, settings: ChangesSettings, snapshotTree: string, onlyPaths: readonly string[]): Promise<DiffSides> {
  // A trial whose git folder is lost gets an empty one: the scratch index needs nothing of it.
  if (!existsSync(join(scratch.gitDir, "HEAD"))) await prepareGitDir(scratch);
  await rm(scratch.indexFile, { force: true });
  await removeIndexLock(scratch);
  // What git can stage of each path: a path in a nested repository (its files, its own `.git`) is
  // that repository (its commit, as a whole-workspace stage has it).
  const repositoryOf = nestedRepositories(scratch.workspace);
  const present = new Set<string>();
  const scope = new Set<string>();
  // Whether all that is staged is files named here (no folder, whose files git finds itself).
  let filesAlone = true;
  for (const path of onlyPaths) {
    const stats = await lstat(join(scratch.workspace, path)).catch(() => null);
    if (stats === null) scope.add(path);
    else {
      const staged = (await repositoryOf(path)) ?? path;
      if (staged !== path || stats.isDirectory()) filesAlone = false;
      present.add(staged);
      scope.add(staged);
    }
  }
  let paths = [...scope].map((path) => `:(literal)${path}`);
  if (tooLong(paths)) {
    paths = [...new Set([...scope].map((path) => `:(literal)${path.split("/")[0]!}`))];
    // Top folders too many as well: the whole workspace (no pathspec).
    if (tooLong(paths)) paths = [];
    await seedUntouched(scratch, snapshotTree, paths, [...scope]);
  }
  if (present.size > 0) {
    await addAll(scratch, [...present].map((path) => `:(literal)${path}`));
    const excluded = settings.exclude.flatMap(patternPathspecs).map((spec) => `:(glob)${spec}`);
    if (excluded.length > 0 && (!filesAlone || mayExclude(settings, [...present]))) {
      const kept = settings.include.flatMap(patternPathspecs).map((spec) => `:(exclude,glob)${spec}`);
      const staged = (await runGit(scratch, ["ls-files", "-z", "--cached", "--", ...excluded, ...kept])).toString("utf8");
      if (staged !== "") await runGit(scratch, ["update-index", "--force-remove", "-z", "--stdin"], undefined, { input: staged });
    }
  }
  return { kind: "index", from: snapshotTree, indexFile: scratch.indexFile, paths };
}

/**
 * Into the scratch index, the snapshot's entries in `scope` (top folders; none: everywhere) that no
 * path of `onlyPaths` covers: unchanged, so a diff over the whole scope shows only what those paths changed.
 */
async function seedUntouched(scratch: ChangesPlace & { indexFile: string }, snapshotTree: string, scope: readonly string[], onlyPaths: readonly string[]): Promise<void> {
  const changed = new Set(onlyPaths);
  const covered = (path: string): boolean => {
    for (let end = path.length; end > 0; end = path.lastIndexOf("/", end - 1)) if (changed.has(path.slice(0, end))) return true;
    return false;
  };
  // `<mode> <type> <id>\t<path>` records: what `update-index --index-info` takes.
  const listed = (await runGit(scratch, ["ls-tree", "-r", "-z", "--full-tree", snapshotTree, "--", ...scope])).toString("utf8").split("\0");
  const untouched = listed.filter((record) => record !== "" && !covered(record.slice(record.indexOf("\t") + 1)));
  if (untouched.length > 0) await runGit(scratch, ["update-index", "-z", "--index-info"], undefined, { input: untouched.join("\0") + "\0" });
}

/**
 * The nested repository (a folder below the workspace's root holding `.git`) a path lies in, the
 * outermost, or null: as `git add` of the whole workspace sees it, which stops at such a folder and
 * stages its commit. Each folder is looked at once.
 */
function nestedRepositories(workspace: string): (path: string) => Promise<string | null> {
  const holdsGit = new Map<string, Promise<boolean>>();
  return async (path) => {
    const parts = path.split("/");
    for (let depth = 1; depth < parts.length; depth++) {
      const folder = parts.slice(0, depth).join("/");
      if (!holdsGit.has(folder)) holdsGit.set(folder, lstat(join(workspace, folder, ".git")).then(() => true, () => false));
      if (await holdsGit.get(folder)!) return folder;
    }
    return null;
  };
}

/** Whether `base` holds any of `paths`. */
async function anyIn(base: string, paths: readonly string[]): Promise<boolean> {
  for (const path of paths) if ((await lstat(join(base, path)).catch(() => null)) !== null) return true;
  return false;
}

/** A trial's git folder made empty: the first by `git init`, the next ones as copies of what it made (a git process less per trial). */
async function prepareGitDir(place: ChangesPlace): Promise<void> {
  await mkdir(place.objectsDir, { recursive: true, mode: 0o700 });
  await rm(place.gitDir, { recursive: true, force: true });
  await mkdir(place.gitDir, { recursive: true, mode: 0o700 });
  const blank = await (blankGitDir ??= initBlankGitDir(place).catch((err: unknown) => {
    blankGitDir = undefined;
    throw err;
  })).catch(() => null);
  if (blank === null) await initGitDir(place);
  else {
    for (const entry of blank) {
      const path = join(place.gitDir, entry.path);
      if (entry.content === null) await mkdir(path, { recursive: true, mode: 0o700 });
      else await writeFile(path, entry.content, { mode: 0o600 });
    }
  }
}

async function initGitDir(place: ChangesPlace): Promise<void> {
  await runGit(place, ["init", "--quiet", "--bare", "--template="], undefined, { init: true });
  await mkdir(join(place.gitDir, "info"), { recursive: true, mode: 0o700 });
  await writeFile(join(place.gitDir, "info", "attributes"), NEUTRAL_ATTRIBUTES, { mode: 0o600 });
}

/** What `initGitDir` made, folders (content null) before what they hold; taken in the first trial's git folder. */
type BlankGitDir = { path: string; content: Buffer | null }[];
/** A cache of this process's (its git's) blank git folder: not state. */
let blankGitDir: Promise<BlankGitDir> | undefined;

async function initBlankGitDir(place: ChangesPlace): Promise<BlankGitDir> {
  await initGitDir(place);
  const entries: BlankGitDir = [];
  for (const entry of await readdir(place.gitDir, { withFileTypes: true, recursive: true })) {
    const path = relative(place.gitDir, join(entry.parentPath, entry.name));
    if (entry.isDirectory()) entries.push({ path, content: null });
    else if (entry.isFile()) entries.push({ path, content: await readFile(join(place.gitDir, path)) });
    else throw new Error(`git init made ${path}, neither a file nor a folder`);
  }
  // Folders first, shallow before deep: each written into a folder that is there.
  return entries.sort((a, b) => Number(a.content !== null) - Number(b.content !== null) || a.path.split("/").length - b.path.split("/").length);
}

/**
 * The workspace into the trial's index, then its tree: what the excludes leave out is not read;
 * the includes are staged after (added, updated, or removed when gone). The index keeps each
 * file's stat data, so the diff after the turn hashes only what changed since the snapshot.
 */
async function stageWorkspace(place: ChangesPlace, settings: ChangesSettings): Promise<string> {
  await removeIndexLock(place);
  await addAll(place, excludePathspecs(settings));
  const includes = includePathspecs(settings);
  if (includes.length > 0) {
    const listed = (await runGit(place, ["ls-files", "-z", "--cached", "--others", "--", ...includes])).toString("utf8").split("\0");
    // A nested repository is listed as `dir/`: it is no file to stage.
    const paths = [...new Set(listed.filter((p) => p !== "" && !p.endsWith("/")))];
    // A file the index holds that is a folder now (in an excluded folder `add` left alone) leaves
    // it; the files now in that folder are listed as well, and `--replace` lets one take the
    // place of an entry in its way (a file of its folder's name, or the reverse).
    const folders: string[] = [];
    const files: string[] = [];
    for (const path of paths) ((await lstat(join(place.workspace, path)).catch(() => null))?.isDirectory() ? folders : files).push(path);
    if (folders.length > 0) await runGit(place, ["update-index", "--force-remove", "-z", "--stdin"], undefined, { input: folders.join("\0") + "\0" });
    if (files.length > 0) await runGit(place, ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], undefined, { input: files.join("\0") + "\0" });
  }
  return await writeTree(place);
}

/** A kill during `git add` leaves its lock; the run directory's lock says no other git is at work here. */
async function removeIndexLock(place: ChangesPlace): Promise<void> {
  await rm(`${place.indexFile ?? join(place.gitDir, "index")}.lock`, { force: true });
}

/**
 * `git add --all --force` of `specs`. A nested repository without a commit has nothing to stage
 * (git refuses it, and so the whole add): it is left out and the add made again without it.
 */
async function addAll(place: ChangesPlace, specs: readonly string[]): Promise<void> {
  const leftOut: string[] = [];
  for (;;) {
    try {
      const all = [...specs, ...leftOut.map((path) => `:(exclude,literal)${path}`)];
      await runGit(place, ["add", "--all", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"], undefined, { input: all.join("\0") + "\0" });
      return;
    } catch (err) {
      const empty = err instanceof ChangesUnavailable ? /error: '(.+)\/' does not have a commit checked out/.exec(err.message)?.[1] : undefined;
      if (empty === undefined || leftOut.includes(empty)) throw err;
      leftOut.push(empty);
    }
  }
}

/** The index as a tree; it may name base files whose contents are not stored (`ChangesPlace.base`). */
async function writeTree(place: ChangesPlace): Promise<string> {
  return (await runGit(place, ["write-tree", ...(place.base !== undefined ? ["--missing-ok"] : [])])).toString("utf8").trim();
}

/**
 * A workspace's base (`ChangesPlace.base`) into the trial's empty index by id alone: each file is
 * hashed, none is written to the object store (`--info-only`). What `git add` would stage: every
 * path the excludes leave (FIFOs and sockets passed over, a nested repository as its commit), then
 * the includes. Read from the base itself: a layered one's not through the mount (the same files,
 * no overlay); a copied fixture's as it was copied a moment before (the index's sizes and mtimes
 * are the copy's too, so a file that changed between is hashed again from the copy).
 */
async function stageBaseIds(place: ChangesPlace, base: string, settings: ChangesSettings): Promise<string> {
  const inBase = { workTree: base };
  for (const specs of [excludePathspecs(settings), includePathspecs(settings)]) {
    if (specs.length === 0) continue;
    // An empty index: every file is "other". A nested repository is listed as `dir/`; without the slash, update-index stages its commit.
    const listed = (await runGit(place, ["ls-files", "-z", "--others", "--", ...specs], undefined, inBase)).toString("utf8").split("\0");
    const paths: string[] = [];
    for (const path of new Set(listed.filter((p) => p !== ""))) {
      if (!path.endsWith("/")) paths.push(path);
      else if (await hasCommit(place, join(base, path))) paths.push(path.slice(0, -1));
    }
    if (paths.length > 0) await runGit(place, ["update-index", "--add", "--info-only", "-z", "--stdin"], undefined, { ...inBase, input: paths.join("\0") + "\0" });
  }
  return await writeTree(place);
}

/** Whether the nested repository at `dir` has a commit checked out (`git add` stages it as that commit; without one, not at all). */
async function hasCommit(place: ChangesPlace, dir: string): Promise<boolean> {
  const ownGit = { workTree: dir, gitDir: join(dir, ".git") };
  return runGit(place, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], undefined, ownGit).then(() => true, () => false);
}

/**
 * A layered base's trees into one pack: thousands of small loose objects (a 20,000-file base has
 * ~2,400 trees, 0.8 MB) each take a disk block of their own (10 MB). Loose copies left by the
 * packing are removed (`prune-packed` removes only what a pack holds: other trials' new objects stay).
 */
async function packTrees(place: ChangesPlace, tree: string): Promise<void> {
  const listed = (await runGit(place, ["ls-tree", "-r", "-t", "-z", "--full-tree", tree])).toString("utf8").split("\0");
  // `<mode> <type> <id>\t<path>`
  const trees = listed.map((line) => line.split("\t")[0]!.split(" ")).filter(([, type]) => type === "tree").map(([, , id]) => id!);
  await mkdir(join(place.objectsDir, "pack"), { recursive: true, mode: 0o700 });
  await runGit(place, ["pack-objects", "-q", "--window=0", join(place.objectsDir, "pack", "pack")], undefined, { input: [tree, ...trees].join("\n") + "\n" });
  await runGit(place, ["prune-packed", "-q"]);
}

/**
 * The base files a trial's diff reads (what it changed or deleted of them), written to the
 * object store from the base where their contents are not there yet (`stageBaseIds` kept their
 * ids alone). Found from the raw diff of the two sides, which reads no file; staged from the base through a
 * throwaway index, so links and modes are hashed as `git add` hashes them. A base that no longer
 * holds what its id says leaves the object missing, and the diff then fails, saying which.
 */
async function writeBaseBlobs(place: ChangesPlace, base: string, sides: DiffSides): Promise<void> {
  const raw = (await runDiff(place, sides, ["-r", "-z", "--no-renames"])).toString("utf8").split("\0");
  // `:old-mode new-mode old-id new-id status\0path\0`: the old side's files (not commits: mode 160000; not absent: mode 000000).
  const wanted = new Map<string, string>();
  for (let at = 0; at + 1 < raw.length; at += 2) {
    const [oldMode, , oldId] = raw[at]!.slice(1).split(" ");
    if (oldMode !== undefined && oldId !== undefined && oldMode !== "000000" && oldMode !== "160000") wanted.set(oldId, raw[at + 1]!);
  }
  // Looked for as loose objects, without a git process: the blobs a trial writes are loose (only a
  // base's trees are packed). One found nowhere loose is written again, which git skips if a pack has it.
  const missing = [...wanted].filter(([id]) => !existsSync(join(place.objectsDir, id.slice(0, 2), id.slice(2)))).map(([, path]) => path);
  if (missing.length === 0) return;
  const index = join(place.gitDir, "base-blobs.index");
  await rm(index, { force: true });
  try {
    await runGit(place, ["update-index", "--add", "-z", "--stdin"], undefined, { workTree: base, indexFile: index, input: missing.join("\0") + "\0" });
  } finally {
    await rm(index, { force: true });
  }
}

/** Runs git in the workspace with the trial's git folder; stdout whole, or to `onStdout` as it comes. Throws `ChangesUnavailable` when git fails. */
async function runGit(place: ChangesPlace, args: string[], onStdout?: (chunk: Buffer) => void, opts: { init?: boolean; input?: string; workTree?: string; indexFile?: string; gitDir?: string } = {}): Promise<Buffer> {
  const indexFile = opts.indexFile ?? place.indexFile;
  const env: Record<string, string> = {
    PATH: place.hostEnv.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    GIT_DIR: opts.gitDir ?? place.gitDir,
    // A nested repository is read with its own objects.
    ...(opts.gitDir === undefined ? { GIT_OBJECT_DIRECTORY: place.objectsDir } : {}),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    HOME: place.gitDir,
    XDG_CONFIG_HOME: place.gitDir,
    LC_ALL: "C",
    GIT_TERMINAL_PROMPT: "0",
    ...(opts.init ? {} : { GIT_WORK_TREE: opts.workTree ?? place.workspace }),
    ...(indexFile !== undefined ? { GIT_INDEX_FILE: indexFile } : {}),
  };
  // From the command thread: a trial's end runs several of these, and a spawn on the main thread
  // holds every other trial's work until the child has exec'd (off-thread-command.ts).
  const ran = await runOffThread({
    file: "git", args: [...GIT_SETTINGS, ...args], cwd: opts.init ? place.gitDir : (opts.workTree ?? place.workspace), env,
    input: opts.input ?? "", stderrChars: STDERR_CHARS, ...(onStdout ? { onStdout } : {}),
  }).catch((err: unknown) => {
    // A spawn that fails (EMFILE, ENOENT) rejects; git missing is the patch's to say.
    throw errnoCode(err) === "ENOENT" ? new ChangesUnavailable("git was not found on PATH: changes.patch needs git") : err;
  });
  if (ran.code === 0) return ran.stdout;
  throw new ChangesUnavailable(`git ${args[0]} ${ran.code === null ? `was killed (${ran.signal})` : `exited ${ran.code}`}: ${ran.stderr.trim().slice(0, STDERR_CHARS) || "no message"}`);
}
