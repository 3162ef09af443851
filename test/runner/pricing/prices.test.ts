import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { PRICE_TABLE, genaiUsage, loadPriceTable, priceByPricing, priceTable, type ModelPricing } from "../../../src/runner/pricing/prices.js";
import { repoRoot } from "../../support/paths.js";

const usage = (u: Partial<{ inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number; cacheWrite1hTokens: number; outputTokens: number; reasoningTokens: number }>) =>
  ({ inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, ...u });

test("a known model is priced per request from the published prices: cache reads at a tenth, writes at 1.25×, 1-hour writes at 2×", async () => {
  const table = await loadPriceTable();
  // claude-sonnet-4-5: $3 / MTok input, $15 output, $0.30 cache read, $3.75 5-minute write, $6 1-hour write.
  const one = table.price("anthropic", "claude-sonnet-4-5", usage({ inputTokens: 10_000, cacheReadTokens: 100_000, cacheWriteTokens: 20_000, cacheWrite1hTokens: 5_000, outputTokens: 2_000 }));
  const expected = (10_000 * 3 + 100_000 * 0.3 + 15_000 * 3.75 + 5_000 * 6 + 2_000 * 15) / 1e6;
  assert.ok(one.priced);
  assert.ok(Math.abs(one.usd - expected) < 1e-9, `${one.usd} vs ${expected}`);
  // Were cache reads priced as input, the same request would cost more.
  const asInput = (110_000 * 3 + 15_000 * 3.75 + 5_000 * 6 + 2_000 * 15) / 1e6;
  assert.ok(one.usd < asInput);
});

test("reasoning tokens are priced inside output, never on top: {output 1000, reasoning 400} costs what {output 1000} does", async () => {
  const table = await loadPriceTable();
  const thought = usage({ inputTokens: 2_000, outputTokens: 1_000, reasoningTokens: 400 });
  const plain = usage({ inputTokens: 2_000, outputTokens: 1_000 });
  for (const [provider, model, perOutput] of [["openai", "gpt-5-mini", 2], ["anthropic", "claude-sonnet-4-5", 15]] as const) {
    const [a, b] = [table.price(provider, model, thought), table.price(provider, model, plain)];
    assert.ok(a.priced && b.priced, model);
    assert.equal(a.usd, b.usd, model);
    // …and reasoning at the output price, not free: 400 more output tokens cost 400 × the output price.
    const more = table.price(provider, model, usage({ inputTokens: 2_000, outputTokens: 1_400, reasoningTokens: 400 }));
    assert.ok(more.priced && Math.abs(more.usd - a.usd - (400 * perOutput) / 1e6) < 1e-12, model);
  }
  const file: ModelPricing = { provider: "openai", model: "o-local", inputPerMTok: 1, outputPerMTok: 8 };
  assert.equal(priceByPricing(file, thought), priceByPricing(file, plain));
  assert.equal(priceByPricing(file, thought), (2_000 * 1 + 1_000 * 8) / 1e6);
  assert.equal("reasoning_tokens" in genaiUsage(thought), false);
});

test("rhema's inputTokens exclude the cached ones; the table's include them", () => {
  assert.deepEqual(genaiUsage(usage({ inputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 20, outputTokens: 1 })), {
    input_tokens: 125, cache_read_tokens: 100, cache_write_tokens: 20, output_tokens: 1,
  });
});

test("tiered models are priced per request, never on summed usage", async () => {
  const table = await loadPriceTable();
  const small = usage({ inputTokens: 150_000 });
  const two = table.price("anthropic", "claude-sonnet-4-5", small);
  const summed = table.price("anthropic", "claude-sonnet-4-5", usage({ inputTokens: 300_000 }));
  assert.ok(two.priced && summed.priced);
  assert.ok(Math.abs(2 * two.usd - 0.9) < 1e-9, "two requests of 150k at $3 / MTok");
  assert.ok(summed.usd > 2 * two.usd, "one request of 300k passes the 200k tier");
});

test("an unknown model is unpriced, never $0; a pricing file's entry prices it (zeros make it free)", async () => {
  const local: ModelPricing = { provider: "openai", model: "llama-local", inputPerMTok: 0, outputPerMTok: 0 };
  assert.deepEqual((await loadPriceTable()).price("openai", "llama-local", usage({ inputTokens: 1000 })), { priced: false });
  assert.equal((await loadPriceTable()).knows("openai", "llama-local"), false);
  const table = await loadPriceTable([local]);
  assert.deepEqual(table.price("openai", "llama-local", usage({ inputTokens: 1000 })), { priced: true, usd: 0 });
  assert.equal(table.knows("openai", "llama-local"), true);
});

test("a pricing file's entry overrides the table, with cache prices defaulting to the input price", async () => {
  const p: ModelPricing = { provider: "anthropic", model: "claude-sonnet-4-5", inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.5 };
  assert.equal(priceByPricing(p, usage({ inputTokens: 1e6, cacheReadTokens: 1e6, cacheWriteTokens: 1e6, outputTokens: 1e6 })), 1 + 0.5 + 1 + 2);
  const table = await loadPriceTable([p]);
  const r = table.price("anthropic", "claude-sonnet-4-5", usage({ inputTokens: 1e6 }));
  assert.deepEqual(r, { priced: true, usd: 1 });
});

test("the price table version recorded in stats.json is the version installed (and pinned in package.json)", async () => {
  const installed = JSON.parse(await readFile(join(repoRoot, "node_modules/@pydantic/genai-prices/package.json"), "utf8")) as { version: string };
  const pinned = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  assert.equal(PRICE_TABLE.version, installed.version);
  assert.equal(pinned.dependencies["@pydantic/genai-prices"], installed.version);
});

test("without the bundled table only a pricing file's models are priced: what a run of scripted tasks uses, never loading the table", () => {
  const local: ModelPricing = { provider: "openai", model: "llama-local", inputPerMTok: 1, outputPerMTok: 0 };
  const table = priceTable([local], null);
  assert.deepEqual(table.price("anthropic", "claude-sonnet-4-5", usage({ inputTokens: 1000 })), { priced: false });
  assert.equal(table.knows("anthropic", "claude-sonnet-4-5"), false);
  assert.deepEqual(table.price("openai", "llama-local", usage({ inputTokens: 1e6 })), { priced: true, usd: 1 });
});
