/** What the model sees of an MCP call's answer (mcp-toolset.ts `resultContent`): text and images, text capped as a shell command's output is. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { MCP_TEXT_HEAD_BYTES, MCP_TEXT_TAIL_BYTES, resultContent } from "../../src/mcp/mcp-toolset.js";

test("an answer's text blocks are joined; a huge one keeps its head and tail with a marker saying what was left out", () => {
  assert.equal(resultContent({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], isError: false }), "a\nb");
  const huge = `START${"x".repeat(5_000_000)}END`;
  const seen = resultContent({ content: [{ type: "text", text: huge }], isError: false }) as string;
  assert.ok(seen.startsWith("STARTxxx") && seen.endsWith("xxxEND"));
  assert.ok(Buffer.byteLength(seen) < MCP_TEXT_HEAD_BYTES + MCP_TEXT_TAIL_BYTES + 200, `${Buffer.byteLength(seen)} bytes`);
  assert.match(seen, new RegExp(`\\[${huge.length - MCP_TEXT_HEAD_BYTES - MCP_TEXT_TAIL_BYTES} bytes of output omitted; ${huge.length} bytes in all\\]`));
});

test("beside an image, each text block is capped on its own and the image passes whole", () => {
  const image = { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" };
  const blocks = resultContent({ content: [{ type: "text", text: "y".repeat(100_000) }, image], isError: false }) as Array<{ type: string; text?: string; data?: string }>;
  assert.equal(blocks.length, 2);
  assert.match(blocks[0]!.text!, /bytes of output omitted/);
  assert.deepEqual(blocks[1], { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" });
});

test("structured content alone is its JSON text; other kinds of content are their JSON", () => {
  assert.equal(resultContent({ content: [], isError: false, structuredContent: { n: 1 } }), '{"n":1}');
  assert.equal(resultContent({ content: [{ type: "resource", resource: { uri: "file:///x" } }], isError: false }), '{"type":"resource","resource":{"uri":"file:///x"}}');
});
