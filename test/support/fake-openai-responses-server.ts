/**
 * A fake OpenAI Responses API on 127.0.0.1: answers POST /v1/responses with the SSE events the
 * real API sends (`event: response.created` … `response.output_item.added`, text deltas,
 * `response.function_call_arguments.delta`, `response.output_item.done` with the whole item, a
 * reasoning item with its `encrypted_content`, then `response.completed` or
 * `response.incomplete` carrying the usage — each with its `sequence_number`), or with an HTTP
 * error as the real API shapes it. Replies come from a queue; every request is recorded and
 * checked as the real API would: each `function_call` answered by a `function_call_output`, each
 * output answering a call, and under `store: false` every reasoning item carrying its encrypted
 * content (the server keeps nothing to look an id up in). A request that fails a check gets a 400
 * and is listed in `violations`.
 */
import type { ServerResponse } from "node:http";
import { piecesOf, sendJson, sseFrame, writeSse, QueuedFakeServer, type RecordedRequest } from "./fake-sse-server.js";

export interface FakeResponsesCall {
  callId: string;
  name: string;
  arguments?: unknown;
  /** Sent verbatim as the arguments string (to send a malformed one). */
  rawArguments?: string;
}

export interface FakeResponsesReasoning {
  id: string;
  /** The opaque encrypted reasoning the real API sends under `include: ["reasoning.encrypted_content"]`. */
  encrypted: string;
  summary?: string[];
}

export interface FakeResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

export type FakeResponsesReply =
  | {
      kind: "stream";
      /** Output items in order: reasoning first as a reasoning model sends it, then text, then calls. */
      reasoning?: FakeResponsesReasoning[];
      text?: string;
      refusal?: string;
      calls?: FakeResponsesCall[];
      /** `incomplete`: ends with `response.incomplete` for this reason. */
      incomplete?: "max_output_tokens" | "content_filter";
      /** `failed`: ends with `response.failed` carrying this error. */
      failed?: { code: string; message: string };
      usage?: FakeResponsesUsage;
      splitBytes?: number;
      hangAfterFrames?: number;
      /** Send this many whole frames and half of the next, then drop the connection (a stream cut mid-event). */
      cutInFrame?: number;
      /** Send this many frames, then an `error` event, and end. */
      errorAfterFrames?: { frames: number; code: string; message: string };
      /** Send this many frames and end the body there (a stream cut short). */
      endAfterFrames?: number;
    }
  | { kind: "http_error"; status: number; type: string; message: string; code?: string; headers?: Record<string, string> };

export const DEFAULT_RESPONSES_USAGE: FakeResponsesUsage = { input_tokens: 20, output_tokens: 6, cached_tokens: 0, reasoning_tokens: 0 };

export class FakeOpenAIResponsesServer extends QueuedFakeServer<FakeResponsesReply> {
  static start(): Promise<FakeOpenAIResponsesServer> {
    return QueuedFakeServer.serve("/v1/responses", (core) => new FakeOpenAIResponsesServer(core));
  }

  /** The base URL to give the SDK (with `/v1`). */
  get baseUrl(): string {
    return `${this.core.origin}/v1`;
  }

  protected async answer(req: RecordedRequest, res: ServerResponse): Promise<void> {
    const problem = checkResponsesRequest(req.body);
    if (problem) {
      this.violations.push(problem);
      return sendJson(res, 400, errorBody("invalid_request_error", problem, null));
    }
    const reply = this.replies.shift();
    if (!reply) return sendJson(res, 400, errorBody("invalid_request_error", "fake server: no reply queued for this request", null));
    if (reply.kind === "http_error") return sendJson(res, reply.status, errorBody(reply.type, reply.message, reply.code ?? null), reply.headers);
    let frames = responsesFrames(reply, String(req.body.model));
    if (reply.errorAfterFrames) {
      const { frames: count, code, message } = reply.errorAfterFrames;
      frames = [...frames.slice(0, count), sseFrame("error", { type: "error", code, message, param: null, sequence_number: count })];
    }
    if (reply.endAfterFrames !== undefined) frames = frames.slice(0, reply.endAfterFrames);
    await writeSse(res, frames, { splitBytes: reply.splitBytes, hangAfterFrames: reply.hangAfterFrames, cutInFrame: reply.cutInFrame });
  }
}

