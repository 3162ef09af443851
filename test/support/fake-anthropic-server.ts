/**
 * A fake Anthropic Messages API on 127.0.0.1: answers POST /v1/messages with the SSE frames the
 * real API sends (message_start, content_block_start / _delta / _stop, ping, message_delta with
 * stop_reason and usage, message_stop), or with an HTTP error as the real API shapes it. Replies
 * come from a queue; every request is recorded, and checked as the real API would check it —
 * each tool_use answered by a tool_result in the next message, tool results first, no blank
 * text, at most four cache marks, no 1-hour mark after a 5-minute one. A request that fails a
 * check gets a 400 and is listed in
 * `violations`, so a test can assert there were none (the codex-rs habit).
 *
 * `startVertex` serves the same replies as Vertex AI serves Anthropic's models (see there); the
 * Bedrock fake (fake-bedrock-server.ts) sends the same events in AWS event-stream frames.
 */
import type { ServerResponse } from "node:http";
import { countKey, piecesOf, sendJson, sendText, sseFrame, writeSse, QueuedFakeServer, type RecordedRequest } from "./fake-sse-server.js";

export type FakeAnthropicBlock =
  | { type: "text"; text: string }
  /** Extended thinking: the (summarized) reasoning text and its signature, streamed as the API does. */
  | { type: "thinking"; thinking: string }
  /** `rawJson` is sent as the input's JSON verbatim (to send a malformed one). */
  | { type: "tool_use"; id: string; name: string; input?: unknown; rawJson?: string };

export interface FakeAnthropicUsage {
  input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** The split of `cache_creation_input_tokens` by TTL; sent only when given. */
  cache_creation?: { ephemeral_1h_input_tokens: number; ephemeral_5m_input_tokens: number };
  output_tokens?: number;
  /** Of `output_tokens`, the reasoning ones: sent as `output_tokens_details.thinking_tokens` only when given. */
  thinking_tokens?: number;
}

export type FakeAnthropicReply =
  | FakeAnthropicStream
  /** `rawBody` replaces the JSON error body (a proxy's plain-text or HTML page). */
  | { kind: "http_error"; status: number; type: string; message: string; headers?: Record<string, string>; rawBody?: string }
  /** An error from Google's side of Vertex AI: `{"error":{"code","message","status"}}` (a Vertex fake only). */
  | { kind: "google_error"; status: number; googleStatus: string; message: string };

/** One streamed message. */
export interface FakeAnthropicStream {
      kind: "stream";
      blocks: FakeAnthropicBlock[];
      /** Default: `tool_use` when a block is one, else `end_turn`. */
      stopReason?: string;
      usage?: FakeAnthropicUsage;
      /** Cut the SSE bytes into pieces of this size. */
      splitBytes?: number;
      /** Send this many frames, then hold the response open. */
      hangAfterFrames?: number;
      /** While held open, send a `ping` event every this many ms (as the real API does on a slow stream). */
      pingEveryMs?: number;
      /** Send this many whole frames and half of the next, then drop the connection (a stream cut mid-event). */
      cutInFrame?: number;
      /** Send this many frames, then an `event: error` frame, and end. */
      errorAfterFrames?: { frames: number; type: string; message: string };
}

export const DEFAULT_ANTHROPIC_USAGE: Required<Omit<FakeAnthropicUsage, "cache_creation" | "thinking_tokens">> = {
  input_tokens: 12,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  output_tokens: 7,
};

/** Vertex AI's side of a fake: the project, region and bearer token it expects, and the STS token exchange it answers for `external_account` credentials. */
export interface FakeVertexOptions {
  project: string;
  region: string;
  /** The access token requests must carry (`Authorization: Bearer …`). */
  token: string;
  /** The subject token the STS exchange at `/v1/token` must be sent for that access token. */
  subjectToken?: string;
}

