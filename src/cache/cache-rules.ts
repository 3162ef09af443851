/**
 * The documented numbers of the providers' prompt caches, in one place, with where they come
 * from — so that a change in the docs is a change here. Checked against Anthropic's "Prompt
 * caching" guide (platform.claude.com, build-with-claude/prompt-caching) and OpenAI's "Prompt
 * caching" guide (developers.openai.com, guides/prompt-caching).
 *
 * Anthropic:
 * - a request carries at most 4 `cache_control` marks (more is a 400);
 * - an entry is written only at a mark: the prefix up to and including the marked block, in the
 *   order tools → system → messages;
 * - a mark finds a cached prefix that ends at most 20 blocks before it (the lookback window);
 *   one further back is not found unless another mark is closer to it;
 * - a prefix shorter than the model's minimum is neither written nor read;
 * - TTL 5 minutes (default) or 1 hour, refreshed each time the entry is read; a 1-hour mark
 *   may not follow a 5-minute one.
 *
 * OpenAI: automatic; the longest cached prefix of 1,024 tokens or more is reused, counted in
 * 128-token steps; entries are evicted after idle minutes (5 to 10: we take 5) under the default
 * in-memory retention, or kept up to 24 hours with `prompt_cache_retention: "24h"`.
 */

export type CacheTtl = "5m" | "1h";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = { "5m": 5 * MINUTE_MS, "1h": HOUR_MS };

export const ANTHROPIC_MAX_BREAKPOINTS = 4;
/** How many blocks before a mark the API looks for a cached prefix. */
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;
/** The minimum for a model this table does not name (the most common figure). */
export const ANTHROPIC_DEFAULT_MIN_CACHEABLE_TOKENS = 1_024;

/**
 * Minimum cacheable prefix by model name, first match wins. Names are matched loosely so that
 * dated ids (`claude-sonnet-4-5-20250929`) and both word orders (`claude-3-5-haiku`) resolve.
 * Opus 4.7's figure differs between sources (4,096 here, from the brief and Bedrock's table;
 * one third-party page says 2,048): pass `minCacheableTokens` to override.
 */
const ANTHROPIC_MIN_CACHEABLE: ReadonlyArray<readonly [RegExp, number]> = [
  [/opus-4-[5-7](?!\d)/, 4_096],
  [/haiku-4-5(?!\d)/, 4_096],
  [/opus-4-8(?!\d)/, 1_024],
  [/(3-5-haiku|3-haiku|haiku-3)/, 2_048],
  [/(sonnet-4|opus-4|3-7-sonnet|sonnet-3-7)/, 1_024],
];

/** The minimum cacheable prefix, in tokens, for an Anthropic model name. */
export function anthropicMinCacheableTokens(model: string): number {
  const name = model.toLowerCase().replace(/\./g, "-");
  for (const [pattern, tokens] of ANTHROPIC_MIN_CACHEABLE) if (pattern.test(name)) return tokens;
  return ANTHROPIC_DEFAULT_MIN_CACHEABLE_TOKENS;
}

export const OPENAI_MIN_CACHEABLE_TOKENS = 1_024;
export const OPENAI_CACHE_STEP_TOKENS = 128;
export const OPENAI_IN_MEMORY_IDLE_MS = 5 * MINUTE_MS;
export const OPENAI_EXTENDED_RETENTION_MS = 24 * HOUR_MS;

export type OpenAiCacheRetention = "in_memory" | "24h";

/** The tokens OpenAI reports cached for a shared prefix: 0 under the minimum, else whole steps. */
export function openAiCachedTokens(sharedTokens: number): number {
  if (sharedTokens < OPENAI_MIN_CACHEABLE_TOKENS) return 0;
  return Math.floor(sharedTokens / OPENAI_CACHE_STEP_TOKENS) * OPENAI_CACHE_STEP_TOKENS;
}
