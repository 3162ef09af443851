/**
 * A layered workspace's mount (issue 24 (b)): a trial's `workspace/` is an overlay of a read-only
 * base (`prepared/<hash>/workspace/`) and the trial's own layer (`layer/upper/`, with the overlay's
 * `layer/work/`), mounted where the host sees it — the built-in tools run in rhema's own process —
 * by the kernel (`mount -t overlay`, as root — real root, or rhema's own user namespace's, where
 * the overlay takes `userxattr`: process/user-namespace.ts) or by `fuse-overlayfs`.
 *
 * A mount outlives a SIGKILLed rhema. So every mount is written down in the run directory's
 * ledger, `mounts/<hash of the mount point>.json`, **before** it is made, and its entry is removed
 * only after it is gone: the next run, and `--restart`, unmount everything the ledger lists — and
 * any other mount found below the run directory — before they touch anything else
 * (`unmountLeftovers`). Removing a folder that holds a live mount would delete through it.
 *
 * A layer at rest — unmounted: after its trial, after a kill once the next run unmounted it — holds
 * only files, folders and links: the overlay's deletions (whiteouts: character devices 0/0; and
 * folders made opaque by an xattr) do not survive the Actions cache's tar, nor a copy by a user
 * who is not root. So before the unmount the deletions are read from the merged view (each entry
 * of the base, in a folder the layer holds, that the view no longer shows), written to
 * `layer/deletions.json`, and the whiteouts removed after it; before the next mount they are made
 * again from the list (a whiteout for the kernel's overlay, a `.wh.` file for fuse-overlayfs).
 * A layer whose mount went without rhema (its mount namespace ended) still holds its whiteouts:
 * the next unmount of its ledger entry mounts it once more to list them the same way.
 *
 * Paths go to mount as one option string (`lowerdir=…,upperdir=…`), where `,` and `:` separate
 * options and layers: a run directory whose path holds them (or a newline or backslash) cannot be
 * mounted and the run uses copies (workspace-layers.ts says why).
 */
import { runOffThread, type OffThreadResult } from "../../process/off-thread-command.js";
import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { errnoCode, errorMessage, isMachineLimitErrno } from "../../core/errors.js";
import { guardOutput } from "./output-guard.js";
import { PREPARED_DIR } from "./prepared-folder.js";
import { inOwnUserNamespace } from "../../process/user-namespace.js";

/** The run directory's folder of trial folders (task-folder.ts's TASKS_DIR; named here to keep the import one-way). */
const TASKS_DIR = "tasks";

/** How a layer is mounted. */
export type MountKind = "overlay" | "fuse-overlayfs";

/** The run directory's ledger of live mounts. */
export const MOUNTS_DIR = "mounts";

/** One mount: its place and the layers it joins. */
export interface LayerMount {
  kind: MountKind;
  /** The read-only base (lowerdir). */
  lower: string;
  /** The layer that receives the writes (upperdir). */
  upper: string;
  /** The overlay's scratch folder, on the upper's file system (workdir). */
  work: string;
  /** Where the merged view appears: the trial's workspace. */
  target: string;
}

/** A path that mount's option string cannot carry, or null. */
export function unmountablePath(path: string): string | null {
  const bad = [...path].find((c) => c === "," || c === ":" || c === "\\" || c === "\n");
  return bad === undefined ? null : `its path ${path} holds ${JSON.stringify(bad)}, which mount options cannot carry`;
}

const MOUNT_TIMEOUT_MS = 60_000;

/** The ledger and the mount commands of one run directory. */
export class LayerMounts {
  constructor(private readonly runDir: string, private readonly fuseBinary: string = "fuse-overlayfs") {}

  private get ledger(): string {
    return join(this.runDir, MOUNTS_DIR);
  }

  private entryPath(target: string): string {
    return join(this.ledger, `${createHash("sha256").update(target).digest("hex").slice(0, 24)}.json`);
  }

