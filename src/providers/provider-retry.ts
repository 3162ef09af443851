/**
 * Bounded retry for the HTTP providers, and the classification it rests on. The SDKs' own
 * retries are off (`maxRetries: 0`) so that this one policy decides, the same for every
 * provider: retry a retryable failure (429, 408, 409, 5xx, 529 overloaded, a dropped
 * connection, a torn stream) with exponential backoff and jitter, honouring `retry-after-ms` /
 * `retry-after`, at most `maxAttempts` attempts — and only while nothing has been yielded to the
 * caller. Once a text delta has streamed, a retry would repeat it, so the error surfaces instead.
 * Each retry is told to `onRetry` before its wait (a provider cannot print: the runner turns the
 * notice into a `retry` event and a progress line). Which failures refuse the run instead (a dead
 * key, a spent quota: never retried) is each provider's own (provider-refusal.ts); a retryable one
 * that names a refusal `ifPersistent` becomes it when the last attempt still fails.
 */
import { ProviderError, ProviderRefusedError } from "../core/errors.js";
import { isRetryableStatus, type FailureClass } from "./provider-refusal.js";
import { StreamIdleError } from "./stream-idle.js";

/** One retry about to happen: what failed, and the wait before the next attempt. */
export interface RetryNotice {
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  /** Attempts in all (`maxAttempts`). */
  of: number;
  /** The wait before it, in ms (the server's `retry-after`, else backoff with jitter). */
  delayMs: number;
  /** What failed, short: `503`, `connection reset`, `stream idle` (see `retryReason`). */
  reason: string;
  /** The HTTP status, when the failure had one. */
  status: number | null;
  /** The failure's whole message. */
  message: string;
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  maxAttempts?: number;
  /** The first backoff, doubled on each later attempt (default 500). */
  baseDelayMs?: number;
  /** The most one backoff may wait, jitter included (default 8000). */
  maxDelayMs?: number;
  /** The most a server's `retry-after` may make us wait (default 60000); longer is clamped. */
  maxRetryAfterMs?: number;
  /** Waits between attempts; rejects when `signal` aborts. Injected by tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for jitter (default Math.random). */
  random?: () => number;
  /** Told of each retry before its wait, and awaited: a throw ends the request with it. */
  onRetry?: (notice: RetryNotice) => void | Promise<void>;
}

export const DEFAULT_MAX_ATTEMPTS = 4;
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 8_000;
const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;
/** Backoff is cut by up to this fraction at random, so clients that failed together spread out. */
const JITTER_FRACTION = 0.25;

export { isRetryableStatus };

/**
 * The wait a response asks for, from `retry-after-ms` (milliseconds) or `retry-after` (seconds,
 * or an HTTP date); undefined when neither is present or readable.
 */
