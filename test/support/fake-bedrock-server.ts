/**
 * A fake AWS Bedrock runtime on 127.0.0.1 serving Anthropic's models: answers POST
 * `/model/{modelId}/invoke-with-response-stream` (InvokeModelWithResponseStream) with the binary
 * AWS event-stream the real service sends — each Anthropic Messages event (the same events as
 * fake-anthropic-server.ts) as a `chunk` event frame whose JSON payload carries it base64-encoded
 * in `bytes`, every frame with its prelude and message CRCs (`@smithy/eventstream-codec`) — or
 * with Bedrock's HTTP errors (`{"message":…}`, the exception's name in `x-amzn-errortype`), or an
 * exception frame mid-stream. Replies come from a queue, as the other fakes' (`reply(...)`).
 *
 * Each request is checked as Bedrock would: a SigV4 `Authorization` naming the expected access
 * key, region and service, `x-amz-date`, the session token when one is expected, and the body
 * Bedrock takes (no `model`, no `stream`, an `anthropic_version`); a request that fails is listed
 * in `violations` and refused (403 for the signature, 400 for the body).
 */
import type { ServerResponse } from "node:http";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { anthropicEvents, checkAnthropicRequest, type FakeAnthropicReply } from "./fake-anthropic-server.js";
import { QueuedFakeServer, sendJson, writeStream, type FakeServerCore, type RecordedRequest } from "./fake-sse-server.js";

type MessageHeaders = Parameters<EventStreamCodec["encode"]>[0]["headers"];

export type FakeBedrockReply =
  | FakeAnthropicReply
  /** An HTTP error as Bedrock sends it: `type` is the exception (`AccessDeniedException`, `ThrottlingException`). */
  | { kind: "aws_error"; status: number; type: string; message: string; headers?: Record<string, string> }
  /** Stream this many chunk frames of `reply`, then an exception frame (`throttlingException`, `internalServerException`), and end. */
  | { kind: "exception_after"; reply: Extract<FakeAnthropicReply, { kind: "stream" }>; frames: number; exception: string; message: string }
  /** Send this many whole frames of `reply` and half of the next, then drop the connection. */
  | { kind: "cut_mid_frame"; reply: Extract<FakeAnthropicReply, { kind: "stream" }>; afterFrames: number };

export interface FakeBedrockOptions {
  /** The access key the SigV4 credential scope must name (default `AKIDFAKEBEDROCK`). */
  accessKeyId?: string;
  region?: string;
  /** The session token requests must carry in `x-amz-security-token` (default: none may be sent). */
  sessionToken?: string;
  /** A Bedrock API key accepted as `Authorization: Bearer …` instead of a signature. */
  bearerToken?: string;
}

const STREAM_ROUTE = /^\/model\/([^/]+)\/invoke-with-response-stream$/;
const codec = new EventStreamCodec((bytes) => Buffer.from(bytes).toString("utf8"), (text) => Buffer.from(text, "utf8"));

export class FakeBedrockServer extends QueuedFakeServer<FakeBedrockReply> {
  private served = 0;
  readonly accessKeyId: string;
  readonly region: string;

  private constructor(core: FakeServerCore, private readonly options: FakeBedrockOptions) {
    super(core);
    this.accessKeyId = options.accessKeyId ?? "AKIDFAKEBEDROCK";
    this.region = options.region ?? "us-east-1";
  }

  static start(options: FakeBedrockOptions = {}): Promise<FakeBedrockServer> {
    return QueuedFakeServer.serve(STREAM_ROUTE, (core) => new FakeBedrockServer(core, options));
  }

  /** The base URL to give the SDK (`ANTHROPIC_BEDROCK_BASE_URL`). */
  get baseUrl(): string {
    return this.core.origin;
  }

  /** The model ids requested, decoded from the paths. */
  get models(): string[] {
    return this.requests.map((r) => decodeURIComponent(STREAM_ROUTE.exec(r.path)?.[1] ?? ""));
  }