  /**
   * Mounts `mount` (its layer's scratch folder emptied first; the upper and the target made when
   * missing), written in the ledger before. A mount that fails is removed from the ledger again
   * and thrown with mount's own words.
   */
  async mount(mount: LayerMount): Promise<void> {
    for (const path of [mount.lower, mount.upper, mount.work, mount.target]) {
      const why = unmountablePath(path);
      if (why !== null) throw Object.assign(new Error(`cannot mount a layer: ${why}`), { code: "EINVAL", path });
    }
    const entry = this.entryPath(mount.target);
    await guardOutput(this.ledger, "create", () => mkdir(this.ledger, { recursive: true, mode: 0o700 }));
    await guardOutput(entry, "write", () => writeFile(entry, JSON.stringify(mount) + "\n", { mode: 0o600 }));
    try {
      // The work folder must be empty and on the upper's file system; the overlay keeps nothing there between mounts.
      await rm(mount.work, { recursive: true, force: true });
      await mkdir(mount.work, { recursive: true, mode: 0o700 });
      await mkdir(mount.upper, { recursive: true, mode: 0o700 });
      await mkdir(mount.target, { recursive: true, mode: 0o700 });
      await restoreDeletions(mount);
      const options = `lowerdir=${mount.lower},upperdir=${mount.upper},workdir=${mount.work}`;
      // In rhema's own user namespace the overlay keeps its marks in user.* xattrs: trusted.* cannot be written there.
      if (mount.kind === "overlay") await run("mount", ["-t", "overlay", "rhema-layer", "-o", `${inOwnUserNamespace() ? "userxattr," : ""}${options}`, mount.target]);
      else await run(this.fuseBinary, ["-o", options, mount.target]);
    } catch (err) {
      await rm(entry, { force: true }).catch(() => {});
      throw Object.assign(new Error(`cannot mount the layer at ${mount.target}: ${errorMessage(err)}`, { cause: err }), { code: errnoCode(err) ?? "EIO", path: mount.target });
    }
  }

  /**
   * Unmounts the target if something is mounted there (lazily when busy), leaves the layer its
   * ledger entry names at rest (see the header: its deletions listed, its whiteouts removed), then
   * drops the entry.
   */
  async unmount(target: string, remount = true): Promise<void> {
    const entry = this.entryPath(target);
    let listed: string | null = null;
    try {
      listed = await readFile(entry, "utf8");
    } catch (err) {
      // No entry and no folder there (a trial's first start): nothing can be mounted, nothing is to be left at rest.
      if (errnoCode(err) === "ENOENT" && (await lstat(target).catch(() => null)) === null) return;
    }
    const layer = layerOf(listed);
    const point = await canonical(target);
    const mounted = (await mountPointsUnder(point)).includes(point);
    if (!mounted && remount && layer !== null && (await whiteoutsIn(layer.upper)).length > 0) {
      // Its mount went without rhema (the mount namespace it lived in ended, a reboot): its
      // whiteouts may be newer than its list, and at rest they must go. Mounted once more, its
      // deletions are read from the view as at any trial's end; where it cannot be mounted, it
      // keeps its whiteouts (a mount by the same means reads them).
      const mountedAgain = await this.mount({ ...layer, target }).then(() => true, () => false);
      if (mountedAgain) return this.unmount(target, false);
    }
    if (mounted) {
      if (layer) await recordDeletions({ ...layer, target: point });
      await unmountPath(point);
      // Only with the list just written: a layer found unmounted keeps its whiteouts (the list may be older than they are).
      if (layer) await removeWhiteouts(layer.upper);
      // The overlay's scratch folder keeps whiteouts of its own: emptied (each mount starts it afresh).
      if (layer) await guardOutput(layer.work, "remove", () => rm(layer.work, { recursive: true, force: true }));
    }
    await guardOutput(entry, "remove", () => rm(entry, { force: true }));
  }

  /**
   * What a killed run left mounted: every target in the ledger, and every other mount below the
   * run directory, unmounted (deepest first); the ledger emptied. Returns the places unmounted.
   */
  async unmountLeftovers(): Promise<string[]> {
    // The ledger's targets lie below the run directory, where the scan finds them too; a target
    // listed elsewhere (a run directory moved since) is unmounted as well when it is live.
    const listed: string[] = [];
    for (const name of await readdir(this.ledger).catch(() => [] as string[])) {
      const layer = layerOf(await readFile(join(this.ledger, name), "utf8").catch(() => null));
      if (layer === null) continue;
      // Each listed layer left at rest, as its trial's end would have.
      await this.unmount(layer.target);
      listed.push(layer.target);
    }
    const gone: string[] = [...listed];
    // Only where rhema mounts (trial workspaces, the probe in prepared/): never the run directory itself, which may be a volume.
    const root = await canonical(this.runDir);
    const scanned = [...(await mountPointsUnder(join(root, TASKS_DIR))), ...(await mountPointsUnder(join(root, PREPARED_DIR)))];
    // What the ledger did not list (a torn entry): unmounted as it is.
    for (const target of scanned.sort().reverse()) {
      if (!(await mountPointsUnder(target)).includes(target)) continue;
      await unmountPath(target);
      gone.push(target);
    }
    await guardOutput(this.ledger, "remove", () => rm(this.ledger, { recursive: true, force: true }));
    return gone.sort();
  }
}

