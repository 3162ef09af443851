/**
 * What the wire-provider tests (anthropic, openai, openai-responses, …) do the same way: a
 * request of given messages, a user message, a stream collected to its events, the text it
 * streamed.
 */
import type { Message } from "../../src/core/messages.js";
import type { ModelRequest, StreamEvent } from "../../src/core/provider.js";

/** A request with a short system prompt, no tools and no cache breakpoints, `extra` over it. */
export function request(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: "You are terse.", tools: [], messages, cacheBreakpoints: [], ...extra };
}

/** A user message of one text block. */
export const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

/** The text deltas of `events`, joined. */
export const textOf = (events: StreamEvent[]): string => events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta).join("");

/** Every event of `stream`, each told to `onEvent` as it comes. */
export async function collect(stream: AsyncIterable<StreamEvent>, onEvent?: (e: StreamEvent) => void): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) {
    events.push(e);
    onEvent?.(e);
  }
  return events;
}