/** Vertex AI's `:streamRawPredict` (and `:rawPredict`) path; the model is the last segment's head. */
const VERTEX_ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(streamRawPredict|rawPredict)$/;
/** Where the fake answers a Google STS token exchange (an `external_account` file's `token_url`). */
export const FAKE_STS_PATH = "/v1/token";

export class FakeAnthropicServer extends QueuedFakeServer<FakeAnthropicReply> {
  private served = 0;
  private vertex: FakeVertexOptions | null = null;

  static start(): Promise<FakeAnthropicServer> {
    return QueuedFakeServer.serve("/v1/messages", (core) => new FakeAnthropicServer(core));
  }

  /**
   * The same fake as Vertex AI serves Anthropic's models: POST `:streamRawPredict` under the
   * project and region, the model in the path and not the body, `anthropic_version` in the body,
   * a Bearer token; plus the STS token exchange at `FAKE_STS_PATH`.
   */
  static async startVertex(options: FakeVertexOptions): Promise<FakeAnthropicServer> {
    const route = new RegExp(`${VERTEX_ROUTE.source}|^${FAKE_STS_PATH}$`);
    const server = await QueuedFakeServer.serve(route, (core) => new FakeAnthropicServer(core));
    server.vertex = options;
    return server;
  }

  /** The base URL to give the SDK (no `/v1`; a Vertex fake's has it, as the Vertex SDK takes it). */
  get baseUrl(): string {
    return this.vertex ? `${this.core.origin}/v1` : this.core.origin;
  }

  /** The STS endpoint (a Vertex fake's), for an `external_account` credentials file's `token_url`. */
  get tokenUrl(): string {
    return `${this.core.origin}${FAKE_STS_PATH}`;
  }

  protected async answer(req: RecordedRequest, res: ServerResponse): Promise<void> {
    let body = req.body;
    if (this.vertex) {
      if (req.path === FAKE_STS_PATH) return this.exchangeToken(req, res, this.vertex);
      const refused = vertexRefusal(req, this.vertex);
      if (refused) return sendJson(res, refused.status, googleErrorBody(refused.status, refused.googleStatus, refused.message));
      const problem = checkVertexRequest(req);
      if (problem) {
        this.violations.push(problem);
        return sendJson(res, 400, googleErrorBody(400, "INVALID_ARGUMENT", problem));
      }
      body = { ...req.body, model: VERTEX_ROUTE.exec(req.path)![3] };
    }
    const problem = checkAnthropicRequest(body);
    if (problem) {
      this.violations.push(problem);
      return sendJson(res, 400, errorBody("invalid_request_error", problem));
    }
    const reply = this.replies.shift();
    if (!reply) return sendJson(res, 400, errorBody("invalid_request_error", "fake server: no reply queued for this request"));
    const n = ++this.served;
    if (reply.kind === "google_error") return sendJson(res, reply.status, googleErrorBody(reply.status, reply.googleStatus, reply.message));
    if (reply.kind === "http_error") {
      if (reply.rawBody !== undefined) return sendText(res, reply.status, reply.rawBody, reply.headers);
      return sendJson(res, reply.status, errorBody(reply.type, reply.message), reply.headers);
    }
    let frames = anthropicFrames(reply, String(body.model), n);
    if (reply.errorAfterFrames) {
      const { frames: count, type, message } = reply.errorAfterFrames;
      frames = [...frames.slice(0, count), sseFrame("error", errorBody(type, message))];
    }
    await writeSse(res, frames, {
      splitBytes: reply.splitBytes, hangAfterFrames: reply.hangAfterFrames, cutInFrame: reply.cutInFrame,
      ...(reply.pingEveryMs !== undefined ? { keepAlive: { frame: sseFrame("ping", { type: "ping" }), everyMs: reply.pingEveryMs } } : {}),
    });
  }

