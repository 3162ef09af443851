import { test } from "node:test";
import assert from "node:assert/strict";
import type { ContentBlock, Message } from "../../src/core/messages.js";
import { calibratedCounter, chars4Counter, counterOfRecord, measureContent, emptyMeasure, textKind } from "../../src/core/token-counter.js";
import { estimateBlockTokens, estimateMessageTokens, estimateTextTokens } from "../../src/core/token-estimate.js";

const blocks: ContentBlock[] = [
  { type: "text", text: "Fix the failing test in src/add.js, please." },
  { type: "text", text: "```ts\nexport const add = (a: number, b: number) => a + b;\n```" },
  { type: "tool_call", id: "a", name: "read_file", input: { path: "src/add.js" } },
  { type: "tool_result", callId: "a", content: "     1\texport function add(a, b) {\n     2\t  return a - b;\n     3\t}\n" },
  { type: "tool_result", callId: "b", content: [{ type: "text", text: "ok" }, { type: "image", mediaType: "image/png", data: "AAAA" }] },
  { type: "image", mediaType: "image/png", data: "AAAA" },
];
const message: Message = { role: "user", content: blocks };

test("chars4 counts exactly as the chars/4 estimate did, block by block and per message", () => {
  for (const b of blocks) assert.equal(chars4Counter.block(b), estimateBlockTokens(b));
  assert.equal(chars4Counter.message(message), estimateMessageTokens(message));
  assert.equal(chars4Counter.text("x".repeat(9)), estimateTextTokens("x".repeat(9)));
  assert.deepEqual(chars4Counter.record, { kind: "chars4" });
});

test("a text is code when fenced or dense in code symbols, prose otherwise", () => {
  assert.equal(textKind("Please fix the failing test; it says the sum is wrong."), "prose");
  assert.equal(textKind("Here:\n```\nnpm test\n```"), "code");
  assert.equal(textKind("if (a[i] === b) { return f(x); }"), "code");
  assert.equal(textKind(""), "prose");
});

test("a calibrated counter counts each kind's characters at its factor, with framing", () => {
  const counter = calibratedCounter("calibrated:0123456789abcdef", {
    perChar: { prose: 0.25, code: 0.5, json: 1, tool_result: 0.1 }, perMessage: 3, perToolBlock: 2,
  });
  assert.equal(counter.text("abcd efgh"), 3); // prose: ceil(9 × 0.25)
  assert.equal(counter.text("f(x); g(y);"), 6); // code: ceil(11 × 0.5)
  assert.equal(counter.block({ type: "tool_call", id: "a", name: "ab", input: { c: 1 } }), "ab".length + '{"c":1}'.length + 2);
  assert.equal(counter.block({ type: "tool_result", callId: "a", content: "x".repeat(100) }), 10 + 2);
  assert.equal(counter.message({ role: "user", content: [{ type: "text", text: "abcd" }] }), 1 + 3);
  assert.equal(counter.charsPerProseToken, 4);
  assert.deepEqual(counterOfRecord(counter.record)?.message(message), counter.message(message), "made again from its record, it counts the same");
});

test("a content measure adds each kind's characters, messages, tool blocks and images", () => {
  const m = measureContent(emptyMeasure(), { system: "You are terse.", tools: [{ name: "t" }], messages: [message] });
  assert.deepEqual(m, {
    chars: {
      prose: "You are terse.".length + (blocks[0] as { text: string }).text.length,
      code: (blocks[1] as { text: string }).text.length,
      json: '{"name":"t"}'.length + 'read_file{"path":"src/add.js"}'.length,
      tool_result: (blocks[3] as { content: string }).content.length + 2,
    },
    messages: 1, toolBlocks: 3, images: 2,
  });
});

test("a calibrated counter counts whole tokens even when its fitted framing is fractional", () => {
  const counter = calibratedCounter("calibrated:test", { perChar: { prose: 0.3, code: 0.4, json: 0.35, tool_result: 0.33 }, perMessage: 16.9956, perToolBlock: 3.4 });
  const message = { role: "assistant" as const, content: [{ type: "text" as const, text: "hello there" }, { type: "tool_call" as const, id: "c1", name: "read", input: { path: "a.ts" } }] };
  const tokens = counter.message(message);
  assert.ok(Number.isInteger(tokens), String(tokens));
  // 17 (framing) + ⌈11 × 0.3⌉ + ⌈the call's text × 0.35⌉ + 3 (the tool block's framing).
  assert.equal(tokens, 17 + 4 + Math.ceil(counter.text(`read${JSON.stringify({ path: "a.ts" })}`, "json")) + 3);
});
