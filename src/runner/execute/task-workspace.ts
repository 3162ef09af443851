/**
 * A task's workspace: copied fresh from `workspace.from`, cloned from `workspace.git` at its ref
 * (git-workspace.ts; the ref resolved on the trial's first run and recorded as `gitCommit`, so a
 * resume checks out the same commit), or made empty, inside the task's folder; then the `setup`
 * commands run in order, each exactly once. Every step is recorded in
 * the task's state before and after it runs (task-state.ts), so a resume picks up exactly where
 * a kill left it:
 *
 *   copy not recorded          → the workspace is made again (a half-made copy is replaced)
 *   command done               → never run again
 *   command started, not done  → it was interrupted and may have partly run: the workspace is
 *                                kept as it is and the command runs again (its `setup_start`
 *                                event says so), then the rest
 *
 * Setup commands should therefore tolerate running again after a partial run (`npm ci` does).
 *
 * Once the last command is done, the workspace is snapshot (workspace-changes.ts) — the base of
 * the trial's changes.patch — and only then is setup recorded done: a kill before that takes the
 * snapshot on resume (the agent has not started), a kill after it keeps it. A state whose setup
 * was done without a snapshot (an older rhema's) gets none: a snapshot taken then would hold the
 * agent's work, so that trial has no patch rather than a wrong one.
 * In the sandbox, setup runs like the shell tool and checks but with the host's network (it
 * installs dependencies).
 *
 * A task whose setup is shared (`workspace.shared`, shared-setup.ts) runs no command here: its
 * workspace is a copy of the prepared base, recorded copied once the copy is whole, then
 * snapshot as above — so its patch diffs against the base, without the setup's output.
 *
 * On a layered run (workspace-layers.ts) nothing is copied per trial: the base — the prepared
 * base of a shared setup, the fixture copied once into `prepared/`, or a git workspace's commit
 * cloned once there (its ref resolved and recorded first, as for a clone) — is mounted read-only
 * under a layer of the trial's own (layer-mounts.ts). The layer is recorded (`layer`) before the
 * first mount and the workspace recorded copied once mounted; a resume mounts the same layer
 * again over the same base (prepared anew when a restored cache left it out), whatever it had
 * done; the trial's end unmounts it (`unmountLayer`). A trial's setup commands run in its
 * mounted workspace: their output lands in its layer.
 */
import { RhemaError } from "../../core/errors.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { CommandRunner } from "./command-runner.js";
import type { RunnerEvent } from "../run-dir/runner-events.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { TaskFolder, TaskStateBook } from "../run-dir/task-folder.js";
import { setupFinished, setupStarted, type SetupRecords } from "../run-dir/task-state.js";
import type { PreparedFolder } from "../run-dir/prepared-folder.js";
import { changesSettings, type ChangesSettings } from "../tasks/changes-settings.js";
import { seedFixtureIndex, snapshotWorkspace, type ChangesPlace } from "./workspace-changes.js";
import type { GitSource } from "../tasks/git-source.js";
import { GitMirrors } from "./git-mirror.js";
import { cloneAtCommit } from "./git-workspace.js";
import type { LayerMounts } from "../run-dir/layer-mounts.js";

/** Each setup command's own limit (the task's `limits.timeout` covers them all as well). */
export const SETUP_TIMEOUT_MS = 10 * 60_000;

export interface SetupOptions {
  runCommand: CommandRunner;
  signal: AbortSignal;
  now: () => Date;
  onEvent?: (event: RunnerEvent) => void | Promise<void>;
  /** The task's sandbox for setup commands (the caller gives it `network: true`); absent: unsandboxed. */
  sandbox?: SandboxPlacement;
  /** The environment git runs with for the snapshot after setup (only its PATH); absent: no snapshot, so no changes.patch. */
  snapshotEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * For a task whose setup is shared: its prepared base, made (or awaited) once for every task
   * naming it; the trial's workspace is a copy of it. Absent: the task runs its own setup.
   */
  sharedBase?: () => Promise<PreparedFolder>;
  /** The run's mirrors of `workspace.git` repositories; absent: the trial's own handle on `<runDir>/git-mirrors`. */
  gitMirrors?: GitMirrors;
  /** rhema's own environment: a git workspace's URL is fetched with it (credentials, ssh); absent: empty. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** The run's layered workspaces; absent: every workspace is a copy. */
  layering?: WorkspaceLayering;
}

