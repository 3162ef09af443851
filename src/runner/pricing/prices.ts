/**
 * What a request costs, in dollars: `@pydantic/genai-prices`' bundled table (offline; its remote
 * update is never called), overridden or extended by the models of a pricing file. Each request
 * is priced on its own and the dollars summed — some models are priced by tiers of request size,
 * so pricing summed usage would be wrong. A model the table does not know is *unpriced*, never
 * $0.
 */
import type { calcPrice } from "@pydantic/genai-prices";
import type { RequestPrice, Usage } from "../../core/provider.js";

/** The bundled table's pricing function. */
type BundledPrices = typeof calcPrice;

/** The price table's source and version, recorded in stats.json. */
export const PRICE_TABLE = { source: "@pydantic/genai-prices", version: "0.1.8" } as const;

/** A model's prices in dollars per million tokens, as a pricing file gives them. */
export interface ModelPricing {
  provider: string;
  model: string;
  inputPerMTok: number;
  outputPerMTok: number;
  /** Default: the input price (no cache discount). */
  cacheReadPerMTok?: number;
  /** 5-minute writes. Default: the input price. */
  cacheWritePerMTok?: number;
  /** 1-hour writes. Default: the 5-minute write price. */
  cacheWrite1hPerMTok?: number;
}

export interface PriceTable {
  /**
   * The price of one request of `model` at `provider` with `usage`; a null provider lets the
   * table find the model at any provider (a scripted task's `priceAs`).
   */
  price(provider: string | null, model: string, usage: Usage): RequestPrice;
  /** True when `model` at `provider` has a price (asked before a cost budget is accepted). */
  knows(provider: string | null, model: string): boolean;
  /** True when a pricing file names `model` (at `provider`, or at any provider when null). */
  overrides(provider: string | null, model: string): boolean;
}

/**
 * The bundled table, with `overrides` (a pricing file's models) taking precedence. The table is
 * loaded on first use, ~40 ms: a run whose tasks price no real model never loads it.
 */
export async function loadPriceTable(overrides: readonly ModelPricing[] = []): Promise<PriceTable> {
  const { calcPrice } = await import("@pydantic/genai-prices");
  return priceTable(overrides, calcPrice);
}

/** A pricing file's models (`overrides`) over `bundled`, the bundled table; without it, every other model is unpriced. */
export function priceTable(overrides: readonly ModelPricing[], bundled: BundledPrices | null): PriceTable {
  const own = new Map(overrides.map((m) => [key(m.provider, m.model), m]));
  const override = (provider: string | null, model: string): ModelPricing | undefined =>
    provider === null ? overrides.find((m) => m.model === model) : own.get(key(provider, model));
  const price = (provider: string | null, model: string, usage: Usage): RequestPrice => {
    const chosen = override(provider, model);
    if (chosen) return { priced: true, usd: priceByPricing(chosen, usage) };
    const result = bundled === null ? null : bundledPrice(bundled, provider, model, usage);
    return result === null ? { priced: false } : { priced: true, usd: result };
  };
  return {
    price,
    knows: (provider, model) => price(provider, model, { inputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 1 }).priced,
    overrides: (provider, model) => override(provider, model) !== undefined,
  };
}

function key(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

/**
 * rhema's usage in the table's terms: its `input_tokens` include the cached ones. Reasoning
 * tokens are already in `output_tokens` and priced there: no separate count is passed on.
 */
export function genaiUsage(usage: Usage): Record<string, number> {
  const oneHour = usage.cacheWrite1hTokens ?? 0;
  return {
    input_tokens: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
    cache_read_tokens: usage.cacheReadTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    ...(oneHour > 0 ? { cache_write_1h_tokens: oneHour } : {}),
    output_tokens: usage.outputTokens,
  };
}

function bundledPrice(calc: BundledPrices, provider: string | null, model: string, usage: Usage): number | null {
  try {
    const result = calc(genaiUsage(usage), model, provider === null ? {} : { providerId: provider });
    return result === null ? null : result.total_price;
  } catch {
    // The table refuses usage it cannot price (e.g. a model without cache prices): unpriced.
    return null;
  }
}

export function priceByPricing(p: ModelPricing, usage: Usage): number {
  const oneHour = usage.cacheWrite1hTokens ?? 0;
  const write5m = p.cacheWritePerMTok ?? p.inputPerMTok;
  const dollars = usage.inputTokens * p.inputPerMTok
    + usage.cacheReadTokens * (p.cacheReadPerMTok ?? p.inputPerMTok)
    + (usage.cacheWriteTokens - oneHour) * write5m
    + oneHour * (p.cacheWrite1hPerMTok ?? write5m)
    + usage.outputTokens * p.outputPerMTok;
  return dollars / 1_000_000;
}
