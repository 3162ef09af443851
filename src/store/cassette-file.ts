/**
 * A cassette on disk (issue 25): one trial's model exchanges, one JSON line each, after a header
 * line. Written at each exchange — appended whole and fsync'd — so a recording killed midway is a
 * valid cassette up to its last exchange; 0600 in 0700 folders like every other store. Reading
 * takes every complete line: a torn last line (the kill) is left out, a bad line before it is an
 * error naming the file and the line.
 *
 *   {"cassette": 2, "provider": …, "model": …, "recordedAt": …, "trialStartedAt": …}
 *   {"exchange": 1, "hash": "sha256:…", "request": {…}, "normalised": […], "events": […], "usage": {…} | null, "timing": {…}}
 *   {"exchange": 2, "hash": "sha256:…", "requestDelta": {"from": 1, "keep": 3, "messages": […]}, "normalised": […], …}
 *   {"exchange": 3, "hash": "sha256:…", "request": {…}, …, "who": "worker"}
 *
 * The request is the canonical one (providers/cassette-request.ts); the events are the stream as
 * the provider adapter yielded it (`StreamEvent`s: text deltas, whole tool calls, usage, stop).
 *
 * Each step's request repeats the conversation so far, so a cassette storing every request whole
 * grows as the square of its trial's length. Version 2 stores a request as a delta against the
 * last earlier exchange of the same `who` (the task model's and its compaction worker's
 * interleave) when its messages start with at least one of that request's: `from` names that
 * exchange, `keep` how many of its first messages are kept, `messages` those that follow them;
 * of the other fields only those that differ are given, and `removed` names the optional ones
 * the base has and this request lacks. Otherwise (the trial's first request, messages a
 * compaction rewrote) the request is stored whole. Reading makes every request whole again, so a
 * cassette's reader sees whole requests only; the `hash` is the whole request's either way.
 * Version 1 stored every request whole: it is still read, and a version-1 cassette continued
 * stays version 1 (one file, one version); a prune rewrites a cassette at the current version.
 */
import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import type { CanonicalRequest, CassetteExchange, ExchangeSink } from "../core/cassette-exchange.js";
import { RhemaError, errnoCode, errorMessage } from "../core/errors.js";
import { openPrivateAppend, writeFully, writePrivateFileAtomic } from "./private-files.js";
import { readRegularFile } from "./input-file.js";

/** The version new cassettes are written at; every version up to it is read. */
export const CASSETTE_VERSION = 2 as const;
export type CassetteVersion = 1 | typeof CASSETTE_VERSION;

const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  cacheWrite1hTokens: z.number().int().nonnegative().optional(),
  outputTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative().optional(),
}).strict();

const streamEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), delta: z.string() }).strict(),
  z.object({ type: z.literal("tool_call"), id: z.string().min(1), name: z.string().min(1), input: z.unknown() }).strict(),
  z.object({ type: z.literal("reasoning"), provider: z.string().min(1), id: z.string(), data: z.string(), summary: z.string() }).strict(),
  z.object({ type: z.literal("usage"), usage: usageSchema }).strict(),
  z.object({ type: z.literal("stop"), reason: z.enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]) }).strict(),
]);

export const cassetteHeaderSchema = z.object({
  cassette: z.literal([1, 2] as const satisfies readonly CassetteVersion[]),
  provider: z.string().min(1),
  model: z.string().nullable(),
  recordedAt: z.string().datetime(),
  /**
   * The trial this recording belongs to, by when it first started (its task state's `startedAt`):
   * a resumed trial continues its cassette; a trial started afresh (`--restart`, a new run) replaces it.
   */
  trialStartedAt: z.string().optional(),
}).strict();

const canonicalRequestSchema = z.object({
  provider: z.string(),
  model: z.string().nullable(),
  system: z.string().nullable(),
  tools: z.array(z.unknown()),
  messages: z.array(z.unknown()),
  cacheBreakpoints: z.array(z.number().int()),
  cacheOneHourThrough: z.number().int().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  compactedSteps: z.number().int().nonnegative().optional(),
}).strict();

/** A request's fields besides its messages: a delta gives those that differ from its base's. */
const requestFieldsSchema = canonicalRequestSchema.omit({ messages: true });
type RequestField = keyof z.infer<typeof requestFieldsSchema>;
const REQUEST_FIELDS = Object.keys(requestFieldsSchema.shape) as RequestField[];
/** The request's optional fields: those a delta can say are `removed`. */
const OPTIONAL_REQUEST_FIELDS = ["cacheOneHourThrough", "maxOutputTokens", "compactedSteps"] as const;

