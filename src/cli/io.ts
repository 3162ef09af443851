/** What a command needs from the process, handed in by main so commands stay testable. */
export interface CliIo {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  pid: number;
  /** Aborted on SIGINT/SIGTERM. */
  interrupt: AbortSignal;
}

export function print(stream: NodeJS.WritableStream, text: string): void {
  stream.write(text.endsWith("\n") ? text : text + "\n");
}
