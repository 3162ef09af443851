/**
 * Short commands run to completion from a worker thread: the trial's git (changes.patch) and its
 * layer's mount and unmount. Node's spawn forks the whole process and then waits, on the thread
 * that called it, until the child has exec'd: 3–6 ms a spawn here, more with the CPUs busy, and
 * meanwhile nothing else on that thread moves. On the main thread that is every other trial's
 * work: at concurrency 4 over a 20,000-file base, ~8 spawns a trial held the main thread a quarter
 * of the time (strace: 203 waits, 1.15 s, in a 24-task run). From one worker thread the same
 * spawns wait there.
 *
 * Only commands with no lifetime of their own go here: no process group, no death-watch, no
 * signal forwarding, no sandbox (the shell tool, setup, checks and MCP servers keep theirs on
 * the main thread). Two workers, made as commands need them, each holding the process open only
 * while a command runs in it; if one dies, its commands under way fail and the next use makes another.
 */
import { Worker } from "node:worker_threads";

export interface OffThreadCommand {
  file: string;
  args: readonly string[];
  cwd?: string;
  /** The child's whole environment; absent: this process's. */
  env?: Readonly<Record<string, string>>;
  /** Written to its stdin, which is then closed. */
  input?: string;
  /** Each stdout chunk as it comes, in order; absent: stdout whole in the result. */
  onStdout?: (chunk: Buffer) => void;
  /** Killed (SIGTERM) after this long; absent: no limit. */
  timeoutMs?: number;
  /** stderr kept at most, in characters (default 64 KiB). */
  stderrChars?: number;
}

export interface OffThreadResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Empty when `onStdout` took it. */
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
}

/** A command that could not start (ENOENT, EMFILE, EAGAIN …): `code`, `syscall` and `path` as spawn's own error carries them. */
export class OffThreadSpawnError extends Error {
  readonly syscall: string;
  constructor(message: string, readonly code: string, readonly path: string) {
    super(message);
    this.name = "OffThreadSpawnError";
    this.syscall = `spawn ${path}`;
  }
}

/** Runs `command` to its end from the worker thread; rejects only when it could not start (or the worker died). */
export function runOffThread(command: OffThreadCommand): Promise<OffThreadResult> {
  return commandThread().run(command);
}

type ToWorker = {
  id: number; file: string; args: string[]; cwd?: string; env?: Record<string, string>;
  input: string; stream: boolean; timeoutMs: number | null; stderrChars: number;
};
type FromWorker =
  | { id: number; type: "stdout"; chunk: Uint8Array }
  | { id: number; type: "close"; code: number | null; signal: NodeJS.Signals | null; stdout: Uint8Array; stderr: string; timedOut: boolean }
  | { id: number; type: "error"; code: string; message: string };

