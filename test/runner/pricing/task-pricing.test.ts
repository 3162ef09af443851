import { test } from "node:test";
import assert from "node:assert/strict";
import { loadPriceTable } from "../../../src/runner/pricing/prices.js";
import { pricedModelLabel, taskPricing } from "../../../src/runner/pricing/task-pricing.js";

const usage = { inputTokens: 1_000, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 1_000 };
const SCRIPT = [{ say: "hi" }];

test("a scripted task is unpriced unless it names a model to price it as, and then the price is simulated", async () => {
  const table = await loadPriceTable();
  const plain = taskPricing({ spec: { provider: "scripted", script: SCRIPT } }, table);
  assert.equal(plain.task, null);
  assert.deepEqual(plain.pricer(usage, "task"), { priced: false });
  const priced = taskPricing({ spec: { provider: "scripted", script: SCRIPT }, priceAs: "claude-sonnet-4-5" }, table);
  assert.equal(pricedModelLabel(priced.task), "claude-sonnet-4-5 (simulated)");
  // Sonnet 4.5: $3 / MTok in, $15 / MTok out.
  const price = priced.pricer(usage, "task");
  assert.ok(price.priced);
  assert.equal(Math.round(price.usd * 1e6), 18_000);
});

test("a model on an OpenAI-compatible server is unpriced unless the pricing file names it", async () => {
  const local = { provider: "openai" as const, name: "gpt-4o-mini", baseUrl: "http://127.0.0.1:11434/v1" };
  assert.equal(taskPricing({ spec: local }, await loadPriceTable()).task, null);
  assert.equal(taskPricing({ spec: { provider: "openai", name: "gpt-4o-mini" }, envBaseUrl: "http://localhost:8000/v1" }, await loadPriceTable()).task, null);
  const free = await loadPriceTable([{ provider: "openai", model: "gpt-4o-mini", inputPerMTok: 0, outputPerMTok: 0 }]);
  const named = taskPricing({ spec: local }, free);
  assert.equal(pricedModelLabel(named.task), "openai/gpt-4o-mini");
  assert.deepEqual(named.pricer(usage, "task"), { priced: true, usd: 0 });
  assert.equal(pricedModelLabel(taskPricing({ spec: { ...local, baseUrl: "https://api.openai.com/v1" } }, await loadPriceTable()).task), "openai/gpt-4o-mini");
});

test("the worker's requests are priced as the worker's model, and a model the table does not know is unpriced", async () => {
  const table = await loadPriceTable();
  const pricing = taskPricing({ spec: { provider: "anthropic", name: "claude-sonnet-4-5" }, worker: { provider: "anthropic", name: "no-such-model-x" } }, table);
  assert.equal(pricedModelLabel(pricing.task), "anthropic/claude-sonnet-4-5");
  assert.equal(pricing.worker, null);
  assert.deepEqual(pricing.pricer(usage, "worker"), { priced: false });
  assert.ok(pricing.pricer(usage, "task").priced);
});

test("a Gemini model is priced from the table as Google's, its implicitly cached tokens at the cache price; at another host only as a pricing file names it", async () => {
  const table = await loadPriceTable();
  const gemini = taskPricing({ spec: { provider: "gemini", name: "gemini-2.5-flash" } }, table);
  assert.equal(pricedModelLabel(gemini.task), "google/gemini-2.5-flash");
  const fresh = gemini.pricer({ inputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 }, "task");
  const cached = gemini.pricer({ inputTokens: 0, cacheReadTokens: 1_000_000, cacheWriteTokens: 0, outputTokens: 0 }, "task");
  assert.ok(fresh.priced && cached.priced && cached.usd < fresh.usd, JSON.stringify({ fresh, cached }));
  assert.equal(taskPricing({ spec: { provider: "gemini", name: "gemini-2.5-flash" }, envBaseUrl: "http://127.0.0.1:8080" }, table).task, null);
  assert.equal(pricedModelLabel(taskPricing({ spec: { provider: "gemini", name: "gemini-2.5-flash", baseUrl: "https://generativelanguage.googleapis.com" } }, table).task), "google/gemini-2.5-flash");
});

test("Anthropic models on Bedrock and Vertex are priced by the table's AWS Bedrock and Google prices, by the platforms' own model ids (docs/tasks.md lists them)", async () => {
  const table = await loadPriceTable();
  // 1,000 input and 1,000 output tokens, in dollars: the price id each model id resolves to (docs/tasks.md) at its prices.
  const expected: Array<[provider: "anthropic-bedrock" | "anthropic-vertex", model: string, usd: number]> = [
    ["anthropic-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", 0.0198], // regional.anthropic.claude-sonnet-4-5-20250929-v1:0 (in-region: +10%)
    ["anthropic-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.0198],
    ["anthropic-bedrock", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.0198],
    ["anthropic-bedrock", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", 0.018], // global.anthropic.claude-sonnet-4-5-20250929-v1:0
    ["anthropic-bedrock", "us.anthropic.claude-haiku-4-5-20251001-v1:0", 0.0066],
    ["anthropic-bedrock", "us.anthropic.claude-opus-4-1-20250805-v1:0", 0.09],
    ["anthropic-bedrock", "global.anthropic.claude-opus-4-5-20251101-v1:0", 0.03],
    ["anthropic-vertex", "claude-sonnet-4-5@20250929", 0.018], // google/claude-sonnet-4-5
    ["anthropic-vertex", "claude-haiku-4-5@20251001", 0.006],
    ["anthropic-vertex", "claude-opus-4-1@20250805", 0.09], // google/claude-4-opus
    ["anthropic-vertex", "claude-opus-4-5@20251101", 0.03],
  ];
  const got = expected.map(([provider, name]) => {
    const pricing = taskPricing({ spec: { provider, name } }, table);
    const price = pricing.pricer(usage, "task");
    return [provider, name, price.priced ? Number(price.usd.toFixed(6)) : null] as const;
  });
  assert.deepEqual(got, expected);
  // A gateway or private endpoint in front of the platform keeps the price (the registry names no own hosts for them).
  assert.equal(pricedModelLabel(taskPricing({ spec: { provider: "anthropic-bedrock", name: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", baseUrl: "https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com" } }, table).task), "aws/us.anthropic.claude-sonnet-4-5-20250929-v1:0");
  // An application inference profile's ARN names no model: unpriced unless a pricing file names it.
  assert.equal(taskPricing({ spec: { provider: "anthropic-bedrock", name: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123" } }, table).task, null);
});
