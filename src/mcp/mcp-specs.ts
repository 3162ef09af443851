/**
 * What a server's `tools/list` becomes (pure): each tool as a rhema `ToolSpec` named
 * `mcp__<server>__<tool>`, sorted by name, so the request's tool list — the built-ins first, then
 * these — is the same bytes on every run and resume; a tool rhema cannot use (a name a model API
 * refuses, an input schema that is not a JSON Schema object rhema compiles) is an `mcp_invalid`
 * error naming the server and the tool, never a crash. And the comparison a resume makes against
 * the specs the session stamped (`changedServers`).
 */
import { compileInputChecks } from "../core/tool-input/tool-input-check.js";
import { errorMessage } from "../core/errors.js";
import type { ToolSpec } from "../core/tool.js";
import { McpError } from "./mcp-errors.js";

/** The prefix every MCP tool's name starts with. */
export const MCP_TOOL_PREFIX = "mcp__";
/** Tool names the model APIs take: letters, digits, `_` and `-`, at most 64 characters. */
const API_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `mcp__<server>__<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}__${tool}`;
}

/** One listed tool: its spec, and the name the server knows it by. */
export interface McpToolSpec {
  spec: ToolSpec;
  /** The tool's name on its server. */
  remoteName: string;
}

/** The server's listed tools as specs, sorted by name; `mcp_invalid` for the first one rhema cannot use. */
export function toolSpecsOf(server: string, listed: readonly unknown[]): McpToolSpec[] {
  const specs: McpToolSpec[] = [];
  const invalid = (tool: string, why: string, cause?: unknown): McpError =>
    new McpError("mcp_invalid", server, `the MCP server ${server} offers the tool ${JSON.stringify(tool)}, which rhema cannot use: ${why}`, { cause });
  for (const [index, raw] of listed.entries()) {
    const tool = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    if (typeof tool.name !== "string" || tool.name === "") throw invalid(`#${index + 1}`, "it has no name");
    const name = mcpToolName(server, tool.name);
    if (!API_TOOL_NAME.test(name)) throw invalid(tool.name, `its name as rhema gives it, ${name}, is not letters, digits, _ and - up to 64 characters`);
    if (specs.some((s) => s.spec.name === name)) throw invalid(tool.name, "the server lists two tools of that name");
    const schema = tool.inputSchema;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw invalid(tool.name, "its inputSchema is not a JSON Schema object");
    if ((schema as Record<string, unknown>).type !== "object") throw invalid(tool.name, `its inputSchema's type is ${JSON.stringify((schema as Record<string, unknown>).type)}, not "object"`);
    const spec: ToolSpec = { name, description: typeof tool.description === "string" ? tool.description : "", inputSchema: schema as Record<string, unknown> };
    try {
      compileInputChecks([spec]);
    } catch (err) {
      throw invalid(tool.name, errorMessage(err), err);
    }
    specs.push({ spec, remoteName: tool.name });
  }
  return specs.sort((a, b) => (a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0));
}

/**
 * The servers whose specs now differ from those `stamped` at the first turn (a server added or
 * gone counts), sorted. Compared as JSON text: key order included, as the request carries them.
 */
export function changedServers(stamped: Readonly<Record<string, readonly ToolSpec[]>>, now: Readonly<Record<string, readonly ToolSpec[]>>): string[] {
  const names = new Set([...Object.keys(stamped), ...Object.keys(now)]);
  return [...names].filter((name) => JSON.stringify(stamped[name] ?? null) !== JSON.stringify(now[name] ?? null)).sort();
}
