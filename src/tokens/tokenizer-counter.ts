/**
 * The OpenAI tokenizer as a token counter: o200k_base (gpt-4o, gpt-4.1, gpt-5, the o-series)
 * and cl100k_base (gpt-4, gpt-3.5) through `gpt-tokenizer`, loaded on first use (a chunk of
 * its own in the CLI's bundle, scripts/build-cli.mjs), so a run that never counts with it
 * never reads its ~1–3 MB of ranks.
 *
 * Why gpt-tokenizer and not js-tiktoken (bench/tokenizers.ts, on 0.84 M characters of this
 * repository's code, docs, tool-call JSON and numbered file reads; both give the same counts):
 * it counts 4–7× faster (o200k_base 82 ms vs 375 ms; cl100k_base 56 vs 413) and loads 3–4×
 * faster (168 vs 618 ms; 73 vs 307), for a chunk of about the same size (2.8 vs 2.3 MB;
 * 1.0 vs 1.1 MB).
 *
 * Text is counted as plain text: a special token's spelling in a tool's output (`<|endoftext|>`)
 * is counted as the characters it is, never refused.
 */
import type { ContentBlock } from "../core/messages.js";
import { framedCounter, type TokenCounter, type TokenizerEncoding } from "../core/token-counter.js";

type Encode = (text: string, options: { allowedSpecial: Set<string>; disallowedSpecial: Set<string> }) => number[];

const loaded = new Map<TokenizerEncoding, Promise<TokenCounter>>();

/** The counter for `encoding`, loading the tokenizer once per process. */
export function loadTokenizerCounter(encoding: TokenizerEncoding): Promise<TokenCounter> {
  let counter = loaded.get(encoding);
  if (!counter) {
    counter = importEncode(encoding).then((encode) => tokenizerCounter(encoding, encode));
    loaded.set(encoding, counter);
  }
  return counter;
}

async function importEncode(encoding: TokenizerEncoding): Promise<Encode> {
  switch (encoding) {
    case "o200k_base":
      return (await import("gpt-tokenizer/encoding/o200k_base")).encode;
    case "cl100k_base":
      return (await import("gpt-tokenizer/encoding/cl100k_base")).encode;
  }
}

const AS_PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

function tokenizerCounter(encoding: TokenizerEncoding, encode: Encode): TokenCounter {
  const framed = framedCounter(
    // About four characters a token of English prose in both encodings.
    { id: encoding, record: { kind: "tokenizer", encoding }, charsPerProseToken: 4 },
    (text) => (text.length === 0 ? 0 : encode(text, AS_PLAIN_TEXT).length),
    { message: 4, toolBlock: 4 },
  );
  // Committed blocks never change (prompt-blocks.ts lays them out on the same rule): count each once.
  const memo = new WeakMap<ContentBlock, number>();
  const block = (b: ContentBlock): number => {
    let tokens = memo.get(b);
    if (tokens === undefined) memo.set(b, (tokens = framed.block(b)));
    return tokens;
  };
  return { ...framed, block, message: (m) => m.content.reduce((n, b) => n + block(b), 4) };
}
