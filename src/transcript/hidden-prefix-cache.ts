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
import type { ReplayCache } from "./replay.js";

export class HiddenPrefixCache implements ReplayCache {
  private readonly memo: BlockMemo = new WeakMap();

  /** `key` names the prefix: two requests share it exactly when their keys are equal. */
  constructor(private readonly simulator: PromptCacheSimulator, private readonly tokens: number, private readonly key: string) {}

  observe(req: ModelRequest, atMs: number): Usage {
    if (this.tokens <= 0) return this.simulator.observe(req, atMs);
    const layout = promptLayout(req, this.memo);
    const marks = planCacheMarks(req);
    let breakpoints: CacheBreakpoint[] = breakpointsOf(marks, layout).map((b) => ({ ...b, block: b.block + 1 }));
    if (!marks.some((m) => m.target === "prefix")) {
      const rest = breakpoints.slice(-(ANTHROPIC_MAX_BREAKPOINTS - 1));
      breakpoints = [{ block: 0, ttl: rest.some((b) => b.ttl === "1h") ? "1h" : "5m" }, ...rest];
    }
    return this.simulator.request({ blocks: [{ content: `hidden-prefix:${this.key}`, tokens: this.tokens }, ...layout.blocks], breakpoints, at: atMs });
  }
}
