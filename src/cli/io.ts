import type { SecretRedactor } from "../runner/run-dir/secret-redactor.js";

/** What a command needs from the process, handed in by main so commands stay testable. */
export interface CliIo {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  pid: number;
  /** Aborted on SIGINT/SIGTERM. */
  interrupt: AbortSignal;
  /** The secret redactor `stdout` and `stderr` write through (made from `env`); a run redacts its files with it too. */
  redactor?: SecretRedactor;
  /** Aborted when the event loop emptied with the command unfinished (runner/execute/stall-net.ts). */
  stalled?: AbortSignal;
}

export function print(stream: NodeJS.WritableStream, text: string): void {
  stream.write(text.endsWith("\n") ? text : text + "\n");
}

/**
 * `stream` made safe to write after its reader went away (`rhema run --json | head -1`): the
 * first EPIPE ends output quietly — later writes are dropped — and the run goes on to write its
 * reports and exit with its own code. Any other stream error is still thrown.
 */
export function quietOnClosedPipe<S extends NodeJS.WritableStream>(stream: S): S {
  let closed = false;
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") {
      closed = true;
      return;
    }
    throw err;
  });
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  (stream as { write: (...args: unknown[]) => boolean }).write = (...args: unknown[]) => (closed ? true : write(...args));
  return stream;
}

/**
 * `stream` with each chunk written through `redact` (the run's secret redactor: the one rule
 * that also redacts every file the run writes), so nothing the CLI prints — progress, `--json`
 * lines, notes, error messages — shows a secret. Each write is redacted alone: the CLI writes
 * whole lines (the model's streamed text is redacted whole before it gets here).
 */
export function redactingStream<S extends NodeJS.WritableStream>(stream: S, redact: (text: string) => string): S {
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  (stream as { write: (...args: unknown[]) => boolean }).write = (chunk: unknown, ...rest: unknown[]) => {
    const utf8 = typeof rest[0] !== "string" || /^utf-?8$/i.test(rest[0]);
    if (typeof chunk === "string" && utf8) return write(redact(chunk), ...rest);
    if (Buffer.isBuffer(chunk)) return write(Buffer.from(redact(chunk.toString("utf8")), "utf8"), ...rest);
    return write(chunk, ...rest);
  };
  return stream;
}