/** A layered run's way to make workspaces (workspace-layers.ts chose the mechanism). */
export interface WorkspaceLayering {
  mechanism: "overlay" | "fuse-overlayfs";
  mounts: LayerMounts;
  /** The base of a fixture with no shared setup, prepared once a run (shared-setup.ts). */
  fixtureBase(from: string): Promise<PreparedFolder>;
  /** The base of a git workspace at one commit: the mirror cloned once a run (shared-setup.ts). */
  gitBase(mirror: string, commit: string): Promise<PreparedFolder>;
}

export async function prepareWorkspace(task: TaskDefinition, folder: TaskFolder, book: TaskStateBook, opts: SetupOptions): Promise<void> {
  const sharedBase = usesSharedSetup(task) ? opts.sharedBase : undefined;
  const layerBase = layerBaseOf(task, sharedBase, opts.layering, () => gitBase(task.workspace.git!, folder, book, opts));
  // A layer made by an earlier run: mounted again, whatever the trial had done.
  if (book.current.layer !== null && book.current.workspaceCopied) await remountLayer(folder, book, layerBase, opts.layering);
  if (book.current.setupDone) return;
  // The snapshot's index seeded from the fixture's, in this process only (a resume takes a whole snapshot).
  let seeded = false;
  // The snapshot when nothing can have changed the workspace since its index was seeded.
  let unchangedTree: string | undefined;
  // The fixture this process copied the workspace from: the snapshot stores none of its files (ChangesPlace.base).
  let copiedFrom: string | undefined;
  const from = task.workspace.from;
  if (!book.current.workspaceCopied) {
    // Nothing has run in it yet: a copy (or mount) cut short by a kill is simply made again.
    if (layerBase !== null) {
      const base = await layerBase();
      // Seeded from the base's own index (prepared/<hash>, which never changes once made), not the
      // fixture's, which may have changed since: so, while no setup command runs in the fresh
      // layer, the workspace is that index's tree. Staged from the base, not through the view: so
      // seeded while the layer is mounted (the snapshot's folder is the trial's, not the layer's).
      const seeding = opts.snapshotEnv !== undefined ? seedFixtureIndex(changesPlace(folder, opts.snapshotEnv, base.workspace), changesOf(task), base.workspace) : Promise.resolve(null);
      const [mounted, seedOutcome] = await Promise.allSettled([mountFreshLayer(folder, book, base, opts.layering!), seeding]);
      if (mounted.status === "rejected") throw mounted.reason;
      if (seedOutcome.status === "rejected") throw seedOutcome.reason;
      const seed = seedOutcome.value;
      seeded = seed !== null;
      if (seed?.tree != null && (sharedBase !== undefined || task.workspace.setup.length === 0)) unchangedTree = seed.tree;
      // Nothing runs in the fresh layer before the agent: mounted, snapshot and set up are one
      // record — durable with the checkpoint's first commit, before the agent's first request
      // (TaskStateBook); a power cut before it finds the layer not recorded as mounted, and
      // mounts it afresh.
      if (unchangedTree !== undefined) {
        const tree = unchangedTree;
        await book.update((s) => ({ ...s, workspaceCopied: true, changesBase: { tree }, setupDone: true }), "contents");
        return;
      }
    } else {
      await book.update((s) => ({ ...s, setup: [] }));
      if (sharedBase) {
        // The base is prepared once for every task naming it (shared-setup.ts); a failed one throws its setup's message.
        await (await sharedBase()).copyWorkspaceTo(folder.workspace);
      } else if (task.workspace.git) await cloneWorkspace(task.workspace.git, folder, book, opts);
      else {
        await folder.resetWorkspace(from ?? null);
        if (opts.snapshotEnv !== undefined && from != null) {
          seeded = (await seedFixtureIndex(changesPlace(folder, opts.snapshotEnv, from), changesOf(task), from)) !== null;
          if (seeded) copiedFrom = from;
        }
      }
    }
    await book.update((s) => ({ ...s, workspaceCopied: true }));
  }
  if (!sharedBase) await runSetupCommands(task, folder.workspace, book, opts);
  if (opts.snapshotEnv && book.current.changesBase === null) {
    const baseWorkspace = book.current.layer === null ? copiedFrom : folder.preparedWorkspace(book.current.layer.base);
    const place = changesPlace(folder, opts.snapshotEnv, baseWorkspace);
    // A resumed layered trial is seeded too: its base never changes, so its index is a true stat cache of the view.
    if (!seeded && book.current.layer !== null && baseWorkspace !== undefined) seeded = (await seedFixtureIndex(place, changesOf(task), baseWorkspace)) !== null;
    const base = await snapshotWorkspace(place, changesOf(task), { seeded, ...(unchangedTree !== undefined ? { unchangedTree } : {}) });
    await book.update((s) => ({ ...s, changesBase: base }));
  }
  await book.update((s) => ({ ...s, setupDone: true }));
}

