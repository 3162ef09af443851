/**
 * Layered workspaces (issue 24 (b)): which mechanism makes the run's workspaces, chosen once a run
 * by trying it (`--workspace-layers auto|overlay|fuse-overlayfs|copy`, default auto):
 *
 *   overlay          the kernel's overlayfs, mounted by rhema as real root (a CI container job), or
 *                    as the root of a user namespace it started itself in where it is not root
 *                    (process/user-namespace.ts; the run's first line says so)
 *   fuse-overlayfs   the same in user space (the Debian package; /dev/fuse and fusermount3 usable)
 *   copy             each trial's workspace a copy of its base (fixture-copy.ts): where neither
 *                    mounts — not root, no fuse-overlayfs, a run directory on a file system
 *                    overlayfs cannot take an upper layer on (an overlay root), or a run
 *                    directory path mount options cannot carry
 *
 * `auto` tries them in that order and says why each earlier one was passed over; naming one
 * that does not work is exit 2 with the reason. The probe mounts a two-file overlay inside
 * `prepared/` (the run directory's own file system), writes through it and checks what the host
 * sees: the merged view, the write in the upper layer, the base untouched; it unmounts and
 * removes it (~20 ms).
 *
 * The mechanism is a fact of the machine, not of the task: it goes in result.json and stats.json,
 * never into the model's environment report, whose bytes stay the same wherever a run resumes.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError, errorMessage } from "../../core/errors.js";
import { LayerMounts, unmountablePath, type MountKind } from "../run-dir/layer-mounts.js";
import { PREPARED_DIR } from "../run-dir/prepared-folder.js";

export const WORKSPACE_LAYER_CHOICES = ["auto", "overlay", "fuse-overlayfs", "copy"] as const;
export type WorkspaceLayersChoice = (typeof WORKSPACE_LAYER_CHOICES)[number];

/** How the run's workspaces are made: a mount of a layer over a shared base, or a copy (with why). */
export type WorkspaceMechanism =
  | { kind: MountKind }
  | { kind: "copy"; reason: string };

export interface ProbeOptions {
  /** The effective user id (0: root may mount overlayfs). */
  uid: number;
  /** Where fuse-overlayfs is, when on PATH; null: not installed. */
  fuseBinary: string | null;
}

/** The mechanism for `choice` on this machine and run directory (see the header). */
export async function chooseWorkspaceMechanism(runDir: string, choice: WorkspaceLayersChoice, probe: ProbeOptions): Promise<WorkspaceMechanism> {
  if (choice === "copy") return { kind: "copy", reason: "--workspace-layers copy" };
  const kinds: MountKind[] = choice === "auto" ? ["overlay", "fuse-overlayfs"] : [choice];
  const passed: string[] = [];
  for (const kind of kinds) {
    const why = await mountRefusal(runDir, kind, probe);
    if (why === null) return { kind };
    passed.push(`${kind}: ${why}`);
  }
  const reason = passed.join("; ");
  if (choice !== "auto") throw new RhemaError("usage", `--workspace-layers ${choice} cannot be used here (${reason}); use --workspace-layers auto or copy`);
  return { kind: "copy", reason };
}

/** Why `kind` cannot mount layers in `runDir` here, or null when a probe mount worked. */
async function mountRefusal(runDir: string, kind: MountKind, probe: ProbeOptions): Promise<string | null> {
  if (kind === "overlay" && probe.uid !== 0) return `needs real root (rhema runs as uid ${probe.uid}, outside a user namespace of its own: --sandbox off, or none here can mount an overlay and start bwrap)`;
  if (kind === "fuse-overlayfs" && probe.fuseBinary === null) return "not installed (no fuse-overlayfs on PATH)";
  const where = join(runDir, PREPARED_DIR, `.layer-probe-${process.pid}`);
  const badPath = unmountablePath(where);
  if (badPath !== null) return `the run directory cannot be mounted in: ${badPath}`;
  const mounts = new LayerMounts(runDir, probe.fuseBinary ?? undefined);
  const layer = { kind, lower: join(where, "lower"), upper: join(where, "upper"), work: join(where, "work"), target: join(where, "merged") };
  try {
    await mkdir(layer.lower, { recursive: true, mode: 0o700 });
    await writeFile(join(layer.lower, "base"), "base\n");
    await mounts.mount(layer);
    try {
      if ((await readFile(join(layer.target, "base"), "utf8")) !== "base\n") return "the probe's merged view did not show its base";
      await writeFile(join(layer.target, "written"), "layer\n");
      if ((await readFile(join(layer.upper, "written"), "utf8").catch(() => null)) !== "layer\n") return "a write through the probe's mount did not land in its layer";
      if ((await readFile(join(layer.lower, "written"), "utf8").catch(() => null)) !== null) return "a write through the probe's mount reached its base";
    } finally {
      await mounts.unmount(layer.target);
    }
    return null;
  } catch (err) {
    return `the probe mount failed: ${errorMessage(err).split("\n")[0]}`;
  } finally {
    await rm(where, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * How a run makes the workspaces laid over a base (a fixture, a shared setup, a git commit),
 * chosen once before any task starts: layers, or copies (`reason`: why, when auto fell back).
 */
export type RunWorkspaces =
  | { mechanism: "overlay" | "fuse-overlayfs"; reason: null; /** The host user's uid when rhema mounts as its own user namespace's root; else absent. */ userNamespaceOf?: number }
  | { mechanism: "copy"; reason: string | null };

/** As the run's first line says it: `overlay layers`, `overlay layers (in a user namespace of uid 1000)`, `copies (not root, …)`. */
export function describeWorkspaces(w: RunWorkspaces): string {
  if (w.mechanism === "copy") return `copies${w.reason !== null ? ` (${w.reason})` : ""}`;
  return `${w.mechanism} layers${w.userNamespaceOf !== undefined ? ` (in a user namespace of uid ${w.userNamespaceOf})` : ""}`;
}
