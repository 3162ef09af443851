/**
 * A prompt-cache simulator, so offline runs report cache figures that mean something. It is
 * fed the requests a provider actually receives and applies the real providers' rules:
 *
 * - `anthropic`: explicit breakpoints (the end of system+tools, and each index in
 *   `cacheBreakpoints`). A request reads the longest cached prefix that ends at a message
 *   boundary, writes the span from there to its last breakpoint, and pays the rest as input.
 *   Prefixes under `minCacheableTokens` (1,024) are never cached. Entries live `ttlMs`
 *   (5 minutes), refreshed by every hit.
 * - `openai`: automatic; every request's prefix is cached at 128-token granularity past
 *   1,024 tokens, and writes cost nothing extra (they are reported as input).
 *
 * Sizes are estimated at four characters a token over the canonical JSON of each block.
 */
import { createHash } from "node:crypto";
import type { ModelRequest, Usage } from "../core/provider.js";
import { estimateTextTokens } from "../core/token-estimate.js";

export type CacheRules = "anthropic" | "openai";

export interface PromptCacheSimulatorOptions {
  rules?: CacheRules;
  ttlMs?: number;
  minCacheableTokens?: number;
  /** Milliseconds clock, for TTL; injected so replays can use recorded times. */
  now?: () => number;
}

interface Boundary {
  /** Hash of everything up to and including this block. */
  key: string;
  /** Tokens up to and including this block. */
  tokens: number;
}

export class PromptCacheSimulator {
  private readonly rules: CacheRules;
  private readonly ttlMs: number;
  private readonly minTokens: number;
  private readonly now: () => number;
  /** Prefix key → expiry time. */
  private readonly entries = new Map<string, number>();

  constructor(options: PromptCacheSimulatorOptions = {}) {
    this.rules = options.rules ?? "anthropic";
    this.ttlMs = options.ttlMs ?? 5 * 60_000;
    this.minTokens = options.minCacheableTokens ?? 1_024;
    this.now = options.now ?? Date.now;
  }

  /** The usage the provider would report for `req` (output tokens left at 0), and its cache effect. */
  observe(req: ModelRequest): Usage {
    const at = this.now();
    const boundaries = prefixBoundaries(req);
    const total = boundaries[boundaries.length - 1]?.tokens ?? 0;
    let read = 0;
    for (let i = boundaries.length - 1; i >= 0; i--) {
      const b = boundaries[i]!;
      const expiry = this.entries.get(b.key);
      if (expiry !== undefined && expiry > at) {
        read = b.tokens;
        this.entries.set(b.key, at + this.ttlMs);
        break;
      }
    }
    const writeTo = this.rules === "anthropic" ? this.anthropicWrites(req, boundaries, at) : this.openaiWrites(boundaries, at);
    if (this.rules === "openai") {
      read = Math.floor(read / 128) * 128;
      return { inputTokens: total - read, cacheReadTokens: read, cacheWriteTokens: 0, outputTokens: 0 };
    }
    const write = Math.max(0, writeTo - read);
    return { inputTokens: total - read - write, cacheReadTokens: read, cacheWriteTokens: write, outputTokens: 0 };
  }

  /** Caches each breakpoint's prefix; returns the token count of the furthest one written. */
  private anthropicWrites(req: ModelRequest, boundaries: Boundary[], at: number): number {
    // boundaries[0] is system+tools; message i ends at boundaries[i + 1].
    const marks = new Set<number>([0, ...req.cacheBreakpoints.map((i) => i + 1)]);
    let furthest = 0;
    for (const m of marks) {
      const b = boundaries[m];
      if (!b || b.tokens < this.minTokens) continue;
      this.entries.set(b.key, at + this.ttlMs);
      furthest = Math.max(furthest, b.tokens);
    }
    return furthest;
  }

  private openaiWrites(boundaries: Boundary[], at: number): number {
    for (const b of boundaries) if (b.tokens >= this.minTokens) this.entries.set(b.key, at + this.ttlMs);
    return 0;
  }
}

/** A hash chain over system+tools and then each message: one boundary per block. */
export function prefixBoundaries(req: ModelRequest): Boundary[] {
  const out: Boundary[] = [];
  let hash = createHash("sha256").update(JSON.stringify({ system: req.system, tools: req.tools })).digest("hex");
  let tokens = estimateTextTokens((req.system ?? "") + JSON.stringify(req.tools));
  out.push({ key: hash, tokens });
  for (const message of req.messages) {
    const text = JSON.stringify(message);
    hash = createHash("sha256").update(hash).update(text).digest("hex");
    tokens += estimateTextTokens(text);
    out.push({ key: hash, tokens });
  }
  return out;
}