export function retryAfterMsFrom(headers: Headers | undefined, nowMs: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (raw === null) return undefined;
  const seconds = Number(raw.trim());
  if (raw.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** What one HTTP failure said, in the terms every provider shares. */
export interface HttpFailure {
  /** `"anthropic"`, `"openai"`: starts the message. */
  provider: string;
  status: number;
  headers: Headers | undefined;
  /** The error's kind from the body (`authentication_error`, `invalid_api_key`), when given. */
  kind: string | null;
  /** The body's human message, when given. */
  detail: string | null;
  /** The provider's verdict on it (provider-refusal.ts). */
  verdict: FailureClass;
  cause: unknown;
}

/**
 * A `ProviderError` for an HTTP failure: `"anthropic: 401 authentication_error: invalid
 * x-api-key"`; a `ProviderRefusedError` when the verdict is a refusal.
 */
export function httpFailureError(f: HttpFailure): ProviderError {
  const refusal = (reason: "auth" | "quota") => ({ provider: f.provider, reason, status: f.status, kind: f.kind, detail: f.detail });
  if (f.verdict.kind === "refused") return new ProviderRefusedError(refusal(f.verdict.reason), { cause: f.cause });
  const message = `${f.provider}: ${f.status}${f.kind ? ` ${f.kind}` : ""}${f.detail ? `: ${f.detail}` : ""}`;
  const ifPersistent = f.verdict.kind === "transient" ? f.verdict.ifPersistent : null;
  return new ProviderError(message, {
    retryable: f.verdict.kind === "transient",
    status: f.status,
    retryAfterMs: retryAfterMsFrom(f.headers),
    cause: f.cause,
    ...(ifPersistent !== null ? { refusalIfPersistent: refusal(ifPersistent) } : {}),
  });
}

/** The error an aborted request ends with (the step loop turns it into a cancellation). */
export function abortedError(provider: string, signal: AbortSignal): ProviderError {
  return new ProviderError(`${provider}: request aborted`, { retryable: false, cause: signal.reason });
}

/**
 * Streams `open(attempt)`'s events, opening it again after a retryable failure that came before
 * the first event. `classify` turns whatever an attempt threw into a `ProviderError`; an aborted
 * `signal` ends everything at once with `abortedError`.
 */
export async function* streamWithRetry<T>(
  provider: string,
  open: (attempt: number) => AsyncIterable<T>,
  classify: (err: unknown) => ProviderError,
  signal: AbortSignal,
  options: RetryOptions = {},
): AsyncGenerator<T> {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS));
  const sleep = options.sleep ?? abortableSleep;
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw abortedError(provider, signal);
    let yielded = false;
    try {
      for await (const event of open(attempt)) {
        yielded = true;
        yield event;
      }
      return;
    } catch (err) {
      if (signal.aborted) throw abortedError(provider, signal);
      const failure = err instanceof ProviderError ? err : classify(err);
      if (yielded || !failure.retryable) throw failure;
      if (attempt >= maxAttempts) {
        // A failure that did not clear within the retries and names a refusal for that case refuses the run.
        throw failure.refusalIfPersistent ? new ProviderRefusedError(failure.refusalIfPersistent, { cause: failure }) : failure;
      }
      const delayMs = backoffMs(attempt, failure, options);
      await options.onRetry?.({
        attempt: attempt + 1, of: maxAttempts, delayMs, reason: retryReason(failure), status: failure.status ?? null, message: failure.message,
      });
      try {
        await sleep(delayMs, signal);
      } catch {
        throw abortedError(provider, signal);
      }
    }
  }
}

/** Error codes of a dropped connection (the cause chain's `code`), as a retry's reason says them. */
const CONNECTION_REASONS: Record<string, string> = {
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  UND_ERR_SOCKET: "connection closed",
  ECONNREFUSED: "connection refused",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
};

/**
 * A retryable failure in a few words, for a progress line ("retrying after 503"): the HTTP
 * status; `stream idle` for the stream idle limit; a dropped connection by its error code
 * (`connection reset`, `connection refused`…); `request timed out`; `stream failed` for a torn
 * stream; else `connection failed`.
 */
export function retryReason(failure: ProviderError): string {
  if (failure.status !== undefined) return String(failure.status);
  if (failure instanceof StreamIdleError) return "stream idle";
  for (let c: unknown = failure.cause, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && CONNECTION_REASONS[code]) return CONNECTION_REASONS[code]!;
    // The SDKs' request timeout (`APIConnectionTimeoutError`: "Request timed out."), a `TimeoutError`.
    if (/timeout/i.test(c.name) || /^request timed out/i.test(c.message)) return "request timed out";
  }
  return failure.code === "provider_stream" ? "stream failed" : "connection failed";
}

/** The wait before attempt `attempt + 1`: the server's word if it gave one, else backoff. */
export function backoffMs(attempt: number, failure: ProviderError, options: RetryOptions = {}): number {
  if (failure.retryAfterMs !== undefined) {
    return Math.min(failure.retryAfterMs, options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS);
  }
  const base = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const capped = Math.min(base * 2 ** (attempt - 1), options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
  return Math.round(capped * (1 - JITTER_FRACTION * (options.random ?? Math.random)()));
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
