/**
 * Token estimates without a tokenizer: about four characters a token, the figure the replay
 * corpus and the cache simulator use too. Images count as a flat block.
 */
import type { ContentBlock, Message } from "./messages.js";

export const CHARS_PER_TOKEN = 4;
export const IMAGE_TOKENS = 1_600;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(message: Message): number {
  let tokens = 4; // role and framing
  for (const block of message.content) tokens += estimateBlockTokens(block);
  return tokens;
}

/** One content block's tokens, without the message's framing. */
export function estimateBlockTokens(block: ContentBlock): number {
  switch (block.type) {
    case "text":
      return estimateTextTokens(block.text);
    case "image":
      return IMAGE_TOKENS;
    case "tool_call":
      return estimateTextTokens(block.name + JSON.stringify(block.input ?? null)) + 4;
    case "reasoning":
      return estimateTextTokens(block.summary);
    case "tool_result":
      return 4 + (typeof block.content === "string"
        ? estimateTextTokens(block.content)
        : block.content.reduce((n, b) => n + (b.type === "text" ? estimateTextTokens(b.text) : IMAGE_TOKENS), 0));
  }
}
