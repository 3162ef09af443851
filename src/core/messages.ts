/**
 * The conversation's vocabulary: messages and their content blocks. These are what a session
 * stores and what every provider maps to its own wire format.
 */

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

export type ContentBlock = TextBlock | ImageBlock | ToolCallBlock | ToolResultBlock;

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
