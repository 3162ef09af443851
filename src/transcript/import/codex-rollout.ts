/**
 * Codex CLI rollout logs (`rollout-*.jsonl`) as replay sessions.
 *
 * Each line is `{timestamp, type, payload}`: `session_meta` (the base instructions, when
 * recorded), `turn_context` (the model of the turns that follow), `response_item` (what the
 * model saw and said: messages, function and custom tool calls and their outputs, reasoning),
 * `event_msg` (UI events; `token_count` carries `info.last_token_usage`, the bill of the request
 * just answered) and `compacted` (the harness's own compaction: its summary stands for the log
 * before it in every later request). A request is the model's output items up to the next input
 * item; its bill is the first `token_count` after its output. OpenAI counts cached tokens inside
 * `input_tokens`, and the cache is automatic (prefix caching); reasoning items are carried as
 * their summary text. Event messages that repeat response items are skipped and counted.
 */
import type { ContentBlock } from "../../core/messages.js";
import type { Usage } from "../../core/provider.js";
import { CorpusFormatError, type ReplaySession } from "../replay-session.js";
import { readJsonLines } from "./jsonl-lines.js";
import { SessionBuilder, isoMs, tokenCount } from "./session-builder.js";

type Json = Record<string, unknown>;

const OUTPUT_ITEMS = new Set(["message:assistant", "function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call"]);

export function parseCodexRollout(name: string, text: string): ReplaySession {
  const { lines, tornLastLine } = readJsonLines(name, text);
  const builder = new SessionBuilder(name, "codex");
  if (tornLastLine) builder.skip("torn last line");
  let system: string | null = null;
  let model: string | undefined;
  /** The response being written (its output items so far), and the last one still without its bill. */
  let open: number | null = null;
  let unbilled: number | null = null;
  for (const { no, value } of lines) {
    const type = typeof value.type === "string" ? value.type : "(no type)";
    const payload = (typeof value.payload === "object" && value.payload !== null ? value.payload : null) as Json | null;
    if (payload === null && ["session_meta", "turn_context", "response_item", "event_msg", "compacted"].includes(type)) {
      throw new CorpusFormatError(name, no, `field "payload": expected an object, got ${JSON.stringify(value.payload) ?? "nothing"}`);
    }
    switch (type) {
      case "session_meta":
        system = instructionsOf(payload!) ?? system;
        break;
      case "turn_context":
        if (typeof payload!.model === "string") model = payload!.model;
        break;
      case "compacted":
        builder.compact({ role: "user", content: [{ type: "text", text: String(payload!.message ?? "") }] });
        open = unbilled = null;
        break;
      case "event_msg":
        const billed = payload!.type === "token_count" && unbilled !== null ? tokenUsage(payload!) : undefined;
        if (billed && unbilled !== null) {
          builder.rebill(unbilled, billed);
          unbilled = null;
        } else builder.skip(`event_msg ${String(payload!.type)}`);
        break;
      case "response_item": {
        const item = payload!;
        const kind = item.type === "message" ? `message:${String(item.role)}` : String(item.type);
        if (OUTPUT_ITEMS.has(kind)) {
          const blocks = outputBlocks(item);
          if (open === null) open = unbilled = builder.assistant(blocks, { atMs: isoMs(value.timestamp), ...(model ? { model } : {}) });
          else builder.extendAssistant(open, blocks);
          break;
        }
        const input = inputBlocks(item);
        if (input === null) {
          builder.skip(`response_item ${kind}`);
          break;
        }
        open = null;
        builder.userBlocks(input);
        break;
      }
      default:
        builder.skip(type);
    }
  }
  if (builder.requests.length === 0) throw new CorpusFormatError(name, lines.length === 0 ? 1 : lines[lines.length - 1]!.no, "the session has no model response");
  return builder.finish({ system, tools: [], fitHiddenPrefix: true, cache: "openai" });
}

function instructionsOf(meta: Json): string | null {
  if (typeof meta.instructions === "string" && meta.instructions !== "") return meta.instructions;
  const base = meta.base_instructions as Json | undefined;
  if (typeof base === "object" && base !== null && typeof base.text === "string") return base.text;
  return null;
}

function outputBlocks(item: Json): ContentBlock[] {
  switch (item.type) {
    case "message":
      return textsOf(item.content).map((text) => ({ type: "text", text }));
    case "reasoning": {
      const summary = Array.isArray(item.summary) ? item.summary.map((s) => String((s as Json)?.text ?? "")).join("\n") : "";
      return summary === "" ? [] : [{ type: "text", text: summary }];
    }
    case "function_call":
      return [{ type: "tool_call", id: String(item.call_id ?? ""), name: String(item.name ?? ""), input: parsedArguments(item.arguments) }];
    case "custom_tool_call":
      return [{ type: "tool_call", id: String(item.call_id ?? ""), name: String(item.name ?? ""), input: { input: String(item.input ?? "") } }];
    case "local_shell_call":
      return [{ type: "tool_call", id: String(item.call_id ?? ""), name: "local_shell", input: item.action ?? {} }];
    default:
      return [{ type: "text", text: JSON.stringify(item) }];
  }
}

/** What the model is sent as input, or null for an item that is not (an unknown kind). */
function inputBlocks(item: Json): ContentBlock[] | null {
  switch (item.type) {
    case "message":
      return textsOf(item.content).map((text) => ({ type: "text", text }));
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output":
      return [{ type: "tool_result", callId: String(item.call_id ?? ""), content: outputText(item.output) }];
    default:
      return null;
  }
}

function textsOf(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.map((c) => {
    const part = (c ?? {}) as Json;
    return typeof part.text === "string" ? part.text : JSON.stringify(part);
  });
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  const o = (output ?? {}) as Json;
  return typeof o.content === "string" ? o.content : JSON.stringify(output ?? "");
}

function parsedArguments(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return { arguments: args };
  }
}

/** `info.last_token_usage` as rhema's `Usage` (OpenAI's input counts the cached part); null info: no bill. */
function tokenUsage(payload: Json): Usage | undefined {
  const info = payload.info as Json | null | undefined;
  const last = (typeof info === "object" && info !== null ? info.last_token_usage : null) as Json | null | undefined;
  if (typeof last !== "object" || last === null) return undefined;
  const input = tokenCount(last.input_tokens);
  const cached = Math.min(input, tokenCount(last.cached_input_tokens));
  return { inputTokens: input - cached, cacheReadTokens: cached, cacheWriteTokens: 0, outputTokens: tokenCount(last.output_tokens) };
}
