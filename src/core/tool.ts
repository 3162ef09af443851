/**
 * The tool port. Built-in tools live in src/tools; `CodingAgentConfig.tools` can add or replace.
 */
import type { ContentBlock } from "./messages.js";

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
}

/** read: looks only; write: changes files; exec: runs commands. */
export type ToolEffect = "read" | "write" | "exec";

export interface ToolContext {
  /** The canonical (realpath) workspace root. */
  workspace: string;
  signal: AbortSignal;
  /** Environment variable names the shell may pass through despite looking secret. */
  allowEnv?: readonly string[];
  /**
   * Awaited by a tool that starts processes (the shell) once their process group exists and
   * before anything in it runs, e.g. to checkpoint the call as *started* with the group. `host` is
   * the machine's name; `startTime` is the leader's, from /proc/<pid>/stat field 22 (clock ticks
   * after boot), so a reused pid is told apart. If it throws, the tool kills the group (nothing
   * ran) and rethrows.
   */
  onStarted?: (info: { host: string; pgid: number; startTime: number }) => Promise<void>;
}

export interface ToolResult {
  content: string | ContentBlock[];
  isError?: boolean;
}

/** What a call would touch, worked out before it runs, for the approval to judge. */
export interface ToolPlan {
  /** Resolved paths, relative to the workspace, `/`-separated ("." is the root). */
  paths: string[];
  /** For shell-like tools: the command line. */
  command?: string;
}

/**
 * Contract: `plan` (when present) validates the input and resolves its paths inside the
 * workspace, throwing `ToolError` for anything the model must correct (a bad field, a path
 * outside). `run` does the work; a `ToolError` or any other throw becomes an error result the
 * model reads. `run` honours `ctx.signal`: on abort it stops, kills what it started, and throws.
 */
export interface Tool {
  spec: ToolSpec;
  effect: ToolEffect;
  plan?(input: unknown, ctx: ToolContext): Promise<ToolPlan>;
  run(input: unknown, ctx: ToolContext): Promise<ToolResult>;
}