  /** Google STS (RFC 8693) as the auth library calls it for `external_account` credentials: a form body with the subject token. */
  private exchangeToken(req: RecordedRequest, res: ServerResponse, vertex: FakeVertexOptions): void {
    const form = new URLSearchParams(req.rawBody.toString("utf8"));
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:token-exchange" || vertex.subjectToken === undefined || form.get("subject_token") !== vertex.subjectToken) {
      return sendJson(res, 400, { error: "invalid_grant", error_description: "fake STS: unexpected grant or subject token" });
    }
    sendJson(res, 200, { access_token: vertex.token, issued_token_type: "urn:ietf:params:oauth:token-type:access_token", token_type: "Bearer", expires_in: 3600 });
  }
}

/** Google's answer to a request without the expected bearer token (401), or for another project (403). */
function vertexRefusal(req: RecordedRequest, vertex: FakeVertexOptions): { status: number; googleStatus: string; message: string } | null {
  if (req.headers.authorization !== `Bearer ${vertex.token}`) {
    return { status: 401, googleStatus: "UNAUTHENTICATED", message: "Request had invalid authentication credentials. Expected OAuth 2 access token." };
  }
  const [, project, region] = VERTEX_ROUTE.exec(req.path)!;
  if (project !== vertex.project) return { status: 403, googleStatus: "PERMISSION_DENIED", message: `Permission denied on resource project ${project}.` };
  if (region !== vertex.region) return { status: 400, googleStatus: "INVALID_ARGUMENT", message: `fake Vertex: region ${region}, expected ${vertex.region}` };
  return null;
}

/** What Vertex AI would reject before the model sees the request: a model named in the body, no `anthropic_version`, a non-streaming call. */
function checkVertexRequest(req: RecordedRequest): string | null {
  if (req.body?.model !== undefined) return "model: Extra inputs are not permitted (the model is named in the path on Vertex AI)";
  if (typeof req.body?.anthropic_version !== "string") return "anthropic_version: Field required";
  if (!req.path.endsWith(":streamRawPredict")) return `fake Vertex: expected :streamRawPredict, got ${req.path}`;
  return null;
}

export function googleErrorBody(code: number, status: string, message: string) {
  return { error: { code, message, status } };
}

function errorBody(type: string, message: string) {
  return { type: "error", error: { type, message }, request_id: "req_fake" };
}

/** The frames the real API sends for one message. */
export function anthropicFrames(reply: FakeAnthropicStream, model: string, n: number): string[] {
  return anthropicEvents(reply, model, n).map((event) => sseFrame(event.type, event));
}

