/**
 * A prompt as a prompt cache sees it: a sequence of blocks, and the marks placed on them.
 *
 * The block sequence is the order in which the API renders a request — the order a cached
 * prefix is measured in:
 *   1. each tool definition, in `req.tools` order;
 *   2. the system prompt, one block (none when it is null or empty);
 *   3. each message's content blocks, in order; a message with no content is one block (the
 *      placeholder the providers send in its place).
 * A message's first block also carries the message's framing (role), so the tokens of a
 * message's blocks add up to the counter's count of the message (chars4 by default).
 *
 * Where the marks go (`planCacheMarks`) is decided here once, for both the Anthropic provider
 * (which puts `cache_control` on the wire blocks) and the simulator (which writes entries at the
 * same blocks): the end of tools+system — the system block, or the last tool when there is no
 * system prompt — and the last block of each message in `cacheBreakpoints`, at most four marks,
 * the last four winning.
 */
import { createHash } from "node:crypto";
import type { ContentBlock, Message } from "../core/messages.js";
import type { ModelRequest } from "../core/provider.js";
import { estimateTextTokens } from "../core/token-estimate.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import { ANTHROPIC_MAX_BREAKPOINTS, type CacheTtl } from "./cache-rules.js";

/** One block of a prompt. Two blocks are the same block exactly when their `content` is equal. */
export interface PromptBlock {
  /** The block's content, or anything equal exactly when the content is (a hash of it). */
  content: string;
  /** The block's size; estimated from `content` (about four characters a token) when absent. */
  tokens?: number;
}

/** A cache mark on `blocks[block]`: the prefix up to and including that block is an entry. */
export interface CacheBreakpoint {
  block: number;
  /** Default 5 minutes. */
  ttl?: CacheTtl;
}

/** Where a request's marks go: the end of tools+system, or the end of a message (its index). */
export interface CacheMark {
  target: "prefix" | { message: number };
  ttl: CacheTtl;
}

/** A request's blocks, where its tools+system end, and where each of its messages ends. */
export interface PromptLayout {
  blocks: PromptBlock[];
  /** Index of the last tools/system block; -1 when there are neither tools nor a system prompt. */
  prefixEnd: number;
  /** `messageEnds[i]`: index of message i's last block. */
  messageEnds: number[];
}

/** A prompt's prefixes: `keys[k]` names blocks 0..k, `ends[k]` is their total tokens. */
export interface PrefixChain {
  keys: string[];
  ends: number[];
}

/** The marks for `req`, in block order (see the header); at most four. */
export function planCacheMarks(req: ModelRequest): CacheMark[] {
  const hourThrough = oneHourThrough(req);
  const marks: CacheMark[] = [];
  if (req.system || req.tools.length > 0) marks.push({ target: "prefix", ttl: hourThrough === null ? "5m" : "1h" });
  const indexes = [...new Set(req.cacheBreakpoints)]
    .filter((i) => Number.isInteger(i) && i >= 0 && i < req.messages.length)
    .sort((a, b) => a - b);
  for (const i of indexes) marks.push({ target: { message: i }, ttl: hourThrough !== null && i <= hourThrough ? "1h" : "5m" });
  return marks.slice(-ANTHROPIC_MAX_BREAKPOINTS);
}

/** `req.cacheOneHourThrough` when it says something (a whole number from -1), else null. */
function oneHourThrough(req: ModelRequest): number | null {
  const through = req.cacheOneHourThrough;
  return through !== undefined && Number.isInteger(through) && through >= -1 ? through : null;
}

/**
 * Each content block's digest and size, remembered by identity, so that a conversation sent
 * again and again (the same message objects, one more each time) is serialized once. A block
 * must not be changed once it has been laid out — committed messages never are.
 */
export type BlockMemo = WeakMap<ContentBlock, { digest: string; tokens: number }>;

/** The block sequence of `req` (see the header), with token counts (`counter`'s; a memo serves one counter). */
export function promptLayout(req: ModelRequest, memo: BlockMemo = new WeakMap(), counter: TokenCounter = chars4Counter): PromptLayout {
  const blocks: PromptBlock[] = req.tools.map((tool) => {
    const content = JSON.stringify({ tool });
    return { content, tokens: counter.text(JSON.stringify(tool), "json") };
  });
  if (req.system) blocks.push({ content: JSON.stringify({ system: req.system }), tokens: counter.text(req.system) });
  const prefixEnd = blocks.length - 1;
  const messageEnds = req.messages.map((message) => {
    blocks.push(...messageBlocks(message, memo, counter));
    return blocks.length - 1;
  });
  return { blocks, prefixEnd, messageEnds };
}

function messageBlocks(message: Message, memo: BlockMemo, counter: TokenCounter): PromptBlock[] {
  // The message's framing: what the counter counts for a message beyond its blocks.
  const framing = counter.message({ role: message.role, content: [] });
  if (message.content.length === 0) return [{ content: `${message.role}:empty`, tokens: framing }];
  return message.content.map((block, k) => {
    const { digest, tokens } = measured(block, memo, counter);
    return k === 0 ? { content: `${message.role}:first:${digest}`, tokens: tokens + framing } : { content: `next:${digest}`, tokens };
  });
}

function measured(block: ContentBlock, memo: BlockMemo, counter: TokenCounter): { digest: string; tokens: number } {
  let known = memo.get(block);
  if (!known) {
    known = { digest: createHash("sha256").update(JSON.stringify(block)).digest("hex"), tokens: counter.block(block) };
    memo.set(block, known);
  }
  return known;
}

/** The blocks `marks` land on in `layout`, in block order. */
export function breakpointsOf(marks: readonly CacheMark[], layout: PromptLayout): CacheBreakpoint[] {
  return marks.map((m) => ({ block: m.target === "prefix" ? layout.prefixEnd : layout.messageEnds[m.target.message]!, ttl: m.ttl }));
}

/** The hash chain and running token total over `blocks`. */
export function prefixChain(blocks: readonly PromptBlock[]): PrefixChain {
  const keys: string[] = [];
  const ends: number[] = [];
  let key = "";
  let total = 0;
  for (const block of blocks) {
    key = createHash("sha256").update(key).update("\u0000").update(block.content).digest("hex");
    total += block.tokens ?? estimateTextTokens(block.content);
    keys.push(key);
    ends.push(total);
  }
  return { keys, ends };
}
