/**
 * Token estimates without a tokenizer: about four characters a token, the figure the replay
 * corpus and the cache simulator use too. Images count as a flat block.
 */
import type { Message } from "./messages.js";

export const CHARS_PER_TOKEN = 4;
export const IMAGE_TOKENS = 1_600;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(message: Message): number {
  let tokens = 4; // role and framing
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        tokens += estimateTextTokens(block.text);
        break;
      case "image":
        tokens += IMAGE_TOKENS;
        break;
      case "tool_call":
        tokens += estimateTextTokens(block.name + JSON.stringify(block.input ?? null)) + 4;
        break;
      case "tool_result":
        tokens += 4 + (typeof block.content === "string"
          ? estimateTextTokens(block.content)
          : block.content.reduce((n, b) => n + (b.type === "text" ? estimateTextTokens(b.text) : IMAGE_TOKENS), 0));
        break;
    }
  }
  return tokens;
}
