/**
 * A cassette on disk (issue 25): one trial's model exchanges, one JSON line each, after a header
 * line. Written at each exchange — appended whole and fsync'd — so a recording killed midway is a
 * valid cassette up to its last exchange; 0600 in 0700 folders like every other store. Reading
 * takes every complete line: a torn last line (the kill) is left out, a bad line before it is an
 * error naming the file and the line.
 *
 *   {"cassette": 1, "provider": …, "model": …, "recordedAt": …}
 *   {"exchange": 1, "hash": "sha256:…", "request": {…}, "normalised": […], "events": […], "usage": {…} | null, "timing": {…}}
 *
 * The request is the canonical one (providers/cassette-request.ts); the events are the stream as
 * the provider adapter yielded it (`StreamEvent`s: text deltas, whole tool calls, usage, stop).
 */
import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import type { CassetteExchange, ExchangeSink } from "../core/cassette-exchange.js";
import { RhemaError, errnoCode, errorMessage } from "../core/errors.js";
import { openPrivateAppend, writeFully, writePrivateFileAtomic } from "./private-files.js";
import { readRegularFile } from "./input-file.js";

export const CASSETTE_VERSION = 1;

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
  z.object({ type: z.literal("usage"), usage: usageSchema }).strict(),
  z.object({ type: z.literal("stop"), reason: z.enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]) }).strict(),
]);

export const cassetteHeaderSchema = z.object({
  cassette: z.literal(CASSETTE_VERSION),
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

export type CassetteHeader = z.infer<typeof cassetteHeaderSchema>;

/**
 * schema/cassette.schema.json: one line of a cassette — its header (the first line) or an
 * exchange (every line after it).
 */
export function cassetteJsonSchema(): Record<string, unknown> {
  const line = z.union([cassetteHeaderSchema, cassetteExchangeSchema]).meta({
    title: "rhema cassette line",
    description: "One line of a cassette (rhema run --cassette; DIR/<suite>/<id>/<variant|default>/<n>.jsonl): the first line is the header, each line after it one model exchange.",
  });
  return z.toJSONSchema(line, { target: "draft-2020-12" }) as Record<string, unknown>;
}
export type { CassetteExchange };

// The schema reads exactly the core's shape, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _sameShape: Same<z.infer<typeof cassetteExchangeSchema>, CassetteExchange> = true;
void _sameShape;

export interface Cassette {
  path: string;
  header: CassetteHeader;
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
  const exchanges = lines.slice(1).map((line, i) => parseLine(path, line, i + 2, cassetteExchangeSchema));
  for (const [i, e] of exchanges.entries()) {
    if (e.exchange !== i + 1) throw new CassetteFileError(path, `line ${i + 2}: exchange ${e.exchange} where ${i + 1} was expected; the file was edited or damaged`);
  }
  return { path, header, exchanges, tornTail };
}

function parseLine<S extends z.ZodTypeAny>(path: string, line: string, number: number, schema: S): z.infer<S> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new CassetteFileError(path, `line ${number}: not JSON (${errorMessage(err)})`, { cause: err });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join(".") : "(line)";
    throw new CassetteFileError(path, `line ${number}, field ${field}: ${issue.message}`);
  }
  return parsed.data as z.infer<S>;
}

/**
 * Appends exchanges to one trial's cassette, each durable before `append` resolves. Opening an
 * existing cassette continues it (a resumed recording): its exchanges are counted, its header kept,
 * and a torn last line is cut off first — unless its header is of another recording (`continues`
 * says no): then it is replaced, emptied before the new header is written.
 */
export class CassetteWriter implements ExchangeSink {
  private constructor(private readonly handle: FileHandle, readonly path: string, private next: number) {}

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
      if (kept === null) {
        await writeFully(handle, Buffer.from(JSON.stringify(cassetteHeaderSchema.parse(header)) + "\n"));
        await handle.datasync();
      }
      return new CassetteWriter(handle, path, (kept?.exchanges.length ?? 0) + 1);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Appends one exchange (its number given here) and waits until it is on disk. */
  async append(exchange: Omit<CassetteExchange, "exchange">): Promise<CassetteExchange> {
    const record: CassetteExchange = { exchange: this.next, ...exchange };
    await writeFully(this.handle, Buffer.from(JSON.stringify(record) + "\n"));
    await this.handle.datasync();
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

/** Replaces the cassette at `path` whole (temp + fsync + rename, 0600): a kill leaves the old file or the new one. */
export function writeCassette(path: string, header: CassetteHeader, exchanges: readonly CassetteExchange[]): Promise<void> {
  const lines = [cassetteHeaderSchema.parse(header), ...exchanges].map((line) => JSON.stringify(line) + "\n");
  return writePrivateFileAtomic(path, lines.join(""));
}
