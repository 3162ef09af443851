/**
 * The prompt-cache simulator, so offline runs and replays report cache figures that mean
 * something. It holds the live cache entries of one model and nothing else: no I/O and no clock
 * of its own — each request says when it happens (`at`, in ms), so a replay models pauses.
 *
 * Two ways in, same rules:
 * - `request({ blocks, breakpoints, at })`: a prompt as blocks and marks (see prompt-blocks.ts),
 *   for a replay that builds its own prompts;
 * - `observe(req, at)`: a `ModelRequest`, laid out and marked exactly as the Anthropic provider
 *   sends it (`promptLayout` + `planCacheMarks`).
 * The rules themselves are pure functions in anthropic-cache.ts and openai-cache.ts; their
 * numbers, and where they come from, are in cache-rules.ts.
 */
import { RhemaError } from "../core/errors.js";
import type { ModelRequest, Usage } from "../core/provider.js";
import type { TokenCounter } from "../core/token-counter.js";
import { anthropicOutcome } from "./anthropic-cache.js";
import type { CacheEntry, CacheOutcome } from "./cache-outcome.js";
import { CacheRequestError } from "./cache-request-error.js";
import {
  ANTHROPIC_DEFAULT_MIN_CACHEABLE_TOKENS,
  OPENAI_EXTENDED_RETENTION_MS,
  OPENAI_IN_MEMORY_IDLE_MS,
  anthropicMinCacheableTokens,
  type OpenAiCacheRetention,
} from "./cache-rules.js";
import { openAiOutcome } from "./openai-cache.js";
import { breakpointsOf, planCacheMarks, prefixChain, promptLayout, type BlockMemo, type CacheBreakpoint, type PromptBlock } from "./prompt-blocks.js";

export type CacheRules = "anthropic" | "openai";

export interface PromptCacheSimulatorOptions {
  /** Whose rules (default `anthropic`). */
  rules?: CacheRules;
  /** Anthropic: the model whose minimum cacheable prefix applies (default: 1,024 tokens). */
  model?: string;
  /** Anthropic: overrides the model's minimum cacheable prefix, in tokens. */
  minCacheableTokens?: number;
  /** OpenAI: `prompt_cache_retention` — `in_memory` (default, idle expiry) or `24h`. */
  retention?: OpenAiCacheRetention;
  /** OpenAI: how long an unused entry lives; default 5 minutes in memory, 24 hours for `24h`. */
  idleTtlMs?: number;
  /** Counts each block of an observed request (default chars4): the engine's counter, so usage and budgets agree. */
  counter?: TokenCounter;
}

/** One request in blocks: `breakpoints` are ignored under OpenAI's rules. */
export interface CacheRequest {
  blocks: readonly PromptBlock[];
  breakpoints?: readonly CacheBreakpoint[];
  /** When the request is sent, in ms (any epoch, as long as it is the same for every request). */
  at: number;
}

export class PromptCacheSimulator {
  readonly rules: CacheRules;
  /** Anthropic's minimum cacheable prefix for this simulator's model. */
  readonly minCacheableTokens: number;
  /** OpenAI's idle expiry. */
  readonly idleTtlMs: number;
  private readonly entries = new Map<string, CacheEntry>();
  private readonly memo: BlockMemo = new WeakMap();
  private purgeAtSize = 1_024;
  private readonly counter: TokenCounter | undefined;

  constructor(options: PromptCacheSimulatorOptions = {}) {
    this.rules = options.rules ?? "anthropic";
    if (this.rules !== "anthropic" && this.rules !== "openai") {
      throw new RhemaError("invalid_config", `prompt-cache simulator: expected \`rules\` "anthropic" or "openai", got ${JSON.stringify(options.rules)}`);
    }
    this.minCacheableTokens = positive(
      "minCacheableTokens",
      options.minCacheableTokens ?? (options.model ? anthropicMinCacheableTokens(options.model) : ANTHROPIC_DEFAULT_MIN_CACHEABLE_TOKENS),
    );
    const retention = options.retention ?? "in_memory";
    if (retention !== "in_memory" && retention !== "24h") {
      throw new RhemaError("invalid_config", `prompt-cache simulator: expected \`retention\` "in_memory" or "24h", got ${JSON.stringify(options.retention)}`);
    }
    this.counter = options.counter;
    this.idleTtlMs = positive("idleTtlMs", options.idleTtlMs ?? (retention === "24h" ? OPENAI_EXTENDED_RETENTION_MS : OPENAI_IN_MEMORY_IDLE_MS));
  }

  /** The usage the provider would report for `req` sent at `at` (output tokens 0); updates the cache. */
  observe(req: ModelRequest, at: number): Usage {
    const layout = promptLayout(req, this.memo, this.counter);
    return this.request({ blocks: layout.blocks, breakpoints: breakpointsOf(planCacheMarks(req), layout), at });
  }

  /** The usage for one request in blocks (output tokens 0); updates the cache. Throws `CacheRequestError`. */
  request(input: CacheRequest): Usage {
    const { at } = input;
    if (typeof at !== "number" || !Number.isFinite(at)) throw new CacheRequestError(`expected \`at\` as a time in ms, got ${typeof at === "number" ? at : JSON.stringify(at)}`);
    const prompt = prefixChain(input.blocks);
    const outcome: CacheOutcome =
      this.rules === "anthropic"
        ? anthropicOutcome(this.entries, prompt, { breakpoints: input.breakpoints ?? [], at, minTokens: this.minCacheableTokens })
        : openAiOutcome(this.entries, prompt, { at, idleMs: this.idleTtlMs });
    for (const [key, entry] of outcome.updates) this.entries.set(key, entry);
    this.purgeExpired(at);
    return outcome.usage;
  }

  /** Drops dead entries once the map has doubled since the last purge (amortized O(1)). */
  private purgeExpired(at: number): void {
    if (this.entries.size < this.purgeAtSize) return;
    for (const [key, entry] of this.entries) if (entry.expiresAt < at) this.entries.delete(key);
    this.purgeAtSize = Math.max(1_024, 2 * this.entries.size);
  }
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RhemaError("invalid_config", `prompt-cache simulator: expected \`${name}\` to be a whole number from 1 and up, got ${JSON.stringify(value)}`);
  }
  return value;
}
