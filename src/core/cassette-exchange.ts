/**
 * A cassette's unit (issue 25): one model exchange as recorded — the canonical request it answers
 * (providers/cassette-request.ts makes it), the stream the model sent, its usage and timing. A
 * type of the core so that the providers that record and replay and the store that keeps the
 * files (store/cassette-file.ts, whose schema is checked against it) share one shape.
 */
import type { StreamEvent, Usage } from "./provider.js";

/** A request as a cassette keys it: provider-neutral, volatile parts made stable, secrets redacted. */
export interface CanonicalRequest {
  provider: string;
  model: string | null;
  system: string | null;
  tools: unknown[];
  messages: unknown[];
  cacheBreakpoints: number[];
  cacheOneHourThrough?: number;
  maxOutputTokens?: number;
  compactedSteps?: number;
}

export interface CassetteExchange {
  /** 1, 2, 3, … in the order recorded. */
  exchange: number;
  /** `sha256:` and the hex of the canonical request as JSON with sorted keys. */
  hash: string;
  request: CanonicalRequest;
  /** The names of the normalisation rules that changed something in the request. */
  normalised: string[];
  events: StreamEvent[];
  usage: Usage | null;
  timing: { firstEventMs: number | null; totalMs: number };
  /** Whose request: absent for the task's model, `worker` for its compaction worker (`transcript.worker`). */
  who?: "worker";
}

/** Where recorded exchanges go (the store's cassette writer). */
export interface ExchangeSink {
  append(exchange: Omit<CassetteExchange, "exchange">): Promise<unknown>;
}