/** The worker's code: CommonJS, node's modules only (it is not part of the bundle). */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { spawn } = require("node:child_process");
parentPort.on("message", (m) => {
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, stdio: ["pipe", "pipe", "pipe"] });
  } catch (err) {
    parentPort.postMessage({ id: m.id, type: "error", code: String(err.code || "EIO"), message: String(err.message) });
    return;
  }
  let failed = false;
  child.on("error", (err) => {
    failed = true;
    parentPort.postMessage({ id: m.id, type: "error", code: String(err.code || "EIO"), message: String(err.message) });
  });
  if (!child.stdout || !child.stderr || !child.stdin) return;
  const out = [];
  let stderr = "";
  let timedOut = false;
  const timer = m.timeoutMs === null ? null : setTimeout(() => { timedOut = true; child.kill("SIGTERM"); }, m.timeoutMs);
  child.stdout.on("data", (chunk) => {
    if (m.stream) parentPort.postMessage({ id: m.id, type: "stdout", chunk });
    else out.push(chunk);
  });
  child.stderr.on("data", (chunk) => { if (stderr.length < m.stderrChars) stderr += chunk.toString("utf8"); });
  child.on("close", (code, signal) => {
    if (timer !== null) clearTimeout(timer);
    if (failed) return;
    const stdout = Buffer.concat(out);
    parentPort.postMessage({ id: m.id, type: "close", code, signal, stdout, stderr: stderr.slice(0, m.stderrChars), timedOut });
  });
  child.stdin.on("error", () => {});
  child.stdin.end(m.input);
});
`;

const DEFAULT_STDERR_CHARS = 64 * 1024;

interface Pending {
  command: OffThreadCommand;
  resolve(result: OffThreadResult): void;
  reject(err: Error): void;
}

/** The worker and the commands under way in it. */
class CommandThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** Commands under way in this thread. */
  get running(): number {
    return this.pending.size;
  }

  constructor(private readonly onDead: () => void) {
    // No flags of this process: one like --input-type=module would make the source an ES module.
    this.worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], stdout: false, stderr: false });
    this.worker.unref();
    this.worker.on("message", (message: FromWorker) => this.receive(message));
    this.worker.on("error", (err) => this.die(err));
    this.worker.on("exit", (code) => this.die(new Error(`the command thread exited (${code})`)));
  }

  run(command: OffThreadCommand): Promise<OffThreadResult> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { command, resolve, reject });
      // Held open while a command runs: an awaited command must not see the process exit under it.
      if (this.pending.size === 1) this.worker.ref();
      const message: ToWorker = {
        id, file: command.file, args: [...command.args], input: command.input ?? "", stream: command.onStdout !== undefined,
        timeoutMs: command.timeoutMs ?? null, stderrChars: command.stderrChars ?? DEFAULT_STDERR_CHARS,
        ...(command.cwd !== undefined ? { cwd: command.cwd } : {}),
        ...(command.env !== undefined ? { env: { ...command.env } } : {}),
      };
      this.worker.postMessage(message);
    });
  }

  private receive(message: FromWorker): void {
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    if (message.type === "stdout") {
      pending.command.onStdout?.(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
      return;
    }
    this.settle(message.id);
    if (message.type === "error") {
      // spawn's own words ("spawn git ENOENT"), as a spawn on this thread would have thrown them.
      pending.reject(new OffThreadSpawnError(message.message, message.code, pending.command.file));
    } else {
      const { code, signal, stderr, timedOut } = message;
      pending.resolve({ code, signal, stdout: Buffer.from(message.stdout.buffer, message.stdout.byteOffset, message.stdout.byteLength), stderr, timedOut });
    }
  }

  private settle(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  private die(err: Error): void {
    this.onDead();
    // A thread that could not start for the machine's limit ("Worker initialization failure:
    // EMFILE") fails its commands with that errno, as a spawn that could not start would: the run
    // then ends as the machine's (exit 3), never as its tasks' error.
    const limit = /\b(EMFILE|ENFILE|EAGAIN|ENOMEM)\b/.exec(err.message)?.[1];
    for (const [id, pending] of this.pending) {
      this.settle(id);
      const message = `${pending.command.file}: ${err.message}`;
      pending.reject(limit !== undefined ? Object.assign(new OffThreadSpawnError(message, limit, pending.command.file), { cause: err }) : new Error(message, { cause: err }));
    }
  }
}

/** Threads at most: a spawn holds its thread until the child has exec'd, so two let two start at once. */
const THREADS = 2;
const threads: CommandThread[] = [];

/** The idlest thread, a new one while there are fewer than THREADS and each is busy. */
function commandThread(): CommandThread {
  const idlest = threads.reduce<CommandThread | null>((best, t) => (best === null || t.running < best.running ? t : best), null);
  if (idlest !== null && (idlest.running === 0 || threads.length >= THREADS)) return idlest;
  const made: CommandThread = new CommandThread(() => {
    const at = threads.indexOf(made);
    if (at !== -1) threads.splice(at, 1);
  });
  threads.push(made);
  return made;
}
