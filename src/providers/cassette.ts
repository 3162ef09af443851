/**
 * Cassettes as providers (issue 25): wrappers around any `ModelProvider`.
 *
 *   recordingProvider   passes each request to the model and, once its stream has ended, appends
 *                       the exchange (canonical request, the events, usage, timing) to the trial's
 *                       cassette before the engine sees the end of the stream — so the exchange is
 *                       on disk before the boundary that commits its answer
 *   replayingProvider   answers each request from the cassette: the next unused exchange with the
 *                       request's hash (identical requests are answered in their recorded order,
 *                       across a resume too: the exchanges earlier runs of the trial used are
 *                       skipped, and taken again only when nothing else matches — the request
 *                       whose answer a kill cut before its boundary was committed).
 *                       A miss: `strict` fails the trial naming the first difference from the
 *                       nearest recorded request; `hybrid` asks the live model and stores nothing;
 *                       `record-missing` asks it and appends the exchange. After a miss the history
 *                       holds a live answer, so every later request of the trial goes live too.
 *
 * One wrapper per trial: the replay's cursor (which exchanges were used) is the cassette's state,
 * not the conversation's. Cassette files are written by the store (store/cassette-file.ts); the
 * wrappers get a sink to append to.
 */
import { RhemaError } from "../core/errors.js";
import type { ModelProvider, ModelRequest, StreamEvent, Usage } from "../core/provider.js";
import type { CassetteExchange, ExchangeSink } from "../core/cassette-exchange.js";
import { type KeyedRequest, type VolatileParts, firstDifference, keyRequest, mapStrings } from "./cassette-request.js";

/** How a run keys its requests: who answers them, what is volatile, and the redactor. */
export interface CassetteKeying {
  provider: string;
  model: string | null;
  volatile: VolatileParts;
  redact(text: string): string;
  /** Whose requests: absent for the task's model, `worker` for its compaction worker. */
  who?: "worker";
}

export type ReplayMode = "strict" | "hybrid" | "record-missing";

/** A replay found no recorded answer: the trial fails with this (not retried: the cassette will not change). */
export class CassetteMissError extends RhemaError {
  constructor(message: string) {
    super("cassette_miss", message);
  }
}

function key(req: ModelRequest, keying: CassetteKeying): KeyedRequest {
  return keyRequest(req, { provider: keying.provider, model: keying.model }, keying.volatile, (text) => keying.redact(text));
}

/** `inner`, each exchange it completes appended to `sink`. A request that fails is not recorded. */
export function recordingProvider(inner: ModelProvider, sink: ExchangeSink, keying: CassetteKeying): ModelProvider {
  return {
    id: inner.id,
    ...(inner.answersFromScript === true ? { answersFromScript: true } : {}),
    async *stream(req, signal) {
      const keyed = key(req, keying);
      yield* recorded(inner.stream(req, signal), keyed, sink, keying);
    },
  };
}

async function* recorded(stream: AsyncIterable<StreamEvent>, keyed: KeyedRequest, sink: ExchangeSink, keying: CassetteKeying): AsyncIterable<StreamEvent> {
  const started = performance.now();
  let firstEventMs: number | null = null;
  const events: StreamEvent[] = [];
  let usage: Usage | null = null;
  for await (const event of stream) {
    firstEventMs ??= performance.now() - started;
    events.push(event);
    if (event.type === "usage") usage = event.usage;
    yield event;
  }
  await sink.append({
    hash: keyed.hash, request: keyed.request, normalised: keyed.normalised,
    events: coalesceText(events).map((e) => redactEvent(e, keying.redact)), usage,
    timing: { firstEventMs: firstEventMs === null ? null : Math.round(firstEventMs), totalMs: Math.round(performance.now() - started) },
    ...(keying.who ? { who: keying.who } : {}),
  });
}

/**
 * Adjacent text deltas as one: a secret split across two deltas is whole again before the redactor
 * reads it (the engine joins the deltas anyway, so a replay's message is the same).
 */
function coalesceText(events: readonly StreamEvent[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const event of events) {
    const last = out.at(-1);
    if (event.type === "text" && last?.type === "text") out[out.length - 1] = { type: "text", delta: last.delta + event.delta };
    else out.push(event);
  }
  return out;
}

/** The events as stored: text, tool names and inputs redacted like every other store. */
function redactEvent(event: StreamEvent, redact: (text: string) => string): StreamEvent {
  switch (event.type) {
    case "text":
      return { type: "text", delta: redact(event.delta) };
    case "tool_call":
      return { type: "tool_call", id: event.id, name: event.name, input: mapStrings(event.input, redact) };
    default:
      return event;
  }
}

