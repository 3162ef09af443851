/**
 * A task's workspace: copied fresh from `workspace.from` (or made empty) inside the task's
 * folder, then the `setup` commands run in order, each exactly once. Every step is recorded in
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
 */
import { RhemaError } from "../../core/errors.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import type { CommandRunner } from "./command-runner.js";
import type { RunnerEvent } from "../run-dir/runner-events.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { TaskFolder, TaskStateBook } from "../run-dir/task-folder.js";
import { setupFinished, setupStarted } from "../run-dir/task-state.js";
import { changesSettings, type ChangesSettings } from "../tasks/changes-settings.js";
import { seedFixtureIndex, snapshotWorkspace, type ChangesPlace } from "./workspace-changes.js";

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
}

export async function prepareWorkspace(task: TaskDefinition, folder: TaskFolder, book: TaskStateBook, opts: SetupOptions): Promise<void> {
  if (book.current.setupDone) return;
  const at = () => opts.now().toISOString();
  // The snapshot's index seeded from the fixture's, in this process only (a resume takes a whole snapshot).
  let seeded = false;
  if (!book.current.workspaceCopied) {
    // Nothing has run in it yet: a copy cut short by a kill is simply made again.
    await book.update((s) => ({ ...s, setup: [] }));
    await folder.resetWorkspace(task.workspace.from ?? null);
    seeded = opts.snapshotEnv !== undefined && task.workspace.from != null
      && (await seedFixtureIndex(changesPlace(folder, opts.snapshotEnv), changesOf(task), task.workspace.from));
    await book.update((s) => ({ ...s, workspaceCopied: true }));
  }
  const commands = task.workspace.setup;
  for (const [index, command] of commands.entries()) {
    const record = book.current.setup[index];
    if (record?.status === "done" && record.command === command) continue;
    const rerun = record?.status === "started" && record.command === command ? "interrupted" as const : null;
    await book.update((s) => setupStarted(s, index, command, at()));
    await opts.onEvent?.({ type: "setup_start", index, total: commands.length, command, rerun });
    const outcome = await opts.runCommand({
      command, cwd: folder.workspace, timeoutMs: SETUP_TIMEOUT_MS, signal: opts.signal, ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
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
  if (opts.snapshotEnv && book.current.changesBase === null) {
    const base = await snapshotWorkspace(changesPlace(folder, opts.snapshotEnv), changesOf(task), { seeded });
    await book.update((s) => ({ ...s, changesBase: base }));
  }
  await book.update((s) => ({ ...s, setupDone: true }));
}


/** Where the trial's snapshot and patch live (task-folder.ts names the folders). */
export function changesPlace(folder: TaskFolder, hostEnv: Readonly<Record<string, string | undefined>>): ChangesPlace {
  return { workspace: folder.workspace, gitDir: folder.changesGitDir, objectsDir: folder.changesObjectsDir, fixtureIndexesDir: folder.fixtureIndexesDir, hostEnv };
}

/** The task's changes settings, defaults applied. */
export function changesOf(task: TaskDefinition): ChangesSettings {
  return task.workspace.changes ?? changesSettings(undefined);
}
