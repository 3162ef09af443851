/**
 * The typed errors an MCP server ends a trial with, each naming the server: `mcp_start` (it did
 * not start or answer in time: retryable with --retry-errored), `mcp_changed` (its tool specs are
 * not the ones the checkpoint stamped), `mcp_crashed` (it crashed again after its one restart),
 * `mcp_invalid` (it offers a tool rhema cannot use: a bad name or input schema).
 */
import { RhemaError } from "../core/errors.js";

export type McpErrorCode = "mcp_start" | "mcp_changed" | "mcp_crashed" | "mcp_invalid";

export class McpError extends RhemaError {
  readonly server: string;
  constructor(code: McpErrorCode, server: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.server = server;
  }
}
