/**
 * The block sequence of a request (tools → system → message blocks) and where its cache marks
 * go — the one plan both the Anthropic provider and the simulator follow.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { Message } from "../../src/core/messages.js";
import type { ModelRequest } from "../../src/core/provider.js";
import { estimateMessageTokens, estimateTextTokens } from "../../src/core/token-estimate.js";
import { breakpointsOf, planCacheMarks, prefixChain, promptLayout } from "../../src/cache/prompt-blocks.js";

const tool = (name: string) => ({ name, description: `${name} things`, inputSchema: { type: "object" } });
const text = (role: Message["role"], t: string): Message => ({ role, content: [{ type: "text", text: t }] });
const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({ system: "Be brief.", tools: [], messages: [], cacheBreakpoints: [], ...extra });

test("blocks come in the API's order: each tool, the system prompt, then each message's blocks", () => {
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "look" }, { type: "image", mediaType: "image/png", data: "AAAA" }] },
    { role: "assistant", content: [] },
    { role: "user", content: [{ type: "tool_result", callId: "c1", content: "done" }] },
  ];
  const layout = promptLayout(request({ tools: [tool("grep"), tool("glob")], messages }));
  const digest = (block: unknown) => createHash("sha256").update(JSON.stringify(block)).digest("hex");
  assert.deepEqual(
    layout.blocks.map((b) => b.content),
    [
      JSON.stringify({ tool: tool("grep") }),
      JSON.stringify({ tool: tool("glob") }),
      JSON.stringify({ system: "Be brief." }),
      `user:first:${digest(messages[0]!.content[0])}`,
      `next:${digest(messages[0]!.content[1])}`,
      "assistant:empty",
      `user:first:${digest(messages[2]!.content[0])}`,
    ],
  );
  assert.equal(layout.prefixEnd, 2);
  assert.deepEqual(layout.messageEnds, [4, 5, 6]);
  assert.equal(layout.blocks[2]!.tokens, estimateTextTokens("Be brief."));
  const messageTokens = (from: number, to: number) => layout.blocks.slice(from, to + 1).reduce((n, b) => n + b.tokens!, 0);
  assert.deepEqual([messageTokens(3, 4), messageTokens(5, 5), messageTokens(6, 6)], messages.map(estimateMessageTokens));
});

test("without a system prompt the prefix ends at the last tool; with neither there is no prefix", () => {
  assert.equal(promptLayout(request({ system: null, tools: [tool("grep")] })).prefixEnd, 0);
  assert.equal(promptLayout(request({ system: "", messages: [text("user", "hi")] })).prefixEnd, -1);
  assert.deepEqual(planCacheMarks(request({ system: null, messages: [text("user", "hi")], cacheBreakpoints: [0] })), [{ target: { message: 0 }, ttl: "5m" }]);
});

test("marks: the prefix end, then each breakpoint message once, in order, the last four winning", () => {
  const messages = ["a", "b", "c", "d", "e"].map((t, i) => text(i % 2 ? "assistant" : "user", t));
  assert.deepEqual(planCacheMarks(request({ messages, cacheBreakpoints: [2, 0, 2] })), [
    { target: "prefix", ttl: "5m" },
    { target: { message: 0 }, ttl: "5m" },
    { target: { message: 2 }, ttl: "5m" },
  ]);
  assert.deepEqual(planCacheMarks(request({ messages, cacheBreakpoints: [4, 0, 1, 2, 3, 9, -1, 1.5] })).map((m) => m.target), [
    { message: 1 }, { message: 2 }, { message: 3 }, { message: 4 },
  ]);
});

test("cacheOneHourThrough gives the prefix and the breakpoints up to it the hour, and the rest 5 minutes", () => {
  const messages = ["a", "b", "c", "d"].map((t, i) => text(i % 2 ? "assistant" : "user", t));
  const ttls = (cacheOneHourThrough?: number) => planCacheMarks(request({ messages, cacheBreakpoints: [1, 3], ...(cacheOneHourThrough === undefined ? {} : { cacheOneHourThrough }) })).map((m) => m.ttl);
  assert.deepEqual(ttls(), ["5m", "5m", "5m"]);
  assert.deepEqual(ttls(-1), ["1h", "5m", "5m"]);
  assert.deepEqual(ttls(1), ["1h", "1h", "5m"]);
  assert.deepEqual(ttls(3), ["1h", "1h", "1h"]);
  assert.deepEqual(ttls(-2), ["5m", "5m", "5m"]);
});

test("marks land on the prefix's last block and on each marked message's last block", () => {
  const req = request({ tools: [tool("grep")], messages: [text("user", "a"), { role: "assistant", content: [{ type: "text", text: "b" }, { type: "text", text: "c" }] }], cacheBreakpoints: [1], cacheOneHourThrough: -1 });
  const layout = promptLayout(req);
  assert.deepEqual(breakpointsOf(planCacheMarks(req), layout), [{ block: 1, ttl: "1h" }, { block: 4, ttl: "5m" }]);
});

test("a prefix key names everything before it: the same block after different blocks is a different prefix", () => {
  const a = prefixChain([{ content: "x" }, { content: "same", tokens: 7 }]);
  const b = prefixChain([{ content: "y" }, { content: "same", tokens: 7 }]);
  const c = prefixChain([{ content: "x" }, { content: "same", tokens: 7 }]);
  assert.notEqual(a.keys[1], b.keys[1]);
  assert.deepEqual(a, c);
  assert.deepEqual(a.ends, [estimateTextTokens("x"), estimateTextTokens("x") + 7]);
});
