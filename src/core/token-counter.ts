/**
 * The token counter: how many tokens a text, a content block or a message is, the one count the
 * engine's budgets, compaction triggers, the elider, the transcript mirror and the cache
 * simulator's block sizes all share. Pure; a counter that needs a package (the OpenAI
 * tokenizer) is made in src/tokens and handed in.
 *
 * Three kinds of counter, told apart by `record` (what a session keeps, so a resume counts as
 * the run it continues did):
 * - `chars4`: four characters a token (token-estimate.ts), the default when nothing else applies;
 * - `tokenizer`: a provider's published tokenizer (o200k_base, cl100k_base);
 * - `calibrated`: characters of each content kind times a fitted factor, plus framing per
 *   message and per tool block (the factors come from a calibration file, src/tokens).
 *
 * Content kinds: `prose` and `code` (a text block, the system prompt: told apart by
 * `textKind`), `json` (a tool call's name and input, a tool definition), `tool_result`.
 */
import type { ContentBlock, Message } from "./messages.js";
import { CHARS_PER_TOKEN, IMAGE_TOKENS } from "./token-estimate.js";

export type ContentKind = "prose" | "code" | "json" | "tool_result";
export const CONTENT_KINDS: readonly ContentKind[] = ["prose", "code", "json", "tool_result"];

export type TokenizerEncoding = "o200k_base" | "cl100k_base";
export const TOKENIZER_ENCODINGS: readonly TokenizerEncoding[] = ["o200k_base", "cl100k_base"];

/** Tokens per character of each kind, and the framing a message and a tool block add. */
export interface CalibrationFactors {
  perChar: Record<ContentKind, number>;
  perMessage: number;
  /** Per tool call and per tool result block. */
  perToolBlock: number;
}

/** What a session records of its counter: enough to make the same counter again. */
export type TokenCounterRecord =
  | { kind: "chars4" }
  | { kind: "tokenizer"; encoding: TokenizerEncoding }
  /** `id`: the calibration's content hash (`calibrated:…`). */
  | { kind: "calibrated"; id: string; factors: CalibrationFactors };

export interface TokenCounter {
  /** `chars4`, the encoding's name, or `calibrated:<hash>`. */
  readonly id: string;
  readonly record: TokenCounterRecord;
  /** Characters one token of prose takes, to size a text to a token target (the elider). */
  readonly charsPerProseToken: number;
  /** Tokens of `text` counted as `kind` (default: prose or code, as `textKind` says). */
  text(text: string, kind?: ContentKind): number;
  /** One content block's tokens, without the message's framing. */
  block(block: ContentBlock): number;
  /** A message's tokens: its framing and its blocks. */
  message(message: Message): number;
}

