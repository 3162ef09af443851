/**
 * A task's workspace: copied fresh from `workspace.from` (or made empty) inside the task's
 * folder, then the `setup` commands run once. Only when every setup command has exited 0 is
 * the state marked `setupDone`; a run killed midway starts the workspace over, so a resume
 * never builds on a half-made one and never repeats a finished setup.
 */
import { cp, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../core/errors.js";
import type { CommandRunner } from "./command-runner.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import { writeTaskState, type TaskState } from "../run-dir/task-state.js";

export const SETUP_TIMEOUT_MS = 10 * 60_000;

export function workspaceOf(taskDir: string): string {
  return join(taskDir, "workspace");
}

export async function prepareWorkspace(
  task: TaskDefinition,
  taskDir: string,
  state: TaskState,
  opts: { runCommand: CommandRunner; signal: AbortSignal },
): Promise<TaskState> {
  if (state.setupDone) return state;
  const workspace = workspaceOf(taskDir);
  await rm(workspace, { recursive: true, force: true });
  if (task.workspace.from) await cp(task.workspace.from, workspace, { recursive: true, verbatimSymlinks: true });
  else await mkdir(workspace, { recursive: true });
  for (const command of task.workspace.setup) {
    const outcome = await opts.runCommand({ command, cwd: workspace, timeoutMs: SETUP_TIMEOUT_MS, signal: opts.signal });
    if (opts.signal.aborted) throw new RhemaError("cancelled", "interrupted during setup");
    if (outcome.exitCode !== 0) {
      const why = outcome.timedOut ? "timed out" : `exited ${outcome.exitCode ?? "on a signal"}`;
      throw new RhemaError("setup_failed", `setup command \`${command}\` ${why}:\n${outcome.outputTail}`);
    }
  }
  const ready = { ...state, setupDone: true };
  await writeTaskState(taskDir, ready);
  return ready;
}
