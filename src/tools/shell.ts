/**
 * The `shell` tool: one command line through `bash -c` in the workspace, stdin closed, stdout
 * and stderr interleaved and capped (head + tail), the exit code reported. A timeout or a
 * cancel kills the whole process tree (process-group.ts), and nothing it starts outlives rhema.
 * Given a sandbox placement, the command runs in the bubblewrap sandbox with the workspace as its
 * one writable folder (sandbox.ts); the spec does not change with it (it sits in every request's
 * cached prefix, which must stay byte-stable across resumes): the environment report of the
 * system prompt tells the model about the sandbox. With `ctx.onStarted`, the call's process group is reported
 * before the command runs. Commands start from the environment the caller hands in — the tool
 * never reads this process's own — with secret-looking variables removed unless the
 * configuration lets them through (secret-env.ts).
 */
import { CancelledError, ToolError } from "../core/errors.js";
import type { Tool, ToolContext, ToolPlan, ToolResult } from "../core/tool.js";
import { HeadTailBuffer } from "../process/capped-output.js";
import { runProcessGroup, type GroupOutcome } from "../process/process-group.js";
import type { SandboxPlacement } from "../process/sandbox.js";
import { scrubEnvironment } from "../process/secret-env.js";

/** The PATH of a shell started with no environment of the caller's. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export const SHELL_DEFAULT_TIMEOUT_MS = 120_000;
export const SHELL_MAX_TIMEOUT_MS = 600_000;
const SHELL_MIN_TIMEOUT_MS = 100;
/** Output kept from the start and from the end of what the command prints. */
export const SHELL_HEAD_BYTES = 12_000;
export const SHELL_TAIL_BYTES = 12_000;

/** Environment variables as a driver read them; an `undefined` value means unset. */
export type ShellEnv = Readonly<Record<string, string | undefined>>;

export interface ShellToolOptions {
  /**
   * The environment commands start from, before secrets are removed. Default: an empty one with
   * `DEFAULT_PATH` (bash's own fallback PATH ends in `.`, which would put the workspace's files on
   * it); a driver such as the CLI passes `process.env`.
   */
  env?: ShellEnv;
  /**
   * Run every command in the bubblewrap sandbox so placed (`network: false` unless the policy opens
   * it); the workspace is `ctx.workspace`. The caller checks `probeSandbox()` first. Default: unsandboxed.
   */
  sandbox?: SandboxPlacement;
}

interface ShellInput { command: string; timeoutMs: number }

function parse(input: unknown): ShellInput {
  // The input, as the schema below lets it through (the engine checked it).
  const { command, timeoutMs = SHELL_DEFAULT_TIMEOUT_MS } = input as { command: string; timeoutMs?: number };
  if (command.trim() === "") throw new ToolError("`command` is empty");
  return { command, timeoutMs };
}

export function shellTool(options: ShellToolOptions = {}): Tool {
  const baseEnv = options.env ?? { PATH: DEFAULT_PATH };
  return {
    spec: {
      name: "shell",
      description:
        "Run a command with bash -c in the workspace folder (stdin closed). Returns stdout and stderr interleaved, " +
        "the middle cut when long, and the exit code. Default timeout 120000 ms, most 600000; the command and " +
        "everything it started are killed at the timeout, and background processes when it ends. " +
        "Secret environment variables (tokens, keys, passwords) are not passed.",
      inputSchema: {
        type: "object",
        properties: {
          command: { type: "string", description: "The command line, run by bash." },
          timeoutMs: {
            type: "integer", minimum: SHELL_MIN_TIMEOUT_MS, maximum: SHELL_MAX_TIMEOUT_MS,
            description: "Time limit in milliseconds. Default 120000.",
          },
        },
        required: ["command"],
        additionalProperties: false,
      },
    },
    effect: "exec",
    // It spawns held and awaits ctx.onStarted with its process group before the command runs.
    reportsStart: true,
    async plan(input): Promise<ToolPlan> {
      return { paths: [], command: parse(input).command };
    },
    async run(input, ctx): Promise<ToolResult> {
      const { command, timeoutMs } = parse(input);
      if (ctx.signal.aborted) throw new CancelledError("shell: cancelled before the command started");
      const output = new HeadTailBuffer(SHELL_HEAD_BYTES, SHELL_TAIL_BYTES);
      const outcome = await runProcessGroup({
        command, cwd: ctx.workspace, env: commandEnv(baseEnv, ctx), timeoutMs, signal: ctx.signal,
        onOutput: (chunk) => output.push(chunk),
        ...(options.sandbox ? { sandbox: options.sandbox } : {}),
        ...(ctx.onStarted ? { onStarted: ctx.onStarted } : {}),
      });
      if (outcome.killed === "cancel") throw new CancelledError("shell: cancelled; the command and its processes were killed");
      return formatOutcome(output, outcome, timeoutMs);
    },
  };
}

function commandEnv(base: ShellEnv, ctx: ToolContext): Record<string, string> {
  return scrubEnvironment(base, ctx.allowEnv ?? []).env;
}

/** The output, then one bracketed line saying how the command ended. */
export function formatOutcome(output: HeadTailBuffer, outcome: GroupOutcome, timeoutMs: number): ToolResult {
  const text = output.totalBytes === 0 ? "(no output)" : output.text().replace(/\n$/, "");
  const status = outcome.killed === "timeout"
    ? `[timed out after ${timeoutMs} ms; the command and its child processes were killed]`
    : outcome.exitCode !== null ? `[exit code ${outcome.exitCode}]` : `[killed by ${outcome.exitSignal ?? "a signal"}]`;
  const strays = outcome.straysKilled ? "\n[processes it left running in the background were stopped]" : "";
  const failed = outcome.killed !== null || outcome.exitCode !== 0;
  return { content: `${text}\n${status}${strays}`, ...(failed ? { isError: true } : {}) };
}