/** The events of one message, each an SSE frame's data (the Messages API) or a chunk's (Bedrock). */
export function anthropicEvents(reply: FakeAnthropicStream, model: string, n: number): Array<{ type: string } & Record<string, unknown>> {
  const usage = { ...DEFAULT_ANTHROPIC_USAGE, ...reply.usage };
  const frames: Array<{ type: string } & Record<string, unknown>> = [
    {
      type: "message_start",
      message: {
        id: `msg_fake_${n}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          ...(reply.usage?.cache_creation ? { cache_creation: reply.usage.cache_creation } : {}),
          output_tokens: 1,
        },
      },
    },
  ];
  for (const [index, block] of reply.blocks.entries()) {
    frames.push(...blockEvents(block, index));
    if (index === 0) frames.push({ type: "ping" });
  }
  const stopReason = reply.stopReason ?? (reply.blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  frames.push(
    { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: {
      output_tokens: usage.output_tokens,
      ...(reply.usage?.thinking_tokens !== undefined ? { output_tokens_details: { thinking_tokens: reply.usage.thinking_tokens } } : {}),
    } },
    { type: "message_stop" },
  );
  return frames;
}

function blockEvents(block: FakeAnthropicBlock, index: number): Array<{ type: string } & Record<string, unknown>> {
  const start = (content_block: unknown) => ({ type: "content_block_start", index, content_block });
  const delta = (d: unknown) => ({ type: "content_block_delta", index, delta: d });
  const stop = { type: "content_block_stop", index };
  if (block.type === "text") {
    return [start({ type: "text", text: "" }), ...piecesOf(block.text).map((text) => delta({ type: "text_delta", text })), stop];
  }
  if (block.type === "thinking") {
    return [
      start({ type: "thinking", thinking: "", signature: "" }),
      ...piecesOf(block.thinking).map((thinking) => delta({ type: "thinking_delta", thinking })),
      delta({ type: "signature_delta", signature: "sig_fake" }),
      stop,
    ];
  }
  const json = block.rawJson ?? JSON.stringify(block.input ?? {});
  return [
    start({ type: "tool_use", id: block.id, name: block.name, input: {} }),
    delta({ type: "input_json_delta", partial_json: "" }),
    ...piecesOf(json, 4).map((partial_json) => delta({ type: "input_json_delta", partial_json })),
    stop,
  ];
}

/** What the real API would reject in `body`, as its message would say; null when it is fine. */
export function checkAnthropicRequest(body: any): string | null {
  if (typeof body?.model !== "string" || typeof body.max_tokens !== "number") return "model and max_tokens are required";
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return "messages: at least one message is required";
  if (messages[0].role !== "user") return "messages: first message must use the \"user\" role";
  const marks = countKey([body.system, body.tools, messages], "cache_control");
  if (marks > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marks}.`;
  const ttlProblem = checkTtlOrder(body);
  if (ttlProblem) return ttlProblem;
  for (const [i, m] of messages.entries()) {
    const content: any[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (!Array.isArray(content) || content.length === 0) return `messages.${i}: content must be non-empty`;
    if (content.some((b) => b.type === "text" && String(b.text).trim() === "")) return `messages.${i}: text content blocks must be non-empty`;
    const firstOther = content.findIndex((b) => b.type !== "tool_result");
    if (firstOther >= 0 && content.slice(firstOther).some((b) => b.type === "tool_result")) {
      return `messages.${i}: tool_result blocks must come before any other content`;
    }
    const problem = checkToolPairing(messages, i);
    if (problem) return problem;
  }
  return null;
}

/** In render order (tools, system, messages), a `ttl: "1h"` mark may not follow a 5-minute one. */
function checkTtlOrder(body: any): string | null {
  const blocks: any[] = [
    ...(Array.isArray(body.tools) ? body.tools : []),
    ...(Array.isArray(body.system) ? body.system : []),
    ...(Array.isArray(body.messages) ? body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])) : []),
  ];
  let seenShort = false;
  for (const block of blocks) {
    const ttl = block?.cache_control ? (block.cache_control.ttl ?? "5m") : null;
    if (ttl === "1h" && seenShort) return "a cache_control with ttl='1h' must not come after a cache_control with ttl='5m'";
    if (ttl === "5m") seenShort = true;
  }
  return null;
}

/** Each tool_use answered in the very next message, each tool_result answering the one before. */
function checkToolPairing(messages: any[], i: number): string | null {
  const ids = (m: any, type: string, key: string): string[] =>
    Array.isArray(m?.content) ? m.content.filter((b: any) => b.type === type).map((b: any) => String(b[key])) : [];
  const uses = messages[i].role === "assistant" ? ids(messages[i], "tool_use", "id") : [];
  if (uses.length > 0) {
    const answered = new Set(messages[i + 1]?.role === "user" ? ids(messages[i + 1], "tool_result", "tool_use_id") : []);
    const open = uses.filter((id) => !answered.has(id));
    if (open.length > 0) {
      return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${open.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  const results = messages[i].role === "user" ? ids(messages[i], "tool_result", "tool_use_id") : [];
  const called = new Set(i > 0 ? ids(messages[i - 1], "tool_use", "id") : []);
  const stray = results.filter((id) => !called.has(id));
  if (stray.length > 0) {
    return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  return null;
}