export interface ReplayOptions {
  /** The provider id the trial reports (the live model's: a replay's results read like its recording's). */
  id: string;
  /** The recorded exchanges; only those of `keying.who` answer. */
  exchanges: readonly CassetteExchange[];
  keying: CassetteKeying;
  mode: ReplayMode;
  /** The live model, for `hybrid` and `record-missing` (absent in `strict`: no key needed). */
  live?: ModelProvider;
  /** Where `record-missing` appends what went live. */
  sink?: ExchangeSink;
  /** Told once, at the first miss that goes live (the trial says so). */
  onLive?(reason: string): void;
  /** Told of each recorded exchange that answered a request (what `cassette prune` keeps). */
  onUsed?(exchange: number): void;
  /** The exchanges earlier runs of this trial answered from (a resumed replay goes on after them). */
  earlier?: ReadonlySet<number>;
  /** Told of the trial's first miss (the replay's record keeps it for `cassette show`). */
  onMiss?(miss: ReplayMiss): void;
  /**
   * `--cassette-usage simulate`: the usage a replayed answer reports, from the request as sent now
   * and the recorded exchange (absent: the recorded usage, as billed).
   */
  usage?(req: ModelRequest, recorded: CassetteExchange): Usage;
}

export interface ReplayMiss {
  /** The request's place among the trial's requests (of `who`). */
  request: number;
  hash: string;
  detail: string;
  wentLive: boolean;
}

/** Answers requests from recorded exchanges; see the module comment for what a miss does. */
export function replayingProvider(opts: ReplayOptions): ModelProvider {
  const exchanges = opts.exchanges.filter((e) => e.who === opts.keying.who);
  const earlier = new Set([...(opts.earlier ?? [])].filter((n) => exchanges.some((e) => e.exchange === n)));
  const used = new Set<number>();
  let live = false;
  const answer = (hash: string): CassetteExchange | undefined =>
    exchanges.find((e) => e.hash === hash && !used.has(e.exchange) && !earlier.has(e.exchange))
    // An answer an earlier run took last: its boundary may not have been committed before the kill.
    ?? exchanges.findLast((e) => e.hash === hash && !used.has(e.exchange) && earlier.has(e.exchange));
  return {
    id: opts.id,
    async *stream(req, signal) {
      const keyed = key(req, opts.keying);
      if (!live) {
        const found = answer(keyed.hash);
        if (found) {
          used.add(found.exchange);
          opts.onUsed?.(found.exchange);
          const usage = opts.usage?.(req, found);
          yield* usage === undefined ? found.events : found.events.map((e) => (e.type === "usage" ? { type: "usage" as const, usage } : e));
          return;
        }
        const taken = new Set([...earlier, ...used]);
        const detail = missText(exchanges, taken, keyed.request);
        const wentLive = opts.mode !== "strict" && opts.live !== undefined;
        opts.onMiss?.({ request: taken.size + 1, hash: keyed.hash, detail, wentLive });
        if (!wentLive) throw new CassetteMissError(detail);
        live = true;
        opts.onLive?.(`${detail}; this request and the rest of the trial go to the live model`);
      }
      const stream = opts.live!.stream(req, signal);
      if (opts.mode === "record-missing" && opts.sink) yield* recorded(stream, keyed, opts.sink, opts.keying);
      else yield* stream;
    },
  };
}

/**
 * What a miss says: the request's place, and where it first differs from the nearest recorded
 * request — the next unused one (the replay's place in the recording), else the one sharing the
 * longest run of leading messages.
 */
function missText(exchanges: readonly CassetteExchange[], used: ReadonlySet<number>, requested: KeyedRequest["request"]): string {
  const asked = `no recorded answer for request ${used.size + 1} (${requested.messages.length} messages)`;
  const nearest = nearestExchange(exchanges, used, requested);
  if (!nearest) return `${asked}: the cassette holds no more exchanges (${exchanges.length} recorded, all used)`;
  const diff = firstDifference(nearest.request, requested);
  if (!diff) return `${asked}: exchange ${nearest.exchange} matches it but was used already`;
  return `${asked}; the nearest recorded request (exchange ${nearest.exchange}) differs first at ${diff.path}:\n  recorded:  ${diff.recorded}\n  requested: ${diff.requested}`;
}

function nearestExchange(exchanges: readonly CassetteExchange[], used: ReadonlySet<number>, requested: KeyedRequest["request"]): CassetteExchange | null {
  const unused = exchanges.filter((e) => !used.has(e.exchange));
  if (unused.length === 0) return null;
  const asked = requested.messages.map((m) => JSON.stringify(m));
  const shared = (e: CassetteExchange): number => {
    let n = 0;
    while (n < Math.min(e.request.messages.length, asked.length) && JSON.stringify(e.request.messages[n]) === asked[n]) n++;
    return n;
  };
  // The next one in order unless another shares more of the conversation.
  let best = unused[0]!;
  let bestShared = shared(best);
  for (const e of unused) {
    const n = shared(e);
    if (n > bestShared) [best, bestShared] = [e, n];
  }
  return best;
}
