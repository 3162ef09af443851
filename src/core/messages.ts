/**
 * The conversation's vocabulary: messages and their content blocks. These are what a session
 * stores and what every provider maps to its own wire format.
 */
import { assertNever } from "./errors.js";

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";
export const IMAGE_MEDIA_TYPES: readonly ImageMediaType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export interface TextBlock { type: "text"; text: string }
/** `data` is base64. */
export interface ImageBlock { type: "image"; mediaType: ImageMediaType; data: string }
export interface ToolCallBlock { type: "tool_call"; id: string; name: string; input: unknown }
export interface ToolResultBlock {
  type: "tool_result";
  callId: string;
  content: string | Array<TextBlock | ImageBlock>;
  isError?: boolean;
}

/**
 * A reasoning item a provider asked to be sent back with the conversation (the OpenAI Responses
 * API's `reasoning` item under `store: false`): `data` is its opaque encrypted content, `summary`
 * its readable summary (may be empty). Only the provider named in `provider` reads it; every other
 * provider's mapping leaves it out, and it is never shown to the model as text.
 */
export interface ReasoningBlock { type: "reasoning"; provider: string; id: string; data: string; summary: string }

export type ContentBlock = TextBlock | ImageBlock | ToolCallBlock | ToolResultBlock | ReasoningBlock;

export interface Message {
  role: "user" | "assistant";
  content: ContentBlock[];
}

export function textOf(message: Message): string {
  return message.content
    .filter((b): b is TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("");
}

export function toolCallsOf(message: Message): ToolCallBlock[] {
  return message.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
}

export function toolResultsOf(message: Message): ToolResultBlock[] {
  return message.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
}

/** The ids of tool calls in `messages` that no later tool result answers, in call order. */
export function unansweredCalls(messages: readonly Message[]): ToolCallBlock[] {
  const answered = new Set<string>();
  for (const m of messages) for (const r of toolResultsOf(m)) answered.add(r.callId);
  const open: ToolCallBlock[] = [];
  for (const m of messages) for (const c of toolCallsOf(m)) if (!answered.has(c.id)) open.push(c);
  return open;
}

/**
 * `message` with `rewrite` applied to every text it carries — text blocks, the strings inside
 * tool-call inputs, tool results' text (not ids, tool names or image data) — or the very same
 * object when nothing changed. The input is never edited.
 */
export function rewriteMessageText(message: Message, rewrite: (text: string) => string): Message {
  let changed = false;
  const content = message.content.map((block) => {
    const next = rewriteBlock(block, rewrite);
    if (next !== block) changed = true;
    return next;
  });
  return changed ? { ...message, content } : message;
}

function rewriteBlock(block: ContentBlock, rewrite: (text: string) => string): ContentBlock {
  switch (block.type) {
    case "text": {
      const text = rewrite(block.text);
      return text === block.text ? block : { ...block, text };
    }
    case "image":
      return block;
    case "reasoning": {
      // The encrypted part cannot be read, so cannot be rewritten; its summary is text like any other.
      const summary = rewrite(block.summary);
      return summary === block.summary ? block : { ...block, summary };
    }
    case "tool_call": {
      const input = rewriteStrings(block.input, rewrite);
      return input === block.input ? block : { ...block, input };
    }
    case "tool_result": {
      if (typeof block.content === "string") {
        const content = rewrite(block.content);
        return content === block.content ? block : { ...block, content };
      }
      const parts = block.content.map((part) => (part.type === "text" ? rewriteBlock(part, rewrite) as TextBlock : part));
      return parts.every((part, i) => part === (block.content as ContentBlock[])[i]) ? block : { ...block, content: parts };
    }
    default:
      return assertNever(block);
  }
}

/** `value` (JSON-shaped) with every string rewritten; the same object when none changed. */
function rewriteStrings(value: unknown, rewrite: (text: string) => string): unknown {
  if (typeof value === "string") return rewrite(value);
  if (Array.isArray(value)) {
    const items = value.map((item) => rewriteStrings(item, rewrite));
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    const next = entries.map(([key, item]) => [key, rewriteStrings(item, rewrite)] as const);
    return next.every(([, item], i) => item === entries[i]![1]) ? value : Object.fromEntries(next);
  }
  return value;
}
