/**
 * A task's checks: each `run` command in the workspace, in order; the task passes when every
 * check exits 0. Output is kept as a tail, with secrets redacted.
 */
import type { CommandRunner } from "./command-runner.js";
import type { SecretRedactor } from "./secret-redactor.js";
import type { TaskDefinition } from "../tasks/task-file.js";
import type { CheckOutcome } from "../run-dir/task-result.js";

export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60_000;

export async function runChecks(
  task: TaskDefinition,
  workspace: string,
  opts: { runCommand: CommandRunner; signal: AbortSignal; redactor: SecretRedactor },
): Promise<CheckOutcome[]> {
  const outcomes: CheckOutcome[] = [];
  for (const check of task.checks) {
    if (opts.signal.aborted) break;
    const outcome = await opts.runCommand({ command: check.run, cwd: workspace, timeoutMs: check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS, signal: opts.signal });
    outcomes.push({
      name: check.name,
      command: check.run,
      exitCode: outcome.exitCode,
      passed: outcome.exitCode === 0,
      durationMs: Math.round(outcome.durationMs),
      outputTail: opts.redactor.redact(outcome.outputTail),
      timedOut: outcome.timedOut,
    });
  }
  return outcomes;
}