/** Where a layered trial's base comes from: its shared setup's, its git commit's, or its fixture's; null when the workspace is not layered. */
function layerBaseOf(task: TaskDefinition, sharedBase: SetupOptions["sharedBase"], layering: WorkspaceLayering | undefined, gitBase: () => Promise<PreparedFolder>): (() => Promise<PreparedFolder>) | null {
  if (layering === undefined) return null;
  if (task.workspace.git !== undefined) return gitBase;
  if (sharedBase) return sharedBase;
  const from = task.workspace.from;
  return from == null ? null : () => layering.fixtureBase(from);
}

/**
 * A new layer over `base`, no setup run in it: recorded first (a kill after the mount leaves it in
 * the ledger and the state), then mounted. The record needs no folder sync: a power cut that takes
 * it back takes the mount too.
 */
async function mountFreshLayer(folder: TaskFolder, book: TaskStateBook, base: PreparedFolder, layering: WorkspaceLayering): Promise<void> {
  await layering.mounts.unmount(folder.workspace);
  await folder.removeWorkspaceAndLayer();
  await book.update((s) => ({ ...s, setup: [], layer: { base: base.hash, mechanism: layering.mechanism } }), "contents");
  await layering.mounts.mount({ kind: layering.mechanism, lower: base.workspace, upper: folder.layerUpper, work: folder.layerWork, target: folder.workspace });
}

/**
 * The trial's layer mounted again over its base. The base is prepared again when it is missing
 * (a restored Actions cache holds no `prepared/`); a fixture that changed since is another base,
 * recorded. A run that cannot mount (copy) cannot resume a layered trial: an error saying so.
 */
async function remountLayer(folder: TaskFolder, book: TaskStateBook, layerBase: (() => Promise<PreparedFolder>) | null, layering: WorkspaceLayering | undefined): Promise<void> {
  const layer = book.current.layer!;
  if (layering === undefined || layerBase === null || layering.mechanism !== layer.mechanism) {
    throw new RhemaError("workspace_missing", `${folder.name}: its workspace is a layer mounted with ${layer.mechanism}, which this run cannot mount (${layering ? `it mounts with ${layering.mechanism}` : "it copies workspaces"}); resume it with --workspace-layers ${layer.mechanism} where that works (as the run that started it), or start it over with --restart`);
  }
  const base = await layerBase();
  if (base.hash !== layer.base) await book.update((s) => ({ ...s, layer: { base: base.hash, mechanism: layer.mechanism } }));
  await layering.mounts.unmount(folder.workspace);
  await layering.mounts.mount({ kind: layer.mechanism, lower: base.workspace, upper: folder.layerUpper, work: folder.layerWork, target: folder.workspace });
}

/** Unmounts a layered trial's workspace (its layer stays, for a resume and the disk figure); nothing for a copied one. */
export async function unmountLayer(folder: TaskFolder, book: TaskStateBook, layering: WorkspaceLayering | undefined): Promise<void> {
  if (book.current.layer === null) return;
  await (layering?.mounts ?? null)?.unmount(folder.workspace);
}

/** Whether the task's setup is shared (`workspace.shared` with commands to share). */
export function usesSharedSetup(task: TaskDefinition): boolean {
  // A git workspace is a clone a trial makes of its own (git-mirror.ts): its setup runs per trial.
  return task.workspace.shared === true && task.workspace.setup.length > 0 && task.workspace.git === undefined;
}

