import { test } from "node:test";
import assert from "node:assert/strict";
import { loadTokenizerCounter } from "../../src/tokens/tokenizer-counter.js";
import { encodingForModel } from "../../src/tokens/counter-choice.js";

// Counts checked with the other package (js-tiktoken 1.0.21, `encode(text, [], [])`): both agree.
const KNOWN: Array<[text: string, o200k: number, cl100k: number]> = [
  ["Hello, world!", 4, 4],
  ["The quick brown fox jumps over the lazy dog.", 10, 10],
  ["export function add(a: number, b: number): number {\n  return a + b;\n}\n", 20, 20],
  ['{"path":"src/calc.ts","old_string":"a - b","new_string":"a + b"}', 22, 22],
  ['     1\timport { readFile } from "node:fs/promises";\n     2\t\n     3\tconst x = await readFile("a.txt", "utf8");\n', 37, 35],
  ["Ünïcödé — naïve café, 東京 🚀", 13, 18],
  ["a stray <|endoftext|> in a log", 12, 11],
];

test("o200k_base and cl100k_base count known strings as OpenAI's tokenizer does", async () => {
  const o200k = await loadTokenizerCounter("o200k_base");
  const cl100k = await loadTokenizerCounter("cl100k_base");
  assert.deepEqual(KNOWN.map(([text]) => [o200k.text(text), cl100k.text(text)]), KNOWN.map(([, a, b]) => [a, b]));
  assert.equal(o200k.id, "o200k_base");
  assert.deepEqual(o200k.record, { kind: "tokenizer", encoding: "o200k_base" });
});

test("a tokenizer counter frames blocks and messages as chars4 does, and counts a block the same twice", async () => {
  const counter = await loadTokenizerCounter("o200k_base");
  const call = { type: "tool_call" as const, id: "a", name: "read_file", input: { path: "x" } };
  assert.equal(counter.block(call), counter.text('read_file{"path":"x"}') + 4);
  assert.equal(counter.block(call), counter.block(call));
  assert.equal(counter.message({ role: "assistant", content: [call] }), counter.block(call) + 4);
});

test("each OpenAI model counts with its encoding; an unknown name with none", () => {
  assert.deepEqual(
    ["gpt-4o-mini", "gpt-4.1", "gpt-5", "o3-mini", "o4-mini", "gpt-4", "gpt-4-turbo", "gpt-3.5-turbo", "llama-3.1-8b"].map(encodingForModel),
    ["o200k_base", "o200k_base", "o200k_base", "o200k_base", "o200k_base", "cl100k_base", "cl100k_base", "cl100k_base", null],
  );
});
