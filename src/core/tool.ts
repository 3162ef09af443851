/**
 * The tool port. Built-in tools live in src/tools; `CodingAgentConfig.tools` can add or replace.
 */
import type { ContentBlock } from "./messages.js";

export interface ToolSpec {
  name: string;
  description: string;
  /**
   * JSON Schema (2020-12, or draft-07 when `$schema` says so) of the input object: compiled
   * when the tool set is assembled, and every call's input is validated against it.
   */
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
   * Given to a tool that `reportsStart`: it awaits this once, after it has spawned what it runs
   * (held, so nothing has happened yet) and before it lets it go. The engine commits the call's
   * `started` boundary with `info` inside it; a throw means the call must not go ahead.
   */
  onStarted?: (info: ProcessStart) => Promise<void>;
}

/** Where a started call's process group runs: enough to find it again after a kill, and only it. */
export interface ProcessStart {
  /** The host name the group runs on: a group recorded on another host is never signalled. */
  host: string;
  pgid: number;
  /** The group leader's start time as the process table gives it, so a reused pid is not mistaken for it. */
  startTime: number;
  /**
   * Where `pgid` means this group: the boot and pid namespace it was spawned in. A host name
   * alone does not tell (every container of a machine and every `unshare -p` may share it).
   * Absent where /proc cannot tell, and in checkpoints written before it was recorded.
   */
  pidScope?: PidScope;
}

/** One pid namespace on one boot of one machine: where a pid names one process. */
export interface PidScope {
  /** /proc/sys/kernel/random/boot_id. */
  bootId: string;
  /** readlink /proc/self/ns/pid, e.g. `pid:[4026531836]`. */
  pidNamespace: string;
}

export interface ToolResult {
  content: string | ContentBlock[];
  isError?: boolean;
}

/** What a call would touch, worked out before it runs, for the approval to judge. */
export interface ToolPlan {
  /**
   * Resolved paths, relative to the workspace, `/`-separated ("." is the root). For an
   * `effect: "write"` tool, every path the call may change: the fingerprint taken before it
   * starts covers those alone (a shell or `exec` call's covers the workspace).
   */
  paths: string[];
  /** For shell-like tools: the command line. */
  command?: string;
}

/**
 * Contract: the engine checks every call's input against `spec.inputSchema` before the tool
 * sees it (core/tool-input-check.ts), so `plan` and `run` get input that matches the schema,
 * with optional fields sent as `null` left out. `plan` (when present) makes the checks a schema
 * cannot (an empty command, a range across fields) and resolves the call's paths inside the
 * workspace, throwing `ToolError` for anything the model must correct (a path outside). `run`
 * does the work; a `ToolError` or any other throw becomes an error result the model reads.
 * `run` honours `ctx.signal`: on abort it stops, kills what it started, and throws.
 */
export interface Tool {
  spec: ToolSpec;
  effect: ToolEffect;
  /**
   * True for a tool that calls `ctx.onStarted` itself (the shell, once its process group exists).
   * For every other tool the engine commits `started` just before `run`.
   */
  reportsStart?: boolean;
  /**
   * True for a tool whose call ends the turn once its step's calls are answered (a structured
   * answer's `final_answer`): the loop returns instead of asking the model again, whatever the
   * call's result. The driver reads the outcome off the session.
   */
  endsTurn?: boolean;
  /**
   * The MCP server the tool comes from (its name is `mcp__<server>__<tool>`): the environment
   * report names the server, not each tool, and the session stamps its spec (`Session.mcpTools`).
   */
  server?: string;
  plan?(input: unknown, ctx: ToolContext): Promise<ToolPlan>;
  run(input: unknown, ctx: ToolContext): Promise<ToolResult>;
}