/** Where setup records are kept and written: a trial's state book, or a shared setup's. */
export interface SetupBook<S extends SetupRecords> {
  readonly current: S;
  update(change: (state: S) => S): Promise<S>;
}

/**
 * The task's setup commands run in `cwd` from their records in `book` (see the header): a done
 * one is passed over, an interrupted one runs again; a failure is `setup_failed` with its output tail.
 */
export async function runSetupCommands<S extends SetupRecords>(
  task: Pick<TaskDefinition, "workspace" | "env">, cwd: string, book: SetupBook<S>, opts: Omit<SetupOptions, "snapshotEnv" | "sharedBase">,
): Promise<void> {
  const at = () => opts.now().toISOString();
  const commands = task.workspace.setup;
  for (const [index, command] of commands.entries()) {
    const record = book.current.setup[index];
    if (record?.status === "done" && record.command === command) continue;
    const rerun = record?.status === "started" && record.command === command ? "interrupted" as const : null;
    await book.update((s) => setupStarted(s, index, command, at()));
    await opts.onEvent?.({ type: "setup_start", index, total: commands.length, command, rerun });
    const outcome = await opts.runCommand({
      command, cwd, timeoutMs: SETUP_TIMEOUT_MS, signal: opts.signal, ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
      // A matrix cell's `env` values (checked not to look secret when the matrix file loaded).
      ...(task.env ? { env: task.env } : {}),
    });
    if (opts.signal.aborted) throw new RhemaError("cancelled", "interrupted during setup");
    await opts.onEvent?.({ type: "setup_end", index, total: commands.length, command, exitCode: outcome.exitCode, timedOut: outcome.timedOut, durationMs: Math.round(outcome.durationMs) });
    if (outcome.exitCode !== 0) {
      const why = outcome.timedOut ? "timed out" : `exited ${outcome.exitCode ?? "on a signal"}`;
      const partly = rerun ? " (run again after it was interrupted by a kill; it may have partly run before)" : "";
      throw new RhemaError("setup_failed", `setup command \`${command}\`${partly} ${why}:\n${outcome.outputTail}`);
    }
    await book.update((s) => setupFinished(s, index, at()));
  }
}


/** A layered git workspace's base: its ref resolved once and recorded (as for a clone), the commit's clone prepared once a run. */
async function gitBase(git: GitSource, folder: TaskFolder, book: TaskStateBook, opts: SetupOptions): Promise<PreparedFolder> {
  const mirrors = opts.gitMirrors ?? new GitMirrors(folder.gitMirrorsDir, opts.hostEnv ?? {});
  const { mirror, commit } = await mirrors.commitFor(git, book.current.gitCommit);
  if (book.current.gitCommit !== commit) await book.update((s) => ({ ...s, gitCommit: commit }));
  return opts.layering!.gitBase(mirror, commit);
}

/** A git workspace: its ref resolved once and recorded before the clone, so a resume checks out the same commit. */
async function cloneWorkspace(git: GitSource, folder: TaskFolder, book: TaskStateBook, opts: SetupOptions): Promise<void> {
  const mirrors = opts.gitMirrors ?? new GitMirrors(folder.gitMirrorsDir, opts.hostEnv ?? {});
  const { mirror, commit } = await mirrors.commitFor(git, book.current.gitCommit);
  if (book.current.gitCommit !== commit) await book.update((s) => ({ ...s, gitCommit: commit }));
  await cloneAtCommit(mirror, commit, folder.workspace, opts.hostEnv ?? {});
}

/** Where the trial's snapshot and patch live (task-folder.ts names the folders). */
export function changesPlace(folder: TaskFolder, hostEnv: Readonly<Record<string, string | undefined>>, base?: string): ChangesPlace {
  return { workspace: folder.workspace, gitDir: folder.changesGitDir, objectsDir: folder.changesObjectsDir, fixtureIndexesDir: folder.fixtureIndexesDir, hostEnv, ...(base !== undefined ? { base } : {}) };
}

/** The task's changes settings, defaults applied. */
export function changesOf(task: TaskDefinition): ChangesSettings {
  return task.workspace.changes ?? changesSettings(undefined);
}