/** The symbols code is dense in and prose is not. */
const CODE_SYMBOLS = /[{}[\]();=<>_/\\|&*$#:]/g;
/** A text is code when this share of its characters are code symbols, or it holds a fence. */
const CODE_SYMBOL_SHARE = 0.05;

/** Whether a text reads as prose or as code (fenced, or dense in code symbols). Pure, O(length). */
export function textKind(text: string): "prose" | "code" {
  if (text.includes("```")) return "code";
  if (text.length === 0) return "prose";
  const symbols = text.match(CODE_SYMBOLS)?.length ?? 0;
  return symbols / text.length >= CODE_SYMBOL_SHARE ? "code" : "prose";
}

/** The text a tool call is counted as: its name and its input's JSON. */
export function toolCallText(block: { name: string; input: unknown }): string {
  return block.name + JSON.stringify(block.input ?? null);
}

/** Framing added by a message and by a tool call or result, in tokens. */
interface Framing {
  message: number;
  toolBlock: number;
}

/**
 * A counter from a per-text count and framing: a tool call is its text (json) plus framing, a
 * tool result its parts (tool_result) plus framing, an image a flat `IMAGE_TOKENS`.
 */
export function framedCounter(
  identity: { id: string; record: TokenCounterRecord; charsPerProseToken: number },
  countText: (text: string, kind: ContentKind) => number,
  framing: Framing,
): TokenCounter {
  const text = (t: string, kind?: ContentKind) => countText(t, kind ?? textKind(t));
  const block = (b: ContentBlock): number => {
    switch (b.type) {
      case "text":
        return text(b.text);
      case "image":
        return IMAGE_TOKENS;
      case "tool_call":
        return countText(toolCallText(b), "json") + framing.toolBlock;
      case "reasoning":
        // What is readable of it: the encrypted part's size says nothing a counter can use.
        return text(b.summary);
      case "tool_result":
        return framing.toolBlock + (typeof b.content === "string"
          ? countText(b.content, "tool_result")
          : b.content.reduce((n, part) => n + (part.type === "text" ? countText(part.text, "tool_result") : IMAGE_TOKENS), 0));
    }
  };
  return {
    ...identity, text, block,
    message: (m) => m.content.reduce((n, b) => n + block(b), framing.message),
  };
}

/** Four characters a token whatever the kind; the figures rhema always had (token-estimate.ts). */
export const chars4Counter: TokenCounter = framedCounter(
  { id: "chars4", record: { kind: "chars4" }, charsPerProseToken: CHARS_PER_TOKEN },
  (text) => Math.ceil(text.length / CHARS_PER_TOKEN),
  { message: 4, toolBlock: 4 },
);

/** A calibrated counter: Σ characters × the kind's factor, rounded up per text, plus framing rounded to whole tokens. */
export function calibratedCounter(id: string, factors: CalibrationFactors): TokenCounter {
  return framedCounter(
    { id, record: { kind: "calibrated", id, factors }, charsPerProseToken: factors.perChar.prose > 0 ? 1 / factors.perChar.prose : CHARS_PER_TOKEN },
    (text, kind) => Math.ceil(text.length * factors.perChar[kind]),
    { message: Math.round(factors.perMessage), toolBlock: Math.round(factors.perToolBlock) },
  );
}

/** The counter a session recorded, when it can be made without loading anything (not a tokenizer). */
export function counterOfRecord(record: TokenCounterRecord): TokenCounter | null {
  switch (record.kind) {
    case "chars4":
      return chars4Counter;
    case "calibrated":
      return calibratedCounter(record.id, record.factors);
    case "tokenizer":
      return null;
  }
}

/** What a request's content is made of, as the calibrated counter and its fit see it. */
export interface ContentMeasure {
  chars: Record<ContentKind, number>;
  messages: number;
  toolBlocks: number;
  images: number;
}

export function emptyMeasure(): ContentMeasure {
  return { chars: { prose: 0, code: 0, json: 0, tool_result: 0 }, messages: 0, toolBlocks: 0, images: 0 };
}

/** Adds `messages` (and a system prompt and tool definitions, when given) to `into`. */
export function measureContent(
  into: ContentMeasure,
  content: { system?: string | null; tools?: readonly unknown[]; messages: readonly Message[] },
): ContentMeasure {
  if (content.system) into.chars[textKind(content.system)] += content.system.length;
  for (const tool of content.tools ?? []) into.chars.json += JSON.stringify(tool).length;
  for (const m of content.messages) {
    into.messages += 1;
    for (const b of m.content) {
      switch (b.type) {
        case "text":
          into.chars[textKind(b.text)] += b.text.length;
          break;
        case "image":
          into.images += 1;
          break;
        case "tool_call":
          into.toolBlocks += 1;
          into.chars.json += toolCallText(b).length;
          break;
        case "tool_result":
          into.toolBlocks += 1;
          if (typeof b.content === "string") into.chars.tool_result += b.content.length;
          else for (const part of b.content) if (part.type === "text") into.chars.tool_result += part.text.length; else into.images += 1;
          break;
      }
    }
  }
  return into;
}
