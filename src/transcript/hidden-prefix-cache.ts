/**
 * A session's hidden prefix in front of every request it sends to the prompt-cache simulator:
 * the tokens a harness sent that its log does not show (its system prompt and tools), as one
 * block of known size before the request's own, marked as the end of tools+system is (the
 * request's own tools+system mark covers it when it has one; else a mark of its own, the
 * request's earliest message marks giving way past Anthropic's four).
 */
import { ANTHROPIC_MAX_BREAKPOINTS } from "../cache/cache-rules.js";
import { breakpointsOf, planCacheMarks, promptLayout, type BlockMemo, type CacheBreakpoint } from "../cache/prompt-blocks.js";
import type { PromptCacheSimulator } from "../cache/prompt-cache-simulator.js";
import type { ModelRequest, Usage } from "../core/provider.js";
import { chars4Counter, type TokenCounter } from "../core/token-counter.js";
import type { ReplayCache } from "./replay.js";

export class HiddenPrefixCache implements ReplayCache {
  private readonly memo: BlockMemo = new WeakMap();
  private seeded = false;

  /**
   * `key` names the prefix: two requests share it exactly when their keys are equal.
   * `warmTokens` of it (its start) were cached before the first request — by other sessions of
   * the harness, as the first bill's cache read says: seeded then, not counted.
   */
  constructor(
    private readonly simulator: PromptCacheSimulator, private readonly tokens: number, private readonly key: string,
    private readonly counter: TokenCounter = chars4Counter, private readonly warmTokens = 0,
  ) {}

  observe(req: ModelRequest, atMs: number): Usage {
    if (this.tokens <= 0) return this.simulator.observe(req, atMs);
    const layout = promptLayout(req, this.memo, this.counter);
    const marks = planCacheMarks(req);
    const warm = Math.min(this.warmTokens, this.tokens);
    const hidden = warm > 0 && warm < this.tokens
      ? [{ content: `hidden-prefix:${this.key}:warm`, tokens: warm }, { content: `hidden-prefix:${this.key}:rest`, tokens: this.tokens - warm }]
      : [{ content: `hidden-prefix:${this.key}`, tokens: this.tokens }];
    let breakpoints: CacheBreakpoint[] = breakpointsOf(marks, layout).map((b) => ({ ...b, block: b.block + hidden.length }));
    const ttl = marks[0]?.ttl === "1h" ? "1h" : "5m";
    if (!marks.some((m) => m.target === "prefix")) {
      const rest = breakpoints.slice(-(ANTHROPIC_MAX_BREAKPOINTS - 1));
      breakpoints = [{ block: hidden.length - 1, ttl: rest.some((b) => b.ttl === "1h") ? "1h" : "5m" }, ...rest];
    }
    if (warm > 0 && !this.seeded) this.simulator.request({ blocks: [hidden[0]!], breakpoints: [{ block: 0, ttl }], at: atMs });
    this.seeded = true;
    return this.simulator.request({ blocks: [...hidden, ...layout.blocks], breakpoints, at: atMs });
  }
}
