/**
 * mini-swe-agent trajectories (`*.traj.json`: one JSON document, `messages` in the OpenAI chat
 * shape, `info.model_stats`, `info.config.model.model_name`) as replay sessions.
 *
 * Each assistant message was one request; its bill is the provider response mini-swe-agent kept
 * beside it (`extra.response.usage`, litellm's shape: `prompt_tokens` with the cached part
 * inside, `prompt_tokens_details.cached_tokens` or `cache_read_input_tokens`,
 * `cache_creation_input_tokens`), when it kept one, and its time `extra.timestamp` when there
 * is one. Text-based agents answer the reply's command in a user message — and a reply with no
 * command gets the harness's "format error" feedback as a user message too: user turns both.
 * Tool-calling agents (`tool_calls`, `role: "tool"`) have their calls and results; a result
 * whose call is missing is user text.
 */
import type { ContentBlock } from "../../core/messages.js";
import type { Usage } from "../../core/provider.js";
import type { CacheRules } from "../../cache/prompt-cache-simulator.js";
import { CorpusFormatError, type ReplaySession } from "../replay-session.js";
import { SessionBuilder, isoMs, tokenCount } from "./session-builder.js";

type Json = Record<string, unknown>;

export function parseMiniSweTrajectory(name: string, text: string): ReplaySession {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CorpusFormatError(name, lineOfError(text, err as Error), `not JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null || !Array.isArray((doc as Json).messages)) {
    throw new CorpusFormatError(name, null, `field "messages": expected an array of chat messages`);
  }
  const info = ((doc as Json).info ?? {}) as Json;
  const model = modelName(info);
  const builder = new SessionBuilder(name, "mini-swe-agent");
  let system: string | null = null;
  let calls = false;
  for (const [i, raw] of ((doc as Json).messages as unknown[]).entries()) {
    if (typeof raw !== "object" || raw === null) throw new CorpusFormatError(name, null, `field "messages[${i}]": expected a message object`);
    const m = raw as Json;
    const text = textOf(m.content);
    switch (m.role) {
      case "system":
        system = system === null ? text : `${system}\n${text}`;
        break;
      case "user":
        builder.userText(text);
        break;
      case "assistant": {
        const extra = (m.extra ?? {}) as Json;
        const billed = litellmUsage(((extra.response ?? {}) as Json).usage);
        const toolCalls = callsOf(m.tool_calls);
        calls ||= toolCalls.length > 0;
        builder.assistant([...(text === "" ? [] : [{ type: "text" as const, text }]), ...toolCalls], {
          atMs: timeOf(extra.timestamp), ...(billed ? { billed } : {}), ...(model ? { model } : {}),
        });
        break;
      }
      case "tool":
        builder.userBlocks([{ type: "tool_result", callId: String(m.tool_call_id ?? ""), content: text }]);
        break;
      default:
        throw new CorpusFormatError(name, null, `field "messages[${i}].role": expected system, user, assistant or tool, got ${JSON.stringify(m.role)}`);
    }
  }
  if (builder.requests.length === 0) throw new CorpusFormatError(name, null, "the trajectory has no assistant message");
  const cache = cacheOf(model);
  return builder.finish({ system, tools: [], fitHiddenPrefix: calls, ...(cache ? { cache } : {}) });
}

function modelName(info: Json): string | undefined {
  const config = (info.config ?? {}) as Json;
  const model = (config.model ?? {}) as Json;
  return typeof model.model_name === "string" ? model.model_name : undefined;
}

/** The cache rules that fit a litellm model name: Anthropic's for Claude, else automatic prefix caching (OpenAI's, Gemini's alike). */
function cacheOf(model: string | undefined): CacheRules | undefined {
  if (!model) return undefined;
  return /claude|anthropic/i.test(model) ? "anthropic" : "openai";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => (typeof (c as Json)?.text === "string" ? (c as Json).text as string : "")).join("");
}

function callsOf(value: unknown): ContentBlock[] {
  if (!Array.isArray(value)) return [];
  return value.map((c) => {
    const call = (c ?? {}) as Json;
    const fn = (call.function ?? {}) as Json;
    let input: unknown = fn.arguments ?? {};
    if (typeof input === "string") {
      try {
        input = JSON.parse(input);
      } catch {
        input = { arguments: input };
      }
    }
    return { type: "tool_call", id: String(call.id ?? ""), name: String(fn.name ?? ""), input };
  });
}

/** litellm's usage as rhema's `Usage`: its prompt tokens hold the cached ones. */
function litellmUsage(value: unknown): Usage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const u = value as Json;
  const details = (u.prompt_tokens_details ?? {}) as Json;
  const prompt = tokenCount(u.prompt_tokens);
  const read = tokenCount(u.cache_read_input_tokens) || tokenCount(details.cached_tokens);
  const write = tokenCount(u.cache_creation_input_tokens);
  if (prompt === 0) return undefined;
  return { inputTokens: Math.max(0, prompt - read - write), cacheReadTokens: read, cacheWriteTokens: write, outputTokens: tokenCount(u.completion_tokens) };
}

/** Seconds since the epoch, or an ISO time, as ms; NaN when neither. */
function timeOf(value: unknown): number {
  if (typeof value === "number" && Number.isFinite(value)) return value * 1000;
  return isoMs(value);
}

/** The line of a JSON syntax error's position (Node says `at position N`); null when it does not say. */
function lineOfError(text: string, err: Error): number | null {
  const m = /position (\d+)/.exec(err.message);
  if (!m) return null;
  return text.slice(0, Number(m[1])).split("\n").length;
}
