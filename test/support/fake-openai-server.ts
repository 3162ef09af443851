/**
 * A fake OpenAI Chat Completions API on 127.0.0.1: answers POST /v1/chat/completions with the
 * SSE chunks the real API sends (`choices[0].delta` with content or tool_calls by index, a
 * chunk with `finish_reason`, a usage chunk with empty `choices`, then `data: [DONE]`), or with
 * an HTTP error as the real API shapes it. Replies come from a queue; every request is recorded
 * and checked as the real API would — each assistant tool call answered by a `tool` message
 * before anything else, each `tool` message answering a call. A request that fails a check gets
 * a 400 and is listed in `violations` (the codex-rs habit).
 */
import type { ServerResponse } from "node:http";
import { piecesOf, sendJson, sseFrame, writeSse, QueuedFakeServer, type RecordedRequest } from "./fake-sse-server.js";

export interface FakeOpenAIToolCall {
  id: string;
  name: string;
  arguments?: unknown;
  /** Sent verbatim as the arguments string (to send a malformed one). */
  rawArguments?: string;
}

export interface FakeOpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  /** Of `completion_tokens`, the reasoning ones (`completion_tokens_details.reasoning_tokens`; default 0). */
  reasoning_tokens?: number;
}

export type FakeOpenAIReply =
  | {
      kind: "stream";
      text?: string;
      toolCalls?: FakeOpenAIToolCall[];
      /** Default: `tool_calls` when there are calls, else `stop`. */
      finishReason?: string;
      /** `null` sends no usage chunk (a server that ignores include_usage). */
      usage?: FakeOpenAIUsage | null;
      /** Send the usage chunk with `choices: null`, as some compatible servers do. */
      nullChoicesInUsage?: boolean;
      splitBytes?: number;
      hangAfterFrames?: number;
      /** While held open, send a keep-alive every this many ms: an SSE comment, then a chunk with an empty delta, in turn. */
      keepAliveEveryMs?: number;
      /** Send this many whole frames and half of the next, then drop the connection (a stream cut mid-event). */
      cutInFrame?: number;
      /** Send this many frames, then a `data: {"error": …}` frame, and end. */
      errorAfterFrames?: { frames: number; type: string; message: string };
    }
  | { kind: "http_error"; status: number; type: string; message: string; code?: string; headers?: Record<string, string> };

export const DEFAULT_OPENAI_USAGE: FakeOpenAIUsage = { prompt_tokens: 20, completion_tokens: 6, cached_tokens: 0 };

export class FakeOpenAIServer extends QueuedFakeServer<FakeOpenAIReply> {
  static start(): Promise<FakeOpenAIServer> {
    return QueuedFakeServer.serve("/v1/chat/completions", (core) => new FakeOpenAIServer(core));
  }

  /** The base URL to give the SDK (with `/v1`). */
  get baseUrl(): string {
    return `${this.core.origin}/v1`;
  }

  protected async answer(req: RecordedRequest, res: ServerResponse): Promise<void> {
    const problem = checkOpenAIRequest(req.body);
    if (problem) {
      this.violations.push(problem);
      return sendJson(res, 400, errorBody("invalid_request_error", problem, null));
    }
    const reply = this.replies.shift();
    if (!reply) return sendJson(res, 400, errorBody("invalid_request_error", "fake server: no reply queued for this request", null));
    if (reply.kind === "http_error") return sendJson(res, reply.status, errorBody(reply.type, reply.message, reply.code ?? null), reply.headers);
    let frames = openaiFrames(reply, String(req.body.model));
    if (reply.errorAfterFrames) {
      const { frames: count, type, message } = reply.errorAfterFrames;
      frames = [...frames.slice(0, count), sseFrame(null, errorBody(type, message, null))];
    }
    const emptyDelta = sseFrame(null, { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model: String(req.body.model), choices: [{ index: 0, delta: {}, finish_reason: null }] });
    await writeSse(res, frames, {
      splitBytes: reply.splitBytes, hangAfterFrames: reply.hangAfterFrames, cutInFrame: reply.cutInFrame,
      ...(reply.keepAliveEveryMs !== undefined ? { keepAlive: { frame: `: keep-alive\n\n${emptyDelta}`, everyMs: reply.keepAliveEveryMs } } : {}),
    });
  }
}

function errorBody(type: string, message: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

/** The chunks the real API sends for one completion, `[DONE]` included. */
export function openaiFrames(reply: Extract<FakeOpenAIReply, { kind: "stream" }>, model: string): string[] {
  const chunk = (choices: unknown, usage: unknown = null) =>
    sseFrame(null, { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model, system_fingerprint: "fp_fake", choices, usage });
  const choice = (delta: unknown, finish_reason: string | null = null) => [{ index: 0, delta, logprobs: null, finish_reason }];
  const frames = [chunk(choice({ role: "assistant", content: "", refusal: null }))];
  if (reply.text) for (const piece of piecesOf(reply.text)) frames.push(chunk(choice({ content: piece })));
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    frames.push(chunk(choice({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })));
    const args = call.rawArguments ?? JSON.stringify(call.arguments ?? {});
    for (const piece of piecesOf(args, 4)) frames.push(chunk(choice({ tool_calls: [{ index, function: { arguments: piece } }] })));
  }
  const finish = reply.finishReason ?? ((reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop");
  frames.push(chunk(choice({}, finish)));
  if (reply.usage !== null) {
    const u = { ...DEFAULT_OPENAI_USAGE, ...reply.usage };
    const usage = {
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.prompt_tokens + u.completion_tokens,
      prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    };
    frames.push(chunk(reply.nullChoicesInUsage ? null : [], usage));
  }
  frames.push(sseFrame(null, "[DONE]"));
  return frames;
}

/** What the real API would reject in `body`, as its message would say; null when it is fine. */
export function checkOpenAIRequest(body: any): string | null {
  if (typeof body?.model !== "string") return "you must provide a model parameter";
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return "'messages' must contain at least one message";
  for (const [i, m] of messages.entries()) {
    if (m.role === "tool") {
      if (typeof m.content !== "string") return `messages[${i}].content: a tool message's content must be a string here`;
      let j = i - 1;
      while (j >= 0 && messages[j].role === "tool") j--;
      const calls = (messages[j]?.tool_calls ?? []).map((c: any) => c.id);
      if (!calls.includes(m.tool_call_id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
    }
    if (m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const answered = new Set<string>();
      for (let j = i + 1; j < messages.length && messages[j].role === "tool"; j++) answered.add(messages[j].tool_call_id);
      const open = m.tool_calls.map((c: any) => c.id).filter((id: string) => !answered.has(id));
      if (open.length > 0) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(", ")}`;
      }
    }
  }
  return null;
}
