/**
 * The port through which the runner runs shell commands of its own (setup and checks): bash in
 * a folder, output capped to its tail, a timeout and a signal that kill the whole process tree,
 * in the bubblewrap sandbox when the request places one, and never outliving rhema.
 */
import { realpath } from "node:fs/promises";
import { HeadTailBuffer } from "../../process/capped-output.js";
import { runProcessGroup } from "../../process/process-group.js";
import type { SandboxPlacement } from "../../process/sandbox.js";
import { scrubEnvironment } from "../../process/secret-env.js";

/** How much of a setup or check command's output is kept. */
export const OUTPUT_TAIL_BYTES = 4_000;

export interface CommandOutcome {
  /** null when the command was killed (timeout, cancel) before it exited. */
  exitCode: number | null;
  /** The last part of stdout+stderr interleaved. */
  outputTail: string;
  timedOut: boolean;
  durationMs: number;
}

export interface CommandRequest {
  command: string;
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Variables set for this command on top of the runner's scrubbed environment (e.g. RHEMA_FINAL_ANSWER). */
  env?: Readonly<Record<string, string>>;
  /**
   * Run in the bubblewrap sandbox so placed; `workspace` (default `cwd`) is the one writable folder.
   * Setup gets `network: true` (it installs), checks `network: false` unless the policy opens it.
   * Absent: unsandboxed.
   */
  sandbox?: SandboxPlacement & { workspace?: string };
}

export type CommandRunner = (req: CommandRequest) => Promise<CommandOutcome>;

/**
 * The real runner: bash -c in a process group of its own (src/process/process-group), the
 * environment scrubbed of secrets like the shell tool's, output kept as a tail.
 */
export function processCommandRunner(opts: {
  baseEnv: Readonly<Record<string, string | undefined>>;
  allowEnv?: readonly string[];
  tailBytes?: number;
}): CommandRunner {
  const env = scrubEnvironment(opts.baseEnv, opts.allowEnv ?? []).env;
  const tailBytes = opts.tailBytes ?? OUTPUT_TAIL_BYTES;
  return async (req) => {
    const started = Date.now();
    const output = new HeadTailBuffer(0, tailBytes);
    // In the sandbox, folders are bound by their real paths (a symlinked parent would misplace the bind).
    const cwd = req.sandbox ? await realpath(req.cwd) : req.cwd;
    const sandbox = req.sandbox ? { ...req.sandbox, workspace: await realpath(req.sandbox.workspace ?? req.cwd) } : null;
    const outcome = await runProcessGroup({
      command: req.command, cwd, env: { ...env, ...req.env }, timeoutMs: req.timeoutMs, signal: req.signal,
      onOutput: (chunk) => output.push(chunk),
      ...(sandbox ? { sandbox } : {}),
    });
    return {
      exitCode: outcome.killed ? null : outcome.exitCode,
      outputTail: output.text(),
      timedOut: outcome.killed === "timeout",
      durationMs: Date.now() - started,
    };
  };
}
