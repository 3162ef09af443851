/** What a command needs from the process, handed in by main so commands stay testable. */
export interface CliIo {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  pid: number;
  /** Aborted on SIGINT/SIGTERM. */
  interrupt: AbortSignal;
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