const requestDeltaSchema = requestFieldsSchema.partial().extend({
  /** The earlier exchange whose request this one extends. */
  from: z.number().int().positive(),
  /** How many of that request's first messages this one keeps. */
  keep: z.number().int().positive(),
  /** This request's messages after the kept ones. */
  messages: z.array(z.unknown()),
  /** Optional fields the base's request has and this one lacks. */
  removed: z.array(z.enum(OPTIONAL_REQUEST_FIELDS)).min(1).optional(),
}).strict();
type RequestDelta = z.infer<typeof requestDeltaSchema>;

/** An exchange stored with its request whole: every line of version 1, a line of version 2. */
export const cassetteExchangeSchema = z.object({
  exchange: z.number().int().positive(),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  request: canonicalRequestSchema,
  normalised: z.array(z.string()),
  events: z.array(streamEventSchema),
  usage: usageSchema.nullable(),
  timing: z.object({ firstEventMs: z.number().nonnegative().nullable(), totalMs: z.number().nonnegative() }).strict(),
  who: z.literal("worker").optional(),
}).strict();

/** An exchange stored with its request as a delta against an earlier one (version 2). */
const deltaExchangeSchema = cassetteExchangeSchema.omit({ request: true }).extend({ requestDelta: requestDeltaSchema }).strict();

export type CassetteHeader = z.infer<typeof cassetteHeaderSchema>;

/**
 * schema/cassette.schema.json: one line of a cassette — its header (the first line) or an
 * exchange (every line after it), its request whole or, from version 2, a delta.
 */
export function cassetteJsonSchema(): Record<string, unknown> {
  const line = z.union([cassetteHeaderSchema, cassetteExchangeSchema, deltaExchangeSchema]).meta({
    title: "rhema cassette line",
    description: "One line of a cassette (rhema run --cassette; DIR/<suite>/<id>/<variant|default>/<n>.jsonl): the first line is the header, each line after it one model exchange, its request whole (`request`) or, from version 2, a delta against an earlier exchange's (`requestDelta`).",
  });
  return z.toJSONSchema(line, { target: "draft-2020-12" }) as Record<string, unknown>;
}
export type { CassetteExchange };

// The schema reads exactly the core's shape, both ways; `removed` can name every optional field.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
const _sameShape: Same<z.infer<typeof cassetteExchangeSchema>, CassetteExchange> = true;
const _optionalFields: Same<(typeof OPTIONAL_REQUEST_FIELDS)[number], OptionalKeys<CanonicalRequest>> = true;
void _sameShape;
void _optionalFields;

export interface Cassette {
  path: string;
  header: CassetteHeader;
  /** Every request whole, whichever way its line stored it. */
  exchanges: CassetteExchange[];
  /** A last line cut short (a recording killed mid-write) was left out. */
  tornTail: boolean;
}

/** A cassette file that cannot be read as one: names the file, and the line and field when there is one. */
export class CassetteFileError extends RhemaError {
  constructor(readonly path: string, detail: string, options?: { cause?: unknown }) {
    super("invalid_input", `${path}: ${detail}`, options);
  }
}

/** Reads a cassette; null when there is no file at `path`. */
export async function readCassette(path: string): Promise<Cassette | null> {
  const text = await cassetteText(path);
  return text === null ? null : parseCassette(path, text);
}

