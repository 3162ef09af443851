/**
 * One connection to one MCP server through the official SDK's client, loaded lazily (a run whose
 * tasks name no server never loads it; the CLI bundle keeps it in chunks of its own): started —
 * a stdio server spawned (stdio-server.ts), an HTTP one reached — initialised and its tools
 * listed within the server's start-up timeout, else `mcp_start`. Tools are listed with a loose
 * result schema, so a tool the SDK's strict schema would reject (and with it the whole list) is
 * one rhema names (mcp-specs.ts) instead of a parse error.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { errorMessage } from "../core/errors.js";
import type { McpServerConfig } from "./mcp-config.js";
import { McpError } from "./mcp-errors.js";
import { spawnStdioServer, type StdioServer, type StdioServerPlace } from "./stdio-server.js";

/** What rhema tells servers it is. */
const CLIENT_INFO = { name: "rhema", version: "1" };
/** A tool call waits as long as the trial does (its own timeout and signal bound it). */
const CALL_TIMEOUT_MS = 2_147_483_647;

/** A call's answer as the server sent it (the MCP `CallToolResult`, loosely). */
export interface McpCallAnswer {
  content: unknown[];
  isError: boolean;
  structuredContent?: unknown;
}

export interface McpConnection {
  /** The tools as `tools/list` answered (every page), unchecked. */
  readonly listed: readonly unknown[];
  /** True once the server's process exited or its transport closed: a call now would fail. */
  isClosed(): boolean;
  /** Calls a tool. Throws what the SDK throws (a JSON-RPC error, a closed connection). */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallAnswer>;
  /** Closes the client and stops a stdio server's processes. Idempotent, never throws. */
  close(): Promise<void>;
}

/** Starts `config`'s server and lists its tools, within its start-up timeout (`mcp_start` when not). */
export async function connectMcpServer(config: McpServerConfig, place: StdioServerPlace, signal: AbortSignal): Promise<McpConnection> {
  const sdk = await loadSdk();
  let stdio: StdioServer | null = null;
  let closed = false;
  const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
  client.onclose = () => void (closed = true);
  client.onerror = () => {}; // a bad line or a failed send surfaces as the request's own failure
  const close = async (): Promise<void> => {
    closed = true;
    await client.close().catch(() => {});
    await stdio?.stop().catch(() => {});
  };
  const started = (async () => {
    let transport: Transport;
    if (config.kind === "stdio") {
      stdio = await spawnStdioServer(config, place);
      void stdio.exited.then(() => void (closed = true));
      transport = stdio.transport;
    } else {
      transport = new sdk.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } } });
    }
    await client.connect(transport, { timeout: config.startTimeoutMs });
    return await listAllTools(client, sdk.ResultSchema, config.startTimeoutMs);
  })();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`it did not answer within ${config.startTimeoutMs / 1000} s (startTimeout)`)), config.startTimeoutMs);
  });
  const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
  let listed: unknown[];
  try {
    listed = await Promise.race([started, timedOut, aborted]);
  } catch (err) {
    started.catch(() => {});
    await close();
    if (signal.aborted) throw signal.reason;
    const tail = (stdio as StdioServer | null)?.stderrTail() ?? "";
    throw new McpError("mcp_start", config.name,
      `the MCP server ${config.name} did not start: ${errorMessage(err)}${tail === "" ? "" : `; its stderr ends: ${tail}`}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
  return {
    listed,
    isClosed: () => closed,
    async callTool(name, args, callSignal) {
      const answer = await client.callTool({ name, arguments: args }, undefined, { signal: callSignal, timeout: CALL_TIMEOUT_MS });
      return {
        content: Array.isArray(answer.content) ? answer.content : [],
        isError: answer.isError === true,
        ...(answer.structuredContent !== undefined ? { structuredContent: answer.structuredContent } : {}),
      };
    },
    close,
  };
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** The SDK's client side, imported at the first server's start. */
async function loadSdk() {
  const [{ Client }, { StreamableHTTPClientTransport }, { ResultSchema }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return { Client, StreamableHTTPClientTransport, ResultSchema };
}

/** Every page of `tools/list`, each tool as sent (checked by mcp-specs.ts, not by the SDK). */
async function listAllTools(client: Client, resultSchema: Sdk["ResultSchema"], timeoutMs: number): Promise<unknown[]> {
  const tools: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, resultSchema, { timeout: timeoutMs }) as Record<string, unknown>;
    if (Array.isArray(result.tools)) tools.push(...(result.tools as unknown[]));
    cursor = typeof result.nextCursor === "string" && result.nextCursor !== "" ? result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return tools;
}