/** `path` with its links resolved, as the mount table names it (itself when it cannot be resolved). */
async function canonical<P extends string | null>(path: P): Promise<P> {
  if (path === null) return path;
  return (await realpath(path).catch(() => path)) as P;
}

/** The layer a ledger entry names, or null (none, or torn by a kill: the scan of the mount table finds its mount). */
function layerOf(text: string | null): LayerMount | null {
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as Partial<Record<keyof LayerMount, unknown>>;
    const { kind, lower, upper, work, target } = parsed;
    if (kind !== "overlay" && kind !== "fuse-overlayfs") return null;
    return typeof lower === "string" && typeof upper === "string" && typeof work === "string" && typeof target === "string" ? { kind, lower, upper, work, target } : null;
  } catch {
    return null;
  }
}

/** Unmounts `target`: `umount` (root), `fusermount3 -u`/`fusermount -u` (a user's FUSE mount); lazily when busy. */
async function unmountPath(target: string): Promise<void> {
  const attempts: Array<[string, string[]]> = [["umount", [target]], ["fusermount3", ["-u", target]], ["fusermount", ["-u", target]], ["umount", ["-l", target]], ["fusermount3", ["-uz", target]]];
  const failures: Array<{ attempt: string; error: unknown }> = [];
  for (const [command, args] of attempts) {
    try {
      await run(command, args);
      return;
    } catch (error) {
      failures.push({ attempt: `${command} ${args.join(" ")}`, error });
      if (!(await mountPointsUnder(target)).includes(target)) return;
    }
  }
  throw unmountError(target, failures);
}

/**
 * Why `target` stayed mounted: busy (EBUSY), unless an attempt could not even start for the
 * machine's limit (`spawn umount EMFILE`) — then that errno, its error the cause, so the run ends
 * as the machine's (exit 3) and the same command unmounts it later, not as a bad input (exit 2).
 */
export function unmountError(target: string, failures: ReadonlyArray<{ attempt: string; error: unknown }>): Error {
  const limited = failures.find(({ error }) => {
    const code = errnoCode(error);
    return code !== null && isMachineLimitErrno(code);
  })?.error;
  const message = `cannot unmount ${target}: ${failures.map(({ attempt, error }) => `${attempt}: ${errorMessage(error)}`).join("; ")}`;
  return Object.assign(new Error(message, limited === undefined ? undefined : { cause: limited }), { code: limited === undefined ? "EBUSY" : errnoCode(limited)!, path: target });
}

/**
 * The mount points at or below `root` in this process's mount table (`/proc/self/mountinfo`,
 * whose paths escape space, tab, newline and backslash as octal).
 */
export async function mountPointsUnder(root: string): Promise<string[]> {
  const table = await readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  const found: string[] = [];
  for (const line of table.split("\n")) {
    const field = line.split(" ")[4];
    if (field === undefined) continue;
    const point = field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    if (point === root || point.startsWith(root.endsWith("/") ? root : `${root}/`)) found.push(point);
  }
  return found;
}

/**
 * Runs a mount command to its end from the command thread (off-thread-command.ts: every trial's
 * start and end runs one, and a spawn on the main thread holds the other trials' work). A failure
 * is an Error with mount's own words and an errno-like `code` (the spawn's errno when it could not start).
 */
async function run(command: string, args: string[]): Promise<void> {
  let ran: OffThreadResult;
  try {
    ran = await runOffThread({ file: command, args, timeoutMs: MOUNT_TIMEOUT_MS, stderrChars: 4096 });
  } catch (err) {
    throw Object.assign(new Error(`${command}: ${errorMessage(err)}`, { cause: err }), { code: errnoCode(err) ?? "EIO" });
  }
  if (ran.code === 0) return;
  const why = ran.timedOut ? `timed out after ${MOUNT_TIMEOUT_MS} ms` : ran.code === null ? `killed (${ran.signal})` : `exited ${ran.code}`;
  throw Object.assign(new Error(`${command}: ${ran.stderr.trim().split("\n").slice(0, 3).join("; ") || why}`), { code: "EIO" });
}

/** The list of a layer's deletions at rest, beside its upper folder. */
export function deletionsPath(upper: string): string {
  return join(dirname(upper), "deletions.json");
}

/**
 * Every entry of the base that the merged view no longer shows, in a folder the layer holds (a
 * deletion always copies its folder up): relative paths, sorted. Read through the mount, so
 * neither whiteouts nor opaque folders need reading themselves.
 */