/** The file's text; null when there is none. A FIFO, device or folder there is an error naming it (never a read that waits). */
async function cassetteText(path: string): Promise<string | null> {
  try {
    return (await readRegularFile(path)).toString("utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw new CassetteFileError(path, `cannot read (${errorMessage(err)})`, { cause: err });
  }
}

/** Parses a cassette's text (pure; `path` only names it in errors). */
export function parseCassette(path: string, text: string): Cassette {
  const lines = text.split("\n");
  // Every complete line ends with "\n": what follows the last one is a line the kill cut.
  const tail = lines.pop() ?? "";
  const tornTail = tail !== "";
  if (lines.length === 0) throw new CassetteFileError(path, tornTail ? "line 1: the header was cut short" : "empty: no header line");
  const header = parseLine(path, lines[0]!, 1, cassetteHeaderSchema);
  const exchanges: CassetteExchange[] = [];
  for (const [i, line] of lines.slice(1).entries()) exchanges.push(parseExchange(path, header.cassette, { text: line, number: i + 2 }, exchanges));
  return { path, header, exchanges, tornTail };
}

/** A line of a cassette and its number in the file (from 1, the header). */
interface Line {
  text: string;
  number: number;
}

/** An exchange's line, its request made whole against the exchanges before it (`earlier`, whole). */
function parseExchange(path: string, version: CassetteVersion, line: Line, earlier: readonly CassetteExchange[]): CassetteExchange {
  const value = parseJson(path, line);
  const delta = typeof value === "object" && value !== null && "requestDelta" in value;
  if (delta && version === 1) throw new CassetteFileError(path, `line ${line.number}, field requestDelta: a version-1 cassette stores every request whole`);
  const parsed = delta ? validated(path, line.number, deltaExchangeSchema, value) : validated(path, line.number, cassetteExchangeSchema, value);
  const expected = earlier.length + 1;
  if (parsed.exchange !== expected) throw new CassetteFileError(path, `line ${line.number}: exchange ${parsed.exchange} where ${expected} was expected; the file was edited or damaged`);
  if (!("requestDelta" in parsed)) return parsed;
  const { exchange, hash, requestDelta, ...rest } = parsed;
  return { exchange, hash, request: wholeRequest(path, line.number, requestDelta, earlier), ...rest };
}

/** The request `delta` stands for, its base one of the `earlier` exchanges (pure). */
function wholeRequest(path: string, lineNumber: number, delta: RequestDelta, earlier: readonly CassetteExchange[]): CanonicalRequest {
  const { from, keep, messages, removed = [], ...changed } = delta;
  const fail = (field: string, detail: string) => new CassetteFileError(path, `line ${lineNumber}, field requestDelta.${field}: ${detail}`);
  const base = earlier[from - 1]?.request;
  if (base === undefined) throw fail("from", `exchange ${from} is not an earlier exchange of this cassette (this line is exchange ${earlier.length + 1})`);
  if (keep > base.messages.length) throw fail("keep", `${keep} messages kept of exchange ${from}'s request, which has ${base.messages.length}`);
  const both = removed.find((field) => changed[field] !== undefined);
  if (both !== undefined) throw fail("removed", `${both} is both given and removed`);
  const request: CanonicalRequest = { ...base, ...changed, messages: [...base.messages.slice(0, keep), ...messages] };
  for (const field of removed) delete request[field];
  return request;
}

function parseLine<S extends z.ZodTypeAny>(path: string, line: string, number: number, schema: S): z.infer<S> {
  return validated(path, number, schema, parseJson(path, { text: line, number }));
}

function parseJson(path: string, line: Line): unknown {
  try {
    return JSON.parse(line.text);
  } catch (err) {
    throw new CassetteFileError(path, `line ${line.number}: not JSON (${errorMessage(err)})`, { cause: err });
  }
}

function validated<S extends z.ZodTypeAny>(path: string, number: number, schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join(".") : "(line)";
    throw new CassetteFileError(path, `line ${number}, field ${field}: ${issue.message}`);
  }
  return parsed.data as z.infer<S>;
}

/** A request as a line stores it: whole, or as a delta against an earlier exchange's. */
type StoredRequest = { request: CanonicalRequest } | { requestDelta: RequestDelta };

/**
 * An exchange's request as JSON, part by part: what deltas are worked out from. A writer keeps
 * the last exchange's of each `who` as it was written, so a caller changing its objects later
 * cannot make a delta disagree with the file.
 */
interface RequestParts {
  exchange: number;
  messages: string[];
  /** The fields besides the messages that the request has. */
  fields: Map<RequestField, string>;
}

/** Encodes each request against the last one of the same `who` remembered before it. */
class DeltaEncoder {
  private readonly bases = new Map<CassetteExchange["who"], RequestParts>();

  /**
   * `exchange`'s request as its line stores it, and `remember`: called once the line is written,
   * the next request of its `who` is encoded against this one.
   */
  encode(exchange: CassetteExchange): { stored: StoredRequest; remember(): void } {
    const base = this.bases.get(exchange.who);
    const parts = requestParts(exchange);
    return {
      stored: base === undefined ? { request: exchange.request } : storedRequest(exchange.request, parts, base),
      remember: () => this.bases.set(exchange.who, parts),
    };
  }

  /** The next request of `exchange.who` is encoded against `exchange`'s (one already in the file). */
  remember(exchange: CassetteExchange): void {
    this.bases.set(exchange.who, requestParts(exchange));
  }
}

function requestParts({ exchange, request }: CassetteExchange): RequestParts {
  const fields = new Map<RequestField, string>();
  for (const field of REQUEST_FIELDS) if (request[field] !== undefined) fields.set(field, JSON.stringify(request[field]));
  return { exchange, messages: request.messages.map((message) => JSON.stringify(message)), fields };
}

/**
 * `request` (`parts` its parts) as a delta against `base` when their messages start alike, else
 * whole (pure).
 */