function errorBody(type: string, message: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

/** The events the real API sends for one response, in its order, numbered. */
export function responsesFrames(reply: Extract<FakeResponsesReply, { kind: "stream" }>, model: string): string[] {
  const frames: string[] = [];
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) => frames.push(sseFrame(type, { type, ...fields, sequence_number: sequence++ }));
  const output: any[] = [];
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: "resp_fake", object: "response", created_at: 1_700_000_000, model, status, output, store: false, error: null, incomplete_details: null, ...extra,
  });
  send("response.created", { response: { ...response("in_progress"), output: [] } });
  send("response.in_progress", { response: { ...response("in_progress"), output: [] } });
  for (const r of reply.reasoning ?? []) {
    const index = output.length;
    send("response.output_item.added", { output_index: index, item: { id: r.id, type: "reasoning", summary: [] } });
    for (const [k, text] of (r.summary ?? []).entries()) {
      send("response.reasoning_summary_part.added", { item_id: r.id, output_index: index, summary_index: k, part: { type: "summary_text", text: "" } });
      for (const piece of piecesOf(text)) send("response.reasoning_summary_text.delta", { item_id: r.id, output_index: index, summary_index: k, delta: piece });
      send("response.reasoning_summary_text.done", { item_id: r.id, output_index: index, summary_index: k, text });
    }
    const item = { id: r.id, type: "reasoning", summary: (r.summary ?? []).map((text) => ({ type: "summary_text", text })), encrypted_content: r.encrypted };
    output.push(item);
    send("response.output_item.done", { output_index: index, item });
  }
  for (const [kind, text] of [["output_text", reply.text], ["refusal", reply.refusal]] as const) {
    if (text === undefined) continue;
    const index = output.length;
    const id = `msg_fake_${index}`;
    send("response.output_item.added", { output_index: index, item: { id, type: "message", role: "assistant", status: "in_progress", content: [] } });
    send("response.content_part.added", { item_id: id, output_index: index, content_index: 0, part: kind === "output_text" ? { type: "output_text", text: "", annotations: [] } : { type: "refusal", refusal: "" } });
    for (const piece of piecesOf(text)) send(`response.${kind}.delta`, { item_id: id, output_index: index, content_index: 0, delta: piece, ...(kind === "output_text" ? { logprobs: [] } : {}) });
    const part = kind === "output_text" ? { type: "output_text", text, annotations: [] } : { type: "refusal", refusal: text };
    send(`response.${kind}.done`, { item_id: id, output_index: index, content_index: 0, ...(kind === "output_text" ? { text, logprobs: [] } : { refusal: text }) });
    send("response.content_part.done", { item_id: id, output_index: index, content_index: 0, part });
    const item = { id, type: "message", role: "assistant", status: "completed", content: [part] };
    output.push(item);
    send("response.output_item.done", { output_index: index, item });
  }
  for (const call of reply.calls ?? []) {
    const index = output.length;
    const id = `fc_fake_${index}`;
    const args = call.rawArguments ?? JSON.stringify(call.arguments ?? {});
    send("response.output_item.added", { output_index: index, item: { id, type: "function_call", call_id: call.callId, name: call.name, arguments: "", status: "in_progress" } });
    for (const piece of piecesOf(args, 4)) send("response.function_call_arguments.delta", { item_id: id, output_index: index, delta: piece });
    send("response.function_call_arguments.done", { item_id: id, output_index: index, arguments: args });
    const item = { id, type: "function_call", call_id: call.callId, name: call.name, arguments: args, status: "completed" };
    output.push(item);
    send("response.output_item.done", { output_index: index, item });
  }
  const u = { ...DEFAULT_RESPONSES_USAGE, ...reply.usage };
  const usage = {
    input_tokens: u.input_tokens, input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
    output_tokens: u.output_tokens, output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: u.input_tokens + u.output_tokens,
  };
  if (reply.failed) send("response.failed", { response: response("failed", { error: reply.failed, usage: null }) });
  else if (reply.incomplete) send("response.incomplete", { response: response("incomplete", { incomplete_details: { reason: reply.incomplete }, usage }) });
  else send("response.completed", { response: response("completed", { usage }) });
  return frames;
}

/** What the real API would reject in `body`, as its message would say; null when it is fine. */
export function checkResponsesRequest(body: any): string | null {
  if (typeof body?.model !== "string") return "Missing required parameter: 'model'.";
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  if (input.length === 0) return "Invalid 'input': empty array.";
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [i, item] of input.entries()) {
    if (item.type === "function_call") calls.add(item.call_id);
    if (item.type === "function_call_output") {
      if (!calls.has(item.call_id)) return `No tool call found for function call output with call_id ${item.call_id}.`;
      answered.add(item.call_id);
    }
    if (item.type === "reasoning" && body.store === false && typeof item.encrypted_content !== "string") {
      return `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input. (input[${i}])`;
    }
  }
  const open = [...calls].filter((id) => !answered.has(id));
  if (open.length > 0) return `No tool output found for function call ${open[0]}.`;
  return null;
}
