/**
 * The idle limit on a model's stream. An HTTP client's timeout covers the wait for the response
 * headers, not the body: a server that opens the stream and then sends only keep-alive pings
 * (or nothing) would hold a turn forever. Each attempt of a request runs under a `StreamIdleWatch`:
 * when no content event (anything but a ping: text, tool input, usage, stop — what the `isContent`
 * of each provider accepts) has come for `idleMs`, counted from the request's start, the request
 * is aborted and ends as a retryable `provider_stream` error, which the shared retry
 * (provider-retry.ts) retries like any torn stream. `Infinity` turns the limit off.
 */
import { startLongTimer, type LongTimer } from "../core/long-timer.js";
import { ProviderError } from "../core/errors.js";

/** The limit when none is set (`--stream-idle`, a task's `limits.streamIdle`). */
export const DEFAULT_STREAM_IDLE_MS = 5 * 60_000;

/** One attempt's watch: `signal` is what the attempt's HTTP request runs under. */
export class StreamIdleWatch {
  /** Aborted when the caller's signal is, or when the stream went idle for too long. */
  readonly signal: AbortSignal;
  private readonly idle = new AbortController();
  private timer: LongTimer | null = null;
  private fired = false;
  private stopped = false;

  /** Starts counting now. `idleMs`: the limit (Infinity: none). */
  constructor(private readonly provider: string, private readonly idleMs: number, outer: AbortSignal) {
    this.signal = AbortSignal.any([outer, this.idle.signal]);
    this.restart();
  }

  /** Passes `events` through, restarting the count at each one `isContent` accepts (default: every one). */
  async *watch<T>(events: AsyncIterable<T>, isContent: (event: T) => boolean = () => true): AsyncGenerator<T> {
    for await (const event of events) {
      if (isContent(event)) this.restart();
      yield event;
    }
  }

  /** What the attempt failed with: the idle error when the limit fired (whatever the abort made the client throw), else `err`. */
  failure(err: unknown): unknown {
    return this.fired ? this.idleError(err) : err;
  }

  /** Ends the watch (the attempt is over); safe to call more than once. */
  stop(): void {
    this.stopped = true;
    this.timer?.clear();
  }

  private restart(): void {
    if (this.stopped) return;
    this.timer?.clear();
    this.timer = startLongTimer(() => {
      this.fired = true;
      this.idle.abort(this.idleError(undefined));
    }, this.idleMs);
  }

  private idleError(cause: unknown): ProviderError {
    return new StreamIdleError(this.provider, this.idleMs, cause);
  }
}

/** A request ended by the stream idle limit: a retryable `provider_stream` error (its retry's reason: `stream idle`). */
export class StreamIdleError extends ProviderError {
  constructor(provider: string, idleMs: number, cause: unknown) {
    super(
      `${provider}: the stream sent no content for ${describeMs(idleMs)} (the stream idle limit: --stream-idle, limits.streamIdle); the request was ended`,
      { retryable: true, code: "provider_stream", cause },
    );
  }
}

/** `1500ms`, `90s`, `5m`: the limit as the user likely wrote it. */
function describeMs(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
