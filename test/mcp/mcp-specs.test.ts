/** What a server's tools/list becomes: mcp__server__tool specs, sorted; a tool rhema cannot use is mcp_invalid naming it; changed specs by server. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { changedServers, toolSpecsOf } from "../../src/mcp/mcp-specs.js";
import { McpError } from "../../src/mcp/mcp-errors.js";

const object = (properties: Record<string, unknown> = {}) => ({ type: "object", properties });

test("listed tools become specs named mcp__server__tool, sorted by name, with the server's own names kept", () => {
  const specs = toolSpecsOf("gh", [
    { name: "search", description: "Searches", inputSchema: object({ q: { type: "string" } }), annotations: { readOnlyHint: true } },
    { name: "get_issue", inputSchema: object() },
  ]);
  assert.deepEqual(specs, [
    { spec: { name: "mcp__gh__get_issue", description: "", inputSchema: object() }, remoteName: "get_issue" },
    { spec: { name: "mcp__gh__search", description: "Searches", inputSchema: object({ q: { type: "string" } }) }, remoteName: "search" },
  ]);
});

test("a tool rhema cannot use is mcp_invalid naming the server and the tool", () => {
  const invalid = (tools: unknown[], message: RegExp) => assert.throws(() => toolSpecsOf("gh", tools), (err: unknown) => {
    assert.ok(err instanceof McpError);
    assert.equal(err.code, "mcp_invalid");
    assert.equal(err.server, "gh");
    assert.match(err.message, message);
    return true;
  });
  invalid([{ name: "bad", inputSchema: object({ x: { type: 12 } }) }], /the MCP server gh offers the tool "bad", which rhema cannot use: .*not valid JSON Schema/);
  invalid([{ name: "arr", inputSchema: { type: "array" } }], /"arr".*type is "array", not "object"/);
  invalid([{ name: "none" }], /"none".*not a JSON Schema object/);
  invalid([{ name: "has space", inputSchema: object() }], /"has space".*mcp__gh__has space/);
  invalid([{ inputSchema: object() }], /"#1".*no name/);
  invalid([{ name: "a", inputSchema: object() }, { name: "a", inputSchema: object() }], /two tools of that name/);
});

test("changed servers: a spec that differs, a server added or gone; the same specs none", () => {
  const a = [{ name: "mcp__a__x", description: "", inputSchema: object() }];
  assert.deepEqual(changedServers({ a }, { a: structuredClone(a) }), []);
  assert.deepEqual(changedServers({ a }, { a: [{ ...a[0]!, description: "new" }] }), ["a"]);
  assert.deepEqual(changedServers({ a }, { a, b: [] }), ["b"]);
  assert.deepEqual(changedServers({ b: [], a }, {}), ["a", "b"]);
});