export async function listDeletions(layer: Pick<LayerMount, "lower" | "upper" | "target">): Promise<string[]> {
  const deleted: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const upperEntries = await readdir(join(layer.upper, rel), { withFileTypes: true }).catch(() => null);
    if (upperEntries === null) return;
    const lowerNames = await readdir(join(layer.lower, rel)).catch(() => [] as string[]);
    if (lowerNames.length > 0) {
      const shown = new Set(await readdir(join(layer.target, rel)).catch(() => [] as string[]));
      for (const name of lowerNames) if (!shown.has(name)) deleted.push(join(rel, name));
    }
    for (const entry of upperEntries) if (entry.isDirectory()) await walk(join(rel, entry.name));
  };
  await walk("");
  return deleted.sort();
}

/**
 * Every path a mounted layer can have changed: each entry it holds but folders (files, links,
 * whiteouts), each folder it holds where the base has a file or a link (made a folder: the base's
 * entry is gone), and each base entry the view no longer shows (`listDeletions`: also those an
 * opaque folder hides). Relative, sorted, unique.
 */
export async function layerPaths(layer: Pick<LayerMount, "lower" | "upper" | "target">): Promise<string[]> {
  const held: string[] = [];
  for (const entry of await readdir(layer.upper, { withFileTypes: true, recursive: true }).catch(() => [])) {
    const rel = relative(layer.upper, join(entry.parentPath, entry.name));
    if (!entry.isDirectory()) held.push(rel);
    else if ((await lstat(join(layer.lower, rel)).catch(() => null))?.isDirectory() === false) held.push(rel);
  }
  return [...new Set([...held, ...(await listDeletions(layer))])].sort();
}

async function recordDeletions(layer: Pick<LayerMount, "lower" | "upper" | "target">): Promise<void> {
  const path = deletionsPath(layer.upper);
  const deleted = await listDeletions(layer);
  await guardOutput(path, "write", () => writeFile(path, JSON.stringify({ version: 1, deleted }) + "\n", { mode: 0o600 }));
}

/** The whiteouts in a layer (character devices 0/0, fuse-overlayfs's `.wh.` files). */
async function whiteoutsIn(upper: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(upper, { withFileTypes: true, recursive: true }).catch(() => [])) {
    const path = join(entry.parentPath, entry.name);
    const whiteout = entry.isCharacterDevice() ? (await lstat(path).catch(() => null))?.rdev === 0 : entry.name.startsWith(".wh.") && entry.isFile();
    if (whiteout) found.push(path);
  }
  return found;
}

/** Removes the whiteouts from an unmounted layer. */
async function removeWhiteouts(upper: string): Promise<void> {
  for (const path of await whiteoutsIn(upper)) await guardOutput(path, "remove", () => rm(path, { force: true }));
}

/**
 * Makes the listed deletions again in a layer about to be mounted, where the layer shows no entry
 * of that name: a whiteout device for the kernel's overlay (rhema is root), a `.wh.NAME` file for
 * fuse-overlayfs. A list that cannot be read is an error naming it (a mount without it would bring
 * deleted files back).
 */
async function restoreDeletions(mount: LayerMount): Promise<void> {
  const path = deletionsPath(mount.upper);
  const text = await readFile(path, "utf8").catch((err: unknown) => {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  });
  if (text === null) return;
  let deleted: string[];
  try {
    const parsed = JSON.parse(text) as { deleted?: unknown };
    if (!Array.isArray(parsed.deleted) || !parsed.deleted.every((p) => typeof p === "string" && p !== "" && !p.split("/").includes(".."))) throw new Error("no list of relative paths");
    deleted = parsed.deleted as string[];
  } catch (err) {
    throw Object.assign(new Error(`${path}: not a layer's list of deletions (${errorMessage(err)}); remove the trial's folder or run with --restart`), { code: "EINVAL", path });
  }
  const devices: string[] = [];
  for (const rel of deleted) {
    const at = join(mount.upper, rel);
    if ((await lstat(at).catch(() => null)) !== null) continue;
    await mkdir(dirname(at), { recursive: true, mode: 0o700 });
    if (mount.kind === "overlay") devices.push(at);
    else await writeFile(join(dirname(at), `.wh.${basename(at)}`), "", { mode: 0o600 });
  }
  // One shell for every whiteout: Node has no mknod.
  if (devices.length > 0) await run("sh", ["-c", 'for p; do mknod "$p" c 0 0 || exit 1; done', "sh", ...devices]);
}
