/**
 * A stdio MCP server's process: spawned in a process group of its own — inside the trial's
 * bubblewrap sandbox when the trial has one (the same argv the shell tool's commands get: the
 * workspace the only writable folder, the run directory hidden, the policy's `network`; bwrap's
 * `--die-with-parent` and PID namespace take the server down with rhema), else watched by a
 * death-watch (process/death-watch.ts) that kills its group if rhema dies, SIGKILL included —
 * and the SDK transport over its stdin and stdout (newline-delimited JSON-RPC, as the MCP stdio
 * transport frames it). Nothing it starts outlives `stop()` or rhema.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { realpath } from "node:fs/promises";
import { isAbsolute } from "node:path";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { watchForDeath, type DeathWatch } from "../process/death-watch.js";
import { killGroup } from "../process/group-kill.js";
import { processStartTime } from "../process/process-table.js";
import { findOnPath } from "../process/sandbox-probe.js";
import { bwrapArgv, isUnder, type SandboxPlacement } from "../process/sandbox.js";
import type { McpServerConfig } from "./mcp-config.js";

/** How long a stopped server gets between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 1000;
/** How much of a server's stderr is kept for the message of a start that failed. */
const STDERR_TAIL_CHARS = 2000;

export interface StdioServerPlace {
  /** The trial's workspace: the server's working folder, and all it may write when sandboxed. */
  workspace: string;
  /** The trial's command environment (scrubbed); the server's own `env` is laid over it. */
  env: Readonly<Record<string, string>>;
  /** The trial's sandbox; absent: unsandboxed, with a death-watch. */
  sandbox?: SandboxPlacement;
}

export interface StdioServer {
  transport: Transport;
  /** The process group's id (the leader's pid). */
  pgid: number;
  /** Settles when the leader has exited. */
  exited: Promise<void>;
  /** The last of what it wrote to stderr, for messages. */
  stderrTail(): string;
  /** Stops its group (SIGTERM, then SIGKILL) and waits for it. Idempotent. */
  stop(): Promise<void>;
}

/** Spawns `config`'s server (see the module comment). Rejects when the program cannot start. */
export async function spawnStdioServer(config: Extract<McpServerConfig, { kind: "stdio" }>, place: StdioServerPlace): Promise<StdioServer> {
  const env = { ...place.env, ...config.env };
  let argv = [config.command, ...config.args];
  let sandbox = place.sandbox;
  if (sandbox) {
    // The server's program may sit where the sandbox shows nothing (a node under /tmp or $HOME):
    // found on the host as the sandbox's PATH would find it, it is bound back, read-only.
    const program = await hostProgram(config.command, env.PATH ?? "", place.workspace);
    if (program !== null) {
      argv = [program, ...config.args];
      sandbox = { ...sandbox, readOnlyBinds: [...(sandbox.readOnlyBinds ?? []), program] };
    }
  }
  // bwrap itself starts with an empty environment (it is PID 1 inside: /proc/1/environ shows it).
  const [program, ...args] = sandbox ? bwrapArgv({ ...sandbox, workspace: place.workspace, env }, argv) : argv;
  const child = spawn(program!, args, {
    cwd: place.workspace, env: place.sandbox ? {} : env, detached: true, stdio: ["pipe", "pipe", "pipe"],
  });
  child.on("error", () => {}); // reported through `spawned` below, or as the transport's close
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise<void>((resolveSpawn, reject) => {
    child.once("spawn", resolveSpawn);
    child.once("error", reject);
  });
  const pgid = child.pid!;
  let watch: DeathWatch | null = null;
  if (!place.sandbox) watch = await watchForDeath({ pgid, startTime: (await processStartTime(pgid).catch(() => null)) ?? 0 });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
  });
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    child.stdin!.destroy();
    await killGroup(pgid, STOP_GRACE_MS);
    watch?.dismiss();
    await exited;
  })());
  return { transport: lineTransport(child, stop), pgid, exited, stderrTail: () => stderr.trim(), stop };
}

/**
 * The real path of the program `command` names, as a sandboxed server would run it: a name
 * without a slash looked up on `searchPath`, an absolute path as it is; null for a path relative
 * to the workspace (the sandbox shows the workspace) or a program not found (the start fails, saying so).
 */
async function hostProgram(command: string, searchPath: string, workspace: string): Promise<string | null> {
  if (command.includes("/") && !isAbsolute(command)) return null;
  const found = isAbsolute(command) ? command : await findOnPath(command, searchPath);
  if (found === null || isUnder(found, [workspace])) return null;
  return realpath(found).catch(() => null);
}

/** The SDK's transport over the child's stdin and stdout: one JSON-RPC message a line. */
function lineTransport(child: ChildProcess, stop: () => Promise<void>): Transport {
  let buffered = "";
  let closed = false;
  const transport: Transport = {
    async start() {
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (text: string) => {
        buffered += text;
        for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
          const line = buffered.slice(0, end).replace(/\r$/, "");
          buffered = buffered.slice(end + 1);
          if (line.trim() === "") continue;
          let message: JSONRPCMessage;
          try {
            message = JSON.parse(line) as JSONRPCMessage;
          } catch (err) {
            transport.onerror?.(new Error(`the server wrote a line that is not JSON: ${line.slice(0, 200)}`, { cause: err }));
            continue;
          }
          transport.onmessage?.(message);
        }
      });
      child.once("close", () => {
        if (closed) return;
        closed = true;
        transport.onclose?.();
      });
      child.stdin!.on("error", (err) => transport.onerror?.(err));
    },
    send(message) {
      return new Promise<void>((resolveSent, reject) => {
        if (closed || !child.stdin!.writable) return reject(new Error("the server's stdin is closed"));
        child.stdin!.write(`${JSON.stringify(message)}\n`, (err) => (err ? reject(err) : resolveSent()));
      });
    },
    async close() {
      await stop();
    },
  };
  return transport;
}
