/**
 * Plumbing shared by the fake model servers (fake-anthropic-server, fake-openai-server): a real
 * HTTP server on 127.0.0.1 at a random port that records every request, answers one route from
 * a queue of replies, and writes SSE bodies — whole frames, or bytes cut at arbitrary points
 * (mid-frame, mid-character) to prove the SDKs' SSE parsing, or held open to test aborts.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  /** The URL's query (`?alt=sse`). */
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (`undefined` when it was not JSON). */
  body: any;
  /** The body's bytes as sent (a form body, a signed payload). */
  rawBody: Buffer;
}

export interface SseWriteOptions {
  /** Cut the body into pieces of this many bytes, written apart (default: one write per frame). */
  splitBytes?: number;
  /** Write only this many frames, then hold the response open until the client goes away. */
  hangAfterFrames?: number;
  /** While held open: write `frame` (a ping, a keep-alive) every `everyMs`, until the client goes away. */
  keepAlive?: { frame: string; everyMs: number };
  /** Write this many whole frames and half of the next, then drop the connection (a stream cut mid-event). */
  cutInFrame?: number;
}

export interface FakeServerCore {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Responses the client dropped before they ended (an abort seen from the server). */
  readonly dropped: { count: number };
  close(): Promise<void>;
}

/**
 * Starts a server that answers POST `route` (a path, or a pattern over the path for routes that
 * name the model) with `handle` and anything else with a 404. A throw
 * in `handle` becomes a 500 whose body names it, so a broken fake fails loudly.
 */
export async function startFakeServer(
  route: string | RegExp,
  handle: (req: RecordedRequest, res: ServerResponse) => Promise<void>,
): Promise<FakeServerCore> {
  const requests: RecordedRequest[] = [];
  const dropped = { count: 0 };
  const server = createServer((req, res) => {
    void (async () => {
      const recorded = await record(req);
      requests.push(recorded);
      res.on("close", () => {
        if (!res.writableEnded) dropped.count++;
      });
      if (req.method !== "POST" || !(typeof route === "string" ? recorded.path === route : route.test(recorded.path))) {
        return sendJson(res, 404, { error: { type: "not_found_error", message: `fake server: no route ${req.method} ${recorded.path}` } });
      }
      try {
        await handle(recorded, res);
      } catch (err) {
        if (!res.headersSent) sendJson(res, 500, { error: { type: "fake_server_error", message: String(err) } });
        else res.destroy();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    dropped,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function record(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks);
  const text = rawBody.toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const url = new URL(req.url ?? "/", "http://fake");
  return { method: req.method ?? "", path: url.pathname, query: url.searchParams, headers: req.headers, body, rawBody };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export function sendText(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain", ...headers });
  res.end(body);
}

/** One SSE frame: an optional `event:` line, a `data:` line, a blank line. */
export function sseFrame(event: string | null, data: unknown): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event !== null ? `event: ${event}\n` : ""}data: ${payload}\n\n`;
}

/** Writes `frames` as an SSE response, as `options` say; resolves when done or dropped. */
export function writeSse(res: ServerResponse, frames: readonly string[], options: SseWriteOptions = {}): Promise<void> {
  return writeStream(res, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" }, frames.map((f) => Buffer.from(f, "utf8")), options);
}

/**
 * Writes `frames` (SSE text, binary event-stream messages) as a streamed 200 response with
 * `headers`, as `options` say — cut into `splitBytes` pieces across frame boundaries, or held open
 * after `hangAfterFrames`; resolves when done or dropped.
 */
export async function writeStream(res: ServerResponse, headers: Record<string, string>, frames: readonly Uint8Array[], options: SseWriteOptions = {}): Promise<void> {
  res.writeHead(200, headers);
  const hang = options.hangAfterFrames !== undefined;
  const cutAt = options.cutInFrame;
  const half = (frame: Uint8Array | undefined) => (frame ?? new Uint8Array(0)).subarray(0, Math.floor((frame?.length ?? 0) / 2));
  const sent = hang ? frames.slice(0, options.hangAfterFrames)
    : cutAt !== undefined ? [...frames.slice(0, cutAt), half(frames[cutAt])]
    : frames;
  const pieces = options.splitBytes ? cut(Buffer.concat(sent), options.splitBytes) : sent.map((f) => Buffer.from(f));
  for (const piece of pieces) {
    if (res.destroyed) return;
    res.write(piece);
    await pause(1); // apart in time, so the client reads them as separate chunks
  }
  if (cutAt !== undefined) {
    res.destroy();
    return;
  }
  if (hang) {
    const keepAlive = options.keepAlive;
    const pinger = keepAlive ? setInterval(() => {
      if (!res.destroyed) res.write(keepAlive.frame);
    }, keepAlive.everyMs) : undefined;
    await new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once("close", () => resolve())));
    clearInterval(pinger);
    return;
  }
  res.end();
}

function cut(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** Splits `text` into about `count` pieces (at least one), as a model streams it. */
export function piecesOf(text: string, count = 3): string[] {
  if (text.length === 0) return [""];
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Every `cache_control` anywhere in a JSON value. */
export function countKey(value: unknown, key: string): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countKey(v, key), 0);
  if (typeof value !== "object" || value === null) return 0;
  return Object.entries(value).reduce((n, [k, v]) => n + (k === key ? 1 : 0) + countKey(v, key), 0);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * What every fake model server shares: the replies queued one a request, what the server was
 * sent, the requests its checks refused (`violations`), the responses the client dropped. A
 * subclass names its route and answers each request (`answer`).
 */
export abstract class QueuedFakeServer<Reply> {
  /** The requests refused by the fake's checks of what the real API would refuse, as its message would say. */
  readonly violations: string[] = [];
  protected readonly replies: Reply[] = [];

  protected constructor(protected readonly core: FakeServerCore) {}

  /** Starts a server answering POST `route` with the instance `make` builds. */
  protected static async serve<S extends QueuedFakeServer<unknown>>(route: string | RegExp, make: (core: FakeServerCore) => S): Promise<S> {
    let self: S | undefined;
    const core = await startFakeServer(route, (req, res) => self!.answer(req, res));
    self = make(core);
    return self;
  }

  protected abstract answer(req: RecordedRequest, res: ServerResponse): Promise<void>;

  get requests(): RecordedRequest[] {
    return this.core.requests;
  }

  /** The request bodies received, in order. */
  get bodies(): any[] {
    return this.core.requests.map((r) => r.body);
  }

  /** Responses the client abandoned mid-way. */
  get dropped(): number {
    return this.core.dropped.count;
  }

  /** Queues replies, one a request, in order. */
  reply(...replies: Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  close(): Promise<void> {
    return this.core.close();
  }
}
