/**
 * A fake Gemini API on 127.0.0.1: answers POST `/v1beta/models/MODEL:streamGenerateContent`
 * (`?alt=sse`, the route the SDK calls) with SSE as the real API streams it — each `data:` a whole
 * GenerateContentResponse with `candidates[0].content.parts` (text in pieces, a thought signature
 * on the part that carries it, each function call whole in one part), the finish reason and the
 * usage on the last — or with an HTTP error in Google's shape (`{error: {code, message, status}}`,
 * a `RetryInfo` detail on a 429 when asked). Replies come from a queue; every request is recorded
 * and checked as the real API would: the key in `x-goog-api-key`, each `functionResponse`
 * answering a preceding `functionCall` by name (and id when the call had one) in the next user
 * turn, each call answered, and — as Gemini 3 requires — the first function call of each model
 * turn carrying its thought signature when `requireSignatures` is on. A request that fails a
 * check gets a 400 INVALID_ARGUMENT and is listed in `violations`.
 */
import type { ServerResponse } from "node:http";
import { piecesOf, sendJson, sseFrame, writeSse, QueuedFakeServer, type RecordedRequest } from "./fake-sse-server.js";

export interface FakeGeminiCall {
  name: string;
  args?: unknown;
  /** The call's id; absent: sent without one, as the Gemini API often does. */
  id?: string;
}

export interface FakeGeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export type FakeGeminiReply =
  | {
      kind: "stream";
      text?: string;
      calls?: FakeGeminiCall[];
      /** A thought signature on the first call's part (or on the text's first part without calls), as Gemini 2.5/3 send it. */
      signature?: string;
      /** A thought signature on an empty text part after everything else (a thinking model's answer without calls). */
      trailingSignature?: string;
      finishReason?: string;
      usage?: FakeGeminiUsage;
      /** No candidates, `promptFeedback.blockReason` set: the prompt was blocked. */
      blockPrompt?: string;
      splitBytes?: number;
      hangAfterFrames?: number;
      /** Send this many whole frames and half of the next, then drop the connection (a stream cut mid-event). */
      cutInFrame?: number;
      /** Send this many frames and end the body there (a stream cut short). */
      endAfterFrames?: number;
      /** Send this raw text as one more frame's data (a malformed frame). */
      rawFrame?: string;
    }
  | {
      kind: "http_error"; status: number; googleStatus: string; message: string;
      /** A `RetryInfo` detail asking for this wait (`"2s"`), as on the API's 429s. */
      retryDelay?: string;
      /** An `ErrorInfo` detail with this reason (`API_KEY_INVALID`), as on the API's bad-key 400. */
      errorInfoReason?: string;
      headers?: Record<string, string>;
    };

export const DEFAULT_GEMINI_USAGE: FakeGeminiUsage = { promptTokenCount: 20, candidatesTokenCount: 6 };
const ROUTE = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/;

export class FakeGeminiServer extends QueuedFakeServer<FakeGeminiReply> {
  /** Turn on Gemini 3's check: each model turn's first function call must carry its thought signature. */
  requireSignatures = false;

  static start(): Promise<FakeGeminiServer> {
    return QueuedFakeServer.serve(ROUTE, (core) => new FakeGeminiServer(core));
  }

  /** The base URL to give the SDK (no version: the SDK adds `/v1beta`). */
  get baseUrl(): string {
    return this.core.origin;
  }

  protected async answer(req: RecordedRequest, res: ServerResponse): Promise<void> {
    if (req.query.get("alt") !== "sse") return sendJson(res, 400, errorBody(400, "INVALID_ARGUMENT", "fake server: streamGenerateContent is answered as SSE only (alt=sse)"));
    if (!req.headers["x-goog-api-key"]) {
      return sendJson(res, 403, errorBody(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."));
    }
    const problem = checkGeminiRequest(req.body, this.requireSignatures);
    if (problem) {
      this.violations.push(problem);
      return sendJson(res, 400, errorBody(400, "INVALID_ARGUMENT", problem));
    }
    const reply = this.replies.shift();
    if (!reply) return sendJson(res, 400, errorBody(400, "INVALID_ARGUMENT", "fake server: no reply queued for this request"));
    if (reply.kind === "http_error") {
      const details = [
        ...(reply.errorInfoReason ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: reply.errorInfoReason, domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } }] : []),
        ...(reply.retryDelay ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: reply.retryDelay }] : []),
      ];
      return sendJson(res, reply.status, errorBody(reply.status, reply.googleStatus, reply.message, details.length > 0 ? details : undefined), reply.headers);
    }
    const model = ROUTE.exec(req.path)![1]!;
    let frames = geminiFrames(reply, model);
    if (reply.rawFrame !== undefined) frames = [...frames.slice(0, 1), `data: ${reply.rawFrame}\r\n\r\n`, ...frames.slice(1)];
    if (reply.endAfterFrames !== undefined) frames = frames.slice(0, reply.endAfterFrames);
    await writeSse(res, frames, { splitBytes: reply.splitBytes, hangAfterFrames: reply.hangAfterFrames, cutInFrame: reply.cutInFrame });
  }
}

