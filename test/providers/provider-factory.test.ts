/**
 * createProvider: keys and base URLs from the `env` record handed in (never process.env), a
 * clear error naming the variable when a key is missing, and a placeholder key for a compatible
 * server that needs none — proven against the fake servers.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RhemaError } from "../../src/core/errors.js";
import type { ModelProvider, StreamEvent } from "../../src/core/provider.js";
import { NO_KEY_PLACEHOLDER, createProvider, type ProviderSpec } from "../../src/providers/provider-factory.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { FakeOpenAIServer } from "../support/fake-openai-server.js";

async function drain(provider: ModelProvider): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  const req = { system: null, tools: [], messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }], cacheBreakpoints: [] };
  for await (const e of provider.stream(req, new AbortController().signal)) events.push(e);
  return events;
}

function rejectsWith(fn: () => unknown, code: string, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof RhemaError);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

test("a missing API key is provider_unavailable, naming the variable to set", () => {
  rejectsWith(() => createProvider({ provider: "anthropic", name: "claude-x" }, {}), "provider_unavailable", /set ANTHROPIC_API_KEY/);
  rejectsWith(() => createProvider({ provider: "openai", name: "gpt-x" }, { OPENAI_API_KEY: "  " }), "provider_unavailable", /set OPENAI_API_KEY/);
});

test("reads keys from the env record it is given, not from process.env", (t) => {
  const saved = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = "sk-ambient";
  t.after(() => (saved === undefined ? delete process.env.ANTHROPIC_API_KEY : (process.env.ANTHROPIC_API_KEY = saved)));
  rejectsWith(() => createProvider({ provider: "anthropic", name: "claude-x" }, {}), "provider_unavailable", /ANTHROPIC_API_KEY/);
});

test("builds each provider with its id (the HTTP ones load their SDK at the first request)", () => {
  const env = { ANTHROPIC_API_KEY: "sk-a", OPENAI_API_KEY: "sk-o" };
  const anthropic = createProvider({ provider: "anthropic", name: "claude-x" }, env);
  const openai = createProvider({ provider: "openai", name: "gpt-x" }, env);
  const scripted = createProvider({ provider: "scripted", name: "fix-add", script: [{ say: "hi" }] }, {});
  assert.ok(scripted instanceof ScriptedProvider);
  assert.deepEqual([anthropic.id, openai.id, scripted.id], ["anthropic:claude-x", "openai:gpt-x", "scripted:fix-add"]);
  assert.deepEqual((scripted as ScriptedProvider).requests, []);
});

test("a spec without a model name, or with an unknown provider, is invalid_config", () => {
  rejectsWith(() => createProvider({ provider: "openai", name: "" }, { OPENAI_API_KEY: "k" }), "invalid_config", /model name/);
  const unknown = { provider: "mistral", name: "g" } as unknown as ProviderSpec;
  rejectsWith(() => createProvider(unknown, {}), "invalid_config", /unknown model provider "mistral"/);
});

test("a compatible server by base URL needs no key: the env's base URL is used and a placeholder sent", async (t) => {
  const server = await FakeOpenAIServer.start();
  t.after(() => server.close());
  server.reply({ kind: "stream", text: "local model here" });
  const provider = createProvider({ provider: "openai", name: "qwen2.5-coder" }, { OPENAI_BASE_URL: server.baseUrl });
  const events = await drain(provider);
  assert.equal(events[0]?.type, "text");
  assert.equal(server.requests[0]!.headers.authorization, `Bearer ${NO_KEY_PLACEHOLDER}`);
  assert.equal(server.bodies[0].model, "qwen2.5-coder");
});

test("the spec's base URL wins over the environment's, and the env key is sent", async (t) => {
  const server = await FakeAnthropicServer.start();
  t.after(() => server.close());
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "hi" }] });
  const env = { ANTHROPIC_API_KEY: "sk-from-env", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" };
  const provider = createProvider({ provider: "anthropic", name: "claude-x", baseUrl: server.baseUrl }, env, { retry: { maxAttempts: 1 } });
  await drain(provider);
  assert.equal(server.requests.length, 1);
  const headers = server.requests[0]!.headers;
  assert.match(String(headers["x-api-key"] ?? headers.authorization), /sk-from-env/);
});
