/**
 * A task's workspace: copied fresh from `workspace.from` (or made empty) inside the task's
 * folder, then the `setup` commands run once. Only when every setup command has exited 0 is
 * the state marked `setupDone`; a run killed midway starts the workspace over, so a resume
 * never builds on a half-made one and never repeats a finished setup.
 */
import { RhemaError } from "../../core/errors.js";
import type { CommandRunner } from "./command-runner.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { TaskFolder } from "../run-dir/task-folder.js";
import type { TaskState } from "../run-dir/task-state.js";

export const SETUP_TIMEOUT_MS = 10 * 60_000;

export async function prepareWorkspace(
  task: TaskDefinition,
  folder: TaskFolder,
  state: TaskState,
  opts: { runCommand: CommandRunner; signal: AbortSignal },
): Promise<TaskState> {
  if (state.setupDone) return state;
  const workspace = await folder.resetWorkspace(task.workspace.from ?? null);
  for (const command of task.workspace.setup) {
    const outcome = await opts.runCommand({ command, cwd: workspace, timeoutMs: SETUP_TIMEOUT_MS, signal: opts.signal });
    if (opts.signal.aborted) throw new RhemaError("cancelled", "interrupted during setup");
    if (outcome.exitCode !== 0) {
      const why = outcome.timedOut ? "timed out" : `exited ${outcome.exitCode ?? "on a signal"}`;
      throw new RhemaError("setup_failed", `setup command \`${command}\` ${why}:\n${outcome.outputTail}`);
    }
  }
  const ready = { ...state, setupDone: true };
  await folder.writeState(ready);
  return ready;
}