function errorBody(code: number, status: string, message: string, details?: unknown[]) {
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

/** The frames the real API streams for one answer: text in pieces, each call whole, the finish and usage on the last. */
export function geminiFrames(reply: Extract<FakeGeminiReply, { kind: "stream" }>, model: string): string[] {
  const frame = (data: unknown) => sseFrame(null, data).replace(/\n\n$/, "\r\n\r\n"); // Google ends frames with CRLF CRLF
  const chunk = (parts: unknown[], last: boolean) => ({
    candidates: [{ content: { parts, role: "model" }, ...(last ? { finishReason: reply.finishReason ?? "STOP" } : {}), index: 0 }],
    ...(last ? { usageMetadata: usageOf(reply.usage ?? DEFAULT_GEMINI_USAGE) } : {}),
    modelVersion: model,
    responseId: "fake-response-id",
  });
  if (reply.blockPrompt) {
    return [frame({ promptFeedback: { blockReason: reply.blockPrompt }, usageMetadata: usageOf(reply.usage ?? DEFAULT_GEMINI_USAGE), modelVersion: model })];
  }
  const partsList: unknown[][] = [];
  const calls = reply.calls ?? [];
  const texts = reply.text === undefined ? [] : piecesOf(reply.text);
  for (const [i, piece] of texts.entries()) {
    partsList.push([{ text: piece, ...(i === 0 && calls.length === 0 && reply.signature ? { thoughtSignature: reply.signature } : {}) }]);
  }
  if (calls.length > 0) {
    partsList.push(calls.map((c, i) => ({
      functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args ?? {} },
      ...(i === 0 && reply.signature ? { thoughtSignature: reply.signature } : {}),
    })));
  }
  if (reply.trailingSignature) partsList.push([{ text: "", thoughtSignature: reply.trailingSignature }]);
  if (partsList.length === 0) partsList.push([]);
  return partsList.map((parts, i) => frame(chunk(parts, i === partsList.length - 1)));
}

function usageOf(u: FakeGeminiUsage) {
  const thoughts = u.thoughtsTokenCount ?? 0;
  return {
    promptTokenCount: u.promptTokenCount,
    candidatesTokenCount: u.candidatesTokenCount,
    totalTokenCount: u.promptTokenCount + u.candidatesTokenCount + thoughts,
    ...(u.cachedContentTokenCount ? { cachedContentTokenCount: u.cachedContentTokenCount } : {}),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    promptTokensDetails: [{ modality: "TEXT", tokenCount: u.promptTokenCount }],
  };
}

/** What the real API would reject in `body`, as its message would say; null when it is fine. */
export function checkGeminiRequest(body: any, requireSignatures: boolean): string | null {
  const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
  if (contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified";
  let open: Array<{ name: string; id?: string }> = [];
  for (const [i, content] of contents.entries()) {
    const parts: any[] = Array.isArray(content.parts) ? content.parts : [];
    if (parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    if (content.role === "model") {
      if (open.length > 0) return `Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn. (contents[${i}])`;
      const calls = parts.filter((p) => p.functionCall);
      if (requireSignatures && calls.length > 0 && typeof calls[0].thoughtSignature !== "string") {
        return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. (contents[${i}].parts)`;
      }
      open = calls.map((p) => ({ name: p.functionCall.name, ...(p.functionCall.id ? { id: p.functionCall.id } : {}) }));
      continue;
    }
    const responses = parts.filter((p) => p.functionResponse);
    for (const [k, part] of responses.entries()) {
      const call = open[k];
      const r = part.functionResponse;
      if (!call || call.name !== r.name || (call.id !== undefined && call.id !== r.id) || (call.id === undefined && r.id !== undefined)) {
        return `Please ensure that function response turn comes immediately after a function call turn, answering its calls in order. (contents[${i}] answers ${r.name} ${r.id ?? "(no id)"})`;
      }
      if (typeof r.response !== "object" || r.response === null) return `* GenerateContentRequest.contents[${i}].parts[${k}].function_response.response: must be an object`;
    }
    if (responses.length !== open.length) {
      return `Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn. (contents[${i}])`;
    }
    open = [];
  }
  if (open.length > 0) return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
  return null;
}