function storedRequest(request: CanonicalRequest, parts: RequestParts, base: RequestParts): StoredRequest {
  let keep = 0;
  while (keep < base.messages.length && keep < parts.messages.length && base.messages[keep] === parts.messages[keep]) keep += 1;
  if (keep === 0) return { request };
  const changed = REQUEST_FIELDS.filter((field) => parts.fields.has(field) && parts.fields.get(field) !== base.fields.get(field));
  const removed = OPTIONAL_REQUEST_FIELDS.filter((field) => !parts.fields.has(field) && base.fields.has(field));
  return {
    requestDelta: {
      from: base.exchange,
      keep,
      messages: request.messages.slice(keep),
      ...Object.fromEntries(changed.map((field) => [field, request[field]])),
      ...(removed.length > 0 ? { removed } : {}),
    },
  };
}

/** `exchange`'s line, its request stored as `stored`, with the newline that ends it. */
function exchangeLine({ exchange, hash, request: _whole, ...rest }: CassetteExchange, stored: StoredRequest): string {
  return JSON.stringify({ exchange, hash, ...stored, ...rest }) + "\n";
}

/**
 * Appends exchanges to one trial's cassette, each durable before `append` resolves. Opening an
 * existing cassette continues it (a resumed recording): its exchanges are counted, its header and
 * version kept, and a torn last line is cut off first — unless its header is of another recording
 * (`continues` says no): then it is replaced, emptied before the new header is written. A new
 * file is written at CASSETTE_VERSION, whatever `header.cassette` says; in it each request is
 * stored as a delta against the last exchange of its `who` before it (those kept included) when
 * their messages start alike. A continued version-1 cassette gets whole requests.
 */
export class CassetteWriter implements ExchangeSink {
  private next: number;
  /** Null: a version-1 cassette, every request stored whole. */
  private readonly encoder: DeltaEncoder | null;

  private constructor(private readonly handle: FileHandle, readonly path: string, kept: Pick<Cassette, "header" | "exchanges">) {
    this.next = kept.exchanges.length + 1;
    this.encoder = kept.header.cassette === 1 ? null : new DeltaEncoder();
    for (const exchange of kept.exchanges) this.encoder?.remember(exchange);
  }

  static async open(path: string, header: CassetteHeader, continues: (kept: CassetteHeader) => boolean = () => true): Promise<CassetteWriter> {
    const text = await cassetteText(path);
    // What a kill cut (a torn last line; a header never finished) goes; the rest is checked.
    let complete = text === null ? 0 : text.lastIndexOf("\n") + 1;
    // Another recording's cassette is replaced whole (its exchanges unread); this recording's is checked.
    if (complete > 0 && !continues(parseLine(path, text!.slice(0, text!.indexOf("\n")), 1, cassetteHeaderSchema))) complete = 0;
    const kept = complete === 0 ? null : parseCassette(path, text!.slice(0, complete));
    const handle = await openPrivateAppend(path);
    try {
      if (text !== null && complete < text.length) await handle.truncate(complete);
      if (kept !== null) return new CassetteWriter(handle, path, kept);
      const written = cassetteHeaderSchema.parse({ ...header, cassette: CASSETTE_VERSION });
      await writeFully(handle, Buffer.from(JSON.stringify(written) + "\n"));
      await handle.datasync();
      return new CassetteWriter(handle, path, { header: written, exchanges: [] });
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Appends one exchange (its number given here) and waits until it is on disk. */
  async append(exchange: Omit<CassetteExchange, "exchange">): Promise<CassetteExchange> {
    const record: CassetteExchange = { exchange: this.next, ...exchange };
    const encoded = this.encoder?.encode(record) ?? { stored: { request: record.request }, remember: () => {} };
    await writeFully(this.handle, Buffer.from(exchangeLine(record, encoded.stored)));
    await this.handle.datasync();
    encoded.remember();
    this.next += 1;
    return record;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** `exchanges` less those not in `used`, numbered again from 1 in their order (pure). */
export function keptExchanges(exchanges: readonly CassetteExchange[], used: ReadonlySet<number>): CassetteExchange[] {
  return exchanges.filter((e) => used.has(e.exchange)).map((e, i) => ({ ...e, exchange: i + 1 }));
}

/**
 * Replaces the cassette at `path` whole (temp + fsync + rename, 0600): a kill leaves the old file
 * or the new one. Written at CASSETTE_VERSION whatever `header.cassette` says, each request a delta
 * against one of `exchanges` (numbered 1, 2, 3, … as `keptExchanges` numbers them) where it can be.
 */
export function writeCassette(path: string, header: CassetteHeader, exchanges: readonly CassetteExchange[]): Promise<void> {
  const encoder = new DeltaEncoder();
  const lines = [
    JSON.stringify(cassetteHeaderSchema.parse({ ...header, cassette: CASSETTE_VERSION })) + "\n",
    ...exchanges.map((exchange) => {
      const { stored, remember } = encoder.encode(exchange);
      remember();
      return exchangeLine(exchange, stored);
    }),
  ];
  return writePrivateFileAtomic(path, lines.join(""));
}
