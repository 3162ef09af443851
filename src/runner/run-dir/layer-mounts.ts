/**
 * A layered workspace's mount (issue 24 (b)): a trial's `workspace/` is an overlay of a read-only
 * base (`prepared/<hash>/workspace/`) and the trial's own layer (`layer/upper/`, with the overlay's
 * `layer/work/`), mounted where the host sees it — the built-in tools run in rhema's own process —
 * by the kernel (`mount -t overlay`, as root) or by `fuse-overlayfs`.
 *
 * A mount outlives a SIGKILLed rhema. So every mount is written down in the run directory's
 * ledger, `mounts/<hash of the mount point>.json`, **before** it is made, and its entry is removed
 * only after it is gone: the next run, and `--restart`, unmount everything the ledger lists — and
 * any other mount found below the run directory — before they touch anything else
 * (`unmountLeftovers`). Removing a folder that holds a live mount would delete through it.
 *
 * Paths go to mount as one option string (`lowerdir=…,upperdir=…`), where `,` and `:` separate
 * options and layers: a run directory whose path holds them (or a newline or backslash) cannot be
 * mounted and the run uses copies (workspace-layers.ts says why).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { errnoCode, errorMessage } from "../../core/errors.js";
import { guardOutput } from "./output-guard.js";
import { PREPARED_DIR } from "./prepared-folder.js";

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
      const options = `lowerdir=${mount.lower},upperdir=${mount.upper},workdir=${mount.work}`;
      if (mount.kind === "overlay") await run("mount", ["-t", "overlay", "rhema-layer", "-o", options, mount.target]);
      else await run(this.fuseBinary, ["-o", options, mount.target]);
    } catch (err) {
      await rm(entry, { force: true }).catch(() => {});
      throw Object.assign(new Error(`cannot mount the layer at ${mount.target}: ${errorMessage(err)}`, { cause: err }), { code: errnoCode(err) ?? "EIO", path: mount.target });
    }
  }

  /** Unmounts the target if something is mounted there (lazily when busy), then drops its ledger entry. */
  async unmount(target: string): Promise<void> {
    const point = await canonical(target);
    if ((await mountPointsUnder(point)).includes(point)) await unmountPath(point);
    const entry = this.entryPath(target);
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
      const text = await readFile(join(this.ledger, name), "utf8").catch(() => null);
      const target = text === null ? null : await canonical(targetOf(text));
      if (target !== null && (await mountPointsUnder(target)).includes(target)) listed.push(target);
    }
    const gone: string[] = [];
    // Only where rhema mounts (trial workspaces, the probe in prepared/): never the run directory itself, which may be a volume.
    const root = await canonical(this.runDir);
    const scanned = [...(await mountPointsUnder(join(root, TASKS_DIR))), ...(await mountPointsUnder(join(root, PREPARED_DIR)))];
    for (const target of [...new Set([...scanned, ...listed])].sort().reverse()) {
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

function targetOf(text: string): string | null {
  try {
    const parsed = JSON.parse(text) as { target?: unknown };
    return typeof parsed.target === "string" ? parsed.target : null;
  } catch {
    return null; // a ledger entry torn by the kill: the scan of the mount table finds its mount
  }
}

/** Unmounts `target`: `umount` (root), `fusermount3 -u`/`fusermount -u` (a user's FUSE mount); lazily when busy. */
async function unmountPath(target: string): Promise<void> {
  const attempts: Array<[string, string[]]> = [["umount", [target]], ["fusermount3", ["-u", target]], ["fusermount", ["-u", target]], ["umount", ["-l", target]], ["fusermount3", ["-uz", target]]];
  const errors: string[] = [];
  for (const [command, args] of attempts) {
    try {
      await run(command, args);
      return;
    } catch (err) {
      errors.push(`${command} ${args.join(" ")}: ${errorMessage(err)}`);
      if (!(await mountPointsUnder(target)).includes(target)) return;
    }
  }
  throw Object.assign(new Error(`cannot unmount ${target}: ${errors.join("; ")}`), { code: "EBUSY", path: target });
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

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: MOUNT_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, _stdout, stderr) => {
      if (err === null) return resolve();
      const code = (err as NodeJS.ErrnoException).code;
      reject(Object.assign(new Error(`${command}: ${stderr.trim().split("\n").slice(0, 3).join("; ") || err.message}`, { cause: err }), { code: typeof code === "string" ? code : "EIO" }));
    });
  });
}
