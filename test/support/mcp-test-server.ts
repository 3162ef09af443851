/**
 * MCP servers for tests, written with the SDK's server side: `writeMcpServer(file)` writes an ESM
 * script (run with node) whose behaviour its first argument picks — `normal` (tools echo, write, crash, sleep), `hang` (never answers initialize),
 * `badschema` (a tool whose input schema is not JSON Schema), `changed` (echo's description
 * differs) — and `startHttpMcpServer` serves the same tools over streamable HTTP on 127.0.0.1,
 * answering only requests that carry the expected header (its `crash` drops the call's connection). Each stdio start appends `start PID`
 * to `mcp-starts.log` in its working folder (the workspace); `sleep` appends `sleeping`.
 *
 * The script is bundled with the SDK (esbuild, once per process): a sandboxed server sees none of
 * /tmp, where a clone of the repository (and so its node_modules) may well live.
 */
import { createServer, type Server as HttpServer } from "node:http";
import { copyFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { repoRoot } from "./paths.js";

/** The tools the test servers offer, by mode. */
const TOOLS_SOURCE = `
const tools = (mode) => [
  { name: "echo", description: mode === "changed" ? "Echoes text back, changed" : "Echoes text back", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  { name: "write", description: "Writes text to a file", inputSchema: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } }, required: ["path", "text"] } },
  { name: "crash", description: "Exits the server", inputSchema: { type: "object", properties: {} } },
  { name: "sleep", description: "Waits a minute", inputSchema: { type: "object", properties: {} } },
  ...(mode === "badschema" ? [{ name: "bad", description: "Bad schema", inputSchema: { type: "object", properties: { x: { type: 12 } } } }] : []),
];
async function callTool(name, args) {
  const { appendFileSync, writeFileSync } = await import("node:fs");
  switch (name) {
    case "echo": return { content: [{ type: "text", text: "echo: " + args.text }] };
    case "write":
      try { writeFileSync(args.path, args.text); return { content: [{ type: "text", text: "wrote " + args.path }] }; }
      catch (err) { return { content: [{ type: "text", text: "cannot write: " + err.code }], isError: true }; }
    case "crash": process.exit(3);
    case "sleep": appendFileSync("mcp-starts.log", "sleeping\\n"); await new Promise((r) => setTimeout(r, 60000)); return { content: [{ type: "text", text: "slept" }] };
    default: throw new Error("no tool " + name);
  }
}
`;

/** The stdio server's source (its imports bare: `writeMcpServer` bundles them). */
function serverSource(): string {
  return `import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { appendFileSync } from "node:fs";
${TOOLS_SOURCE}
const mode = process.argv[2] ?? "normal";
appendFileSync("mcp-starts.log", "start " + process.pid + "\\n");
if (mode === "hang") {
  // Told apart from the death-watch's SIGKILL at rhema's exit: rhema stopped it (SIGTERM first).
  process.on("SIGTERM", () => { appendFileSync("mcp-starts.log", "stopped\\n"); process.exit(0); });
  process.stdin.resume();
  setInterval(() => {}, 1 << 30);
} else {
  const server = new Server({ name: "test", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools(mode) }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => callTool(req.params.name, req.params.arguments ?? {}));
  await server.connect(new StdioServerTransport());
}
`;
}

let bundled: Promise<string> | null = null;

/**
 * Writes the stdio server, bundled with the SDK, to `file`; `edit` rewrites the bundle's text
 * (a server whose tools changed). Bundled once per process, then copied.
 */
export async function writeMcpServer(file: string, edit?: (text: string) => string): Promise<void> {
  bundled ??= (async () => {
    const out = join(await mkdtemp(join(tmpdir(), "rhema-mcp-server-")), "server.mjs");
    await build({
      stdin: { contents: serverSource(), resolveDir: repoRoot, loader: "js", sourcefile: "mcp-test-server.mjs" },
      bundle: true, platform: "node", format: "esm", target: "node20", outfile: out, logLevel: "silent",
      // CommonJS dependencies inside an ESM bundle call require: give them one.
      banner: { js: 'import { createRequire as __rhemaTestRequire } from "node:module"; const require = __rhemaTestRequire(import.meta.url);' },
    });
    return out;
  })();
  const source = await bundled;
  if (edit === undefined) await copyFile(source, file);
  else await writeFile(file, edit(await readFile(source, "utf8")));
}

/** A streamable-HTTP MCP server on 127.0.0.1 (stateless: one server per request), refusing requests without `header`. */
export async function startHttpMcpServer(t: { after(fn: () => unknown): void }, header: { name: string; value: string }): Promise<{ url: string; calls: string[]; refused: () => number }> {
  const { Server } = await import("@modelcontextprotocol/sdk/server/index.js");
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const made = new Function(`${TOOLS_SOURCE}; return { tools, callTool };`)() as { tools(mode: string): unknown[]; callTool(name: string, args: Record<string, unknown>): Promise<unknown> };
  const calls: string[] = [];
  let refused = 0;
  const http: HttpServer = createServer(async (req, res) => {
    if (req.headers[header.name.toLowerCase()] !== header.value) {
      refused += 1;
      res.writeHead(401).end("no");
      return;
    }
    const server = new Server({ name: "test-http", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: made.tools("normal") }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      calls.push(r.params.name);
      // Over HTTP a crash is the endpoint dropping the call's connection (the test process must not exit).
      if (r.params.name === "crash") {
        res.destroy();
        return new Promise<never>(() => {});
      }
      return made.callTool(r.params.name, (r.params.arguments ?? {}) as Record<string, unknown>) as never;
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => { http.closeAllConnections(); http.close(() => r()); }));
  const address = http.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}/mcp`, calls, refused: () => refused };
}