  protected async answer(req: RecordedRequest, res: ServerResponse): Promise<void> {
    const bearer = this.options.bearerToken !== undefined && req.headers.authorization === `Bearer ${this.options.bearerToken}`;
    const unsigned = bearer ? null : checkSignature(req, this.accessKeyId, this.region, this.options.sessionToken);
    if (unsigned) {
      this.violations.push(unsigned);
      return sendAwsError(res, 403, "InvalidSignatureException", unsigned);
    }
    const model = decodeURIComponent(STREAM_ROUTE.exec(req.path)![1]!);
    const problem = checkBedrockBody(req.body) ?? checkAnthropicRequest({ ...req.body, model });
    if (problem) {
      this.violations.push(problem);
      return sendAwsError(res, 400, "ValidationException", problem);
    }
    const reply = this.replies.shift();
    if (!reply) return sendAwsError(res, 400, "ValidationException", "fake Bedrock: no reply queued for this request");
    const n = ++this.served;
    switch (reply.kind) {
      case "aws_error":
        return sendAwsError(res, reply.status, reply.type, reply.message, reply.headers);
      case "http_error":
        return sendAwsError(res, reply.status, reply.type, reply.message, reply.headers);
      case "google_error":
        throw new Error("fake Bedrock: a google_error reply is Vertex's");
      case "exception_after": {
        const frames = chunkFrames(reply.reply, model, n).slice(0, reply.frames);
        frames.push(exceptionFrame(reply.exception, reply.message));
        return writeStream(res, STREAM_HEADERS, frames, { splitBytes: reply.reply.splitBytes });
      }
      case "cut_mid_frame": {
        const frames = chunkFrames(reply.reply, model, n);
        const next = frames[reply.afterFrames]!;
        res.writeHead(200, STREAM_HEADERS);
        res.write(Buffer.concat([...frames.slice(0, reply.afterFrames), next.subarray(0, Math.floor(next.length / 2))]));
        await new Promise((resolve) => setTimeout(resolve, 20));
        res.destroy();
        return;
      }
      case "stream": {
        let frames = chunkFrames(reply, model, n);
        if (reply.errorAfterFrames) {
          const { frames: count, type, message } = reply.errorAfterFrames;
          frames = [...frames.slice(0, count), exceptionFrame(type, message)];
        }
        return writeStream(res, STREAM_HEADERS, frames, { splitBytes: reply.splitBytes, hangAfterFrames: reply.hangAfterFrames });
      }
    }
  }
}

const STREAM_HEADERS = {
  "content-type": "application/vnd.amazon.eventstream",
  "x-amzn-bedrock-content-type": "application/json",
  "x-amzn-requestid": "fake-request-id",
};

/** One message's events as Bedrock's chunk frames; the last carries Bedrock's invocation metrics, as the service adds them. */
export function chunkFrames(reply: Extract<FakeAnthropicReply, { kind: "stream" }>, model: string, n: number): Uint8Array[] {
  const events = anthropicEvents(reply, model, n);
  const last = events.at(-1)!;
  const usage = { input: Number(reply.usage?.input_tokens ?? 12), output: Number(reply.usage?.output_tokens ?? 7) };
  events[events.length - 1] = {
    ...last,
    "amazon-bedrock-invocationMetrics": { inputTokenCount: usage.input, outputTokenCount: usage.output, invocationLatency: 100, firstByteLatency: 50 },
  };
  return events.map((event) => eventFrame({ bytes: Buffer.from(JSON.stringify(event), "utf8").toString("base64") }));
}

/** An event-stream `chunk` event frame with `payload` as its JSON body. */
export function eventFrame(payload: unknown): Uint8Array {
  return encodeFrame({
    ":event-type": { type: "string", value: "chunk" },
    ":content-type": { type: "string", value: "application/json" },
    ":message-type": { type: "string", value: "event" },
  }, payload);
}

/** An exception frame (`:exception-type` is the camel-cased exception: `throttlingException`). */
export function exceptionFrame(exception: string, message: string): Uint8Array {
  return encodeFrame({
    ":exception-type": { type: "string", value: exception },
    ":content-type": { type: "string", value: "application/json" },
    ":message-type": { type: "string", value: "exception" },
  }, { message });
}

function encodeFrame(headers: MessageHeaders, payload: unknown): Uint8Array {
  return codec.encode({ headers, body: Buffer.from(JSON.stringify(payload), "utf8") });
}

function sendAwsError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { message }, { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": "fake-request-id", ...headers });
}

/** What is wrong with the request's SigV4 signature's shape, or null: the algorithm, the credential scope, the signed headers, the date. */
function checkSignature(req: RecordedRequest, accessKeyId: string, region: string, sessionToken: string | undefined): string | null {
  const auth = String(req.headers.authorization ?? "");
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return `Authorization is not a SigV4 signature: ${JSON.stringify(auth)}`;
  const [, key, day, scopeRegion, service, signed] = m;
  if (key !== accessKeyId) return `The security token included in the request is invalid (access key ${key}, expected ${accessKeyId})`;
  if (scopeRegion !== region || service !== "bedrock") return `Credential should be scoped to a valid region and service: ${scopeRegion}/${service}`;
  const date = String(req.headers["x-amz-date"] ?? "");
  if (!date.startsWith(day!)) return `x-amz-date ${JSON.stringify(date)} is not the credential's day ${day}`;
  const signedHeaders = signed!.split(";");
  for (const header of ["host", "x-amz-date", ...(sessionToken !== undefined ? ["x-amz-security-token"] : [])]) {
    if (!signedHeaders.includes(header)) return `SignedHeaders lacks ${header}`;
  }
  const token = req.headers["x-amz-security-token"];
  if (token !== sessionToken) return `x-amz-security-token ${JSON.stringify(token)}, expected ${JSON.stringify(sessionToken)}`;
  return null;
}

/** What Bedrock's InvokeModel would reject in an Anthropic body: the model or `stream` in it, no `anthropic_version`. */
function checkBedrockBody(body: any): string | null {
  if (body === undefined) return "Malformed input request: the body is not JSON";
  if (body.model !== undefined) return "Malformed input request: extraneous key [model] is not permitted";
  if (body.stream !== undefined) return "Malformed input request: extraneous key [stream] is not permitted";
  if (typeof body.anthropic_version !== "string") return "Malformed input request: #: required key [anthropic_version] not found";
  return null;
}
