/**
 * A task's MCP servers as the trial starts them (`mcp:` in a task file, or a matrix cell's `mcp`
 * axis): each server's spec, and where each `${NAME}` reference of its env or headers is
 * written — file, line and field — for the planner's `--allow-env` check (exit 2 there).
 */
import type { SourcePosition } from "../../yaml-source/yaml-source.js";
import { DEFAULT_MCP_START_TIMEOUT_MS, referencedNames, type McpServerSpec } from "../../mcp/mcp-config.js";
import { parseDurationMs } from "./duration.js";
import type { TaskFileContent } from "./task-schema.js";

/** An MCP server as a task names it. */
export interface TaskMcpServer {
  spec: McpServerSpec;
  references: readonly McpReference[];
}

/** One `${NAME}` in an env or header value, where it is written. */
export interface McpReference extends SourcePosition {
  variable: string;
  file: string;
  /** `mcp.NAME.env.VAR` (a matrix's: `matrix.mcp.0.servers.NAME.env.VAR`). */
  field: string;
}

/** The servers of a checked `mcp:` mapping; `locate` gives the file and position of a key path under `prefix`. */
export function taskMcpServers(
  mcp: NonNullable<TaskFileContent["mcp"]>, prefix: readonly (string | number)[], locate: (path: (string | number)[]) => SourcePosition & { file: string },
): Record<string, TaskMcpServer> {
  return Object.fromEntries(Object.entries(mcp).map(([name, server]) => {
    const startTimeoutMs = server.startTimeout === undefined ? DEFAULT_MCP_START_TIMEOUT_MS : parseDurationMs(server.startTimeout)!;
    const [key, values] = "command" in server ? ["env", server.env ?? {}] as const : ["headers", server.headers ?? {}] as const;
    const references = Object.entries(values).flatMap(([field, value]) => referencedNames(value).map((variable) => {
      const path = [...prefix, name, key, field];
      return { variable, field: path.join("."), ...locate(path) };
    }));
    const spec: McpServerSpec = "command" in server
      ? { command: server.command, args: server.args ?? [], env: server.env ?? {}, startTimeoutMs }
      : { url: server.url, headers: server.headers ?? {}, startTimeoutMs };
    return [name, { spec, references }];
  }));
}
