/**
 * A trial's MCP servers as tools: every server the task names started together (`startMcpToolset`,
 * `mcp_start` when one does not come up), each of its tools a rhema `Tool` — effect `exec` (a
 * started call is never run again on a resume; a server's `readOnlyHint` is not trusted), its
 * input checked by the engine against the server's schema, decided by the policy like a built-in
 * — and all of them stopped by `close()` at the trial's end.
 *
 * A server that dies during a call (its process exited, its HTTP endpoint gone) gives that call an
 * error result the model reads and is started again, once; a second crash ends the turn with
 * `mcp_crashed`. An error the server answers (a JSON-RPC error) is the call's error result.
 */
import type { ContentBlock, ImageMediaType } from "../core/messages.js";
import { IMAGE_MEDIA_TYPES } from "../core/messages.js";
import { errorMessage } from "../core/errors.js";
import type { Tool, ToolResult, ToolSpec } from "../core/tool.js";
import type { McpServerConfig } from "./mcp-config.js";
import { connectMcpServer, type McpCallAnswer, type McpConnection } from "./mcp-connection.js";
import { McpError } from "./mcp-errors.js";
import { toolSpecsOf, type McpToolSpec } from "./mcp-specs.js";
import type { StdioServerPlace } from "./stdio-server.js";
import { HeadTailBuffer } from "../process/capped-output.js";

/** The JSON-RPC code the SDK rejects pending requests with when the connection closes. */
const CONNECTION_CLOSED = -32000;

export interface McpToolset {
  /** Every server's tools, sorted by name (servers in name order). */
  readonly tools: readonly Tool[];
  /** Each server's specs, as the session stamps them. */
  readonly specs: Readonly<Record<string, ToolSpec[]>>;
  /** Stops every server. Idempotent, never throws. */
  close(): Promise<void>;
}

interface ServerState {
  config: McpServerConfig;
  connection: McpConnection;
  crashes: number;
}

/** Starts `servers` (in parallel) and lists their tools; when one fails, the others are stopped and its error thrown. */
export async function startMcpToolset(servers: readonly McpServerConfig[], place: StdioServerPlace, signal: AbortSignal): Promise<McpToolset> {
  const sorted = [...servers].sort((a, b) => (a.name < b.name ? -1 : 1));
  const started = await Promise.allSettled(sorted.map((config) => connectMcpServer(config, place, signal)));
  const states: ServerState[] = [];
  const close = async (): Promise<void> => void (await Promise.all(states.map((s) => s.connection.close())));
  started.forEach((outcome, i) => {
    if (outcome.status === "fulfilled") states.push({ config: sorted[i]!, connection: outcome.value, crashes: 0 });
  });
  const failed = started.find((outcome) => outcome.status === "rejected");
  let listed: { state: ServerState; specs: McpToolSpec[] }[];
  try {
    if (failed) throw failed.reason;
    listed = states.map((state) => ({ state, specs: toolSpecsOf(state.config.name, state.connection.listed) }));
  } catch (err) {
    await close();
    throw err;
  }
  const restart = (state: ServerState) => restartServer(state, place, signal);
  return {
    tools: listed.flatMap(({ state, specs }) => specs.map((spec) => mcpTool(state, spec, restart))),
    specs: Object.fromEntries(listed.map(({ state, specs }) => [state.config.name, specs.map((s) => s.spec)])),
    close,
  };
}

function mcpTool(state: ServerState, { spec, remoteName }: McpToolSpec, restart: (state: ServerState) => Promise<void>): Tool {
  const server = state.config.name;
  return {
    spec,
    effect: "exec",
    server,
    async run(input, ctx): Promise<ToolResult> {
      if (state.connection.isClosed()) {
        // It died between calls: started again (the crash counted) before this call goes to it.
        await crashed(state, restart, null);
      }
      let answer: McpCallAnswer;
      try {
        answer = await state.connection.callTool(remoteName, input as Record<string, unknown>, ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if (!isCrash(err, state)) return { content: `the MCP server ${server} answered with an error: ${errorMessage(err)}`, isError: true };
        await crashed(state, restart, err);
        const what = state.config.kind === "stdio" ? "exited during this call" : "dropped the connection during this call";
        const again = state.config.kind === "stdio" ? "the server was started again" : "rhema connected to it again";
        return { content: `the MCP server ${server} ${what}, so it may or may not have had its effect; ${again}: check before calling again`, isError: true };
      }
      return { content: resultContent(answer), ...(answer.isError ? { isError: true } : {}) };
    },
  };
}

/** Counts a crash: the first starts the server again, the second is `mcp_crashed`. */
async function crashed(state: ServerState, restart: (state: ServerState) => Promise<void>, cause: unknown): Promise<void> {
  state.crashes += 1;
  const server = state.config.name;
  if (state.crashes > 1) {
    await state.connection.close();
    throw new McpError("mcp_crashed", server, `the MCP server ${server} crashed again after it was restarted once${cause ? `: ${errorMessage(cause)}` : ""}`, { cause });
  }
  await restart(state);
}

async function restartServer(state: ServerState, place: StdioServerPlace, signal: AbortSignal): Promise<void> {
  await state.connection.close();
  try {
    state.connection = await connectMcpServer(state.config, place, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new McpError("mcp_crashed", state.config.name, `the MCP server ${state.config.name} crashed and did not start again: ${errorMessage(err)}`, { cause: err });
  }
}

/** A failure of the connection (the process gone, the endpoint unreachable), not an error the server answered. */
function isCrash(err: unknown, state: ServerState): boolean {
  if (state.connection.isClosed()) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code !== "number" || code === CONNECTION_CLOSED;
}

/**
 * How much of a call's text the model sees, as of a shell command's output (tools/shell.ts): the
 * first and last 12,000 bytes with a marker between, so one server's huge answer cannot fill the
 * context (images pass whole, as the read tool's do).
 */
export const MCP_TEXT_HEAD_BYTES = 12_000;
export const MCP_TEXT_TAIL_BYTES = 12_000;

/** `text` cut to its head and tail with the marker, when longer than both together. */
function cappedText(text: string): string {
  const buffer = new HeadTailBuffer(MCP_TEXT_HEAD_BYTES, MCP_TEXT_TAIL_BYTES);
  buffer.push(Buffer.from(text, "utf8"));
  return buffer.text();
}

/** The model's view of a call's answer: text (capped) and images as they are, anything else as JSON text. */
export function resultContent(answer: McpCallAnswer): string | ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const raw of answer.content) {
    const item = (raw ?? {}) as Record<string, unknown>;
    if (item.type === "text" && typeof item.text === "string") blocks.push({ type: "text", text: item.text });
    else if (item.type === "image" && typeof item.data === "string" && IMAGE_MEDIA_TYPES.includes(item.mimeType as ImageMediaType)) {
      blocks.push({ type: "image", mediaType: item.mimeType as ImageMediaType, data: item.data });
    } else blocks.push({ type: "text", text: JSON.stringify(raw) });
  }
  if (blocks.length === 0 && answer.structuredContent !== undefined) blocks.push({ type: "text", text: JSON.stringify(answer.structuredContent) });
  if (blocks.every((b) => b.type === "text")) return cappedText(blocks.map((b) => (b as { text: string }).text).join("\n"));
  return blocks.map((b) => (b.type === "text" ? { ...b, text: cappedText(b.text) } : b));
}
