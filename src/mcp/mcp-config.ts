/**
 * An MCP server as a trial starts it (issue 27): a stdio server's command, arguments and
 * environment, or a streamable-HTTP server's URL and headers, with every `${NAME}` reference in
 * an env or header value already replaced by the value of an `--allow-env` variable. The task
 * file writes the references (so no secret sits in a task file or a run directory); the planner
 * checks each names an allowed variable (exit 2) and `resolveServerConfig` fills them in.
 * Pure: no I/O here.
 */
import { RhemaError } from "../core/errors.js";

/** How long a server may take to start and answer `initialize` and `tools/list` (`startTimeout`). */
export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;

/** A server name: it becomes part of tool names (`mcp__<server>__<tool>`), so no `__` inside. */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

/** The `${NAME}` references of a value: the only way an env or header value takes the environment. */
export const MCP_REFERENCE_PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A server as written in a task (references unresolved). */
export type McpServerSpec =
  | { command: string; args: readonly string[]; env: Readonly<Record<string, string>>; startTimeoutMs: number }
  | { url: string; headers: Readonly<Record<string, string>>; startTimeoutMs: number };

/** A server as a trial starts it: references replaced by their values. */
export type McpServerConfig =
  | { kind: "stdio"; name: string; command: string; args: readonly string[]; env: Readonly<Record<string, string>>; startTimeoutMs: number }
  | { kind: "http"; name: string; url: string; headers: Readonly<Record<string, string>>; startTimeoutMs: number };

/** The variable names a value refers to, in order. */
export function referencedNames(value: string): string[] {
  return [...value.matchAll(MCP_REFERENCE_PATTERN)].map((m) => m[1]!);
}

/**
 * `spec` with its references filled from `env` (the trial's environment, scrubbed but for the
 * `--allow-env` names). A reference to a variable `env` lacks is an `invalid_config` error naming
 * the server and the variable (the planner catches them first; this guards library callers).
 */
export function resolveServerConfig(name: string, spec: McpServerSpec, env: Readonly<Record<string, string>>): McpServerConfig {
  const fill = (field: string, value: string): string => value.replace(MCP_REFERENCE_PATTERN, (_, variable: string) => {
    const found = env[variable];
    if (found === undefined) {
      throw new RhemaError("invalid_config", `mcp.${name}.${field}: \${${variable}} is not a variable the run lets through; pass --allow-env ${variable} with the variable set`);
    }
    return found;
  });
  const filled = (field: string, values: Readonly<Record<string, string>>): Record<string, string> =>
    Object.fromEntries(Object.entries(values).map(([key, value]) => [key, fill(`${field}.${key}`, value)]));
  return "command" in spec
    ? { kind: "stdio", name, command: spec.command, args: spec.args, env: filled("env", spec.env), startTimeoutMs: spec.startTimeoutMs }
    : { kind: "http", name, url: spec.url, headers: filled("headers", spec.headers), startTimeoutMs: spec.startTimeoutMs };
}
