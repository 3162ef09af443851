/**
 * OpenAI's prompt-cache rules as pure functions: caching is automatic, marks are ignored.
 *
 * - Read: the longest live prefix of the prompt, reported in 128-token steps from 1,024
 *   (`openAiCachedTokens`: 1,300 shared tokens read as 1,280). Prefixes are matched at block
 *   boundaries: tokens shared inside the first block that differs are not counted.
 * - Write: every prefix of the prompt that reaches the minimum becomes (or stays) an entry that
 *   lives `idleMs` from this request. Writes cost nothing extra and are reported as input, as
 *   the API reports them for the models this simulates.
 */
import type { Usage } from "../core/provider.js";
import { OPENAI_MIN_CACHEABLE_TOKENS, openAiCachedTokens } from "./cache-rules.js";
import type { CacheEntry, CacheOutcome } from "./cache-outcome.js";
import type { PrefixChain } from "./prompt-blocks.js";

/** Usage and entry updates for one request under OpenAI's rules. */
export function openAiOutcome(
  entries: ReadonlyMap<string, CacheEntry>,
  prompt: PrefixChain,
  request: { at: number; idleMs: number },
): CacheOutcome {
  const { at, idleMs } = request;
  const last = prompt.keys.length - 1;
  let shared = 0;
  for (let k = last; k >= 0; k--) {
    const entry = entries.get(prompt.keys[k]!);
    if (entry !== undefined && at <= entry.expiresAt) {
      shared = prompt.ends[k]!;
      break;
    }
  }
  const updates: Array<[string, CacheEntry]> = [];
  for (let k = 0; k <= last; k++) {
    if (prompt.ends[k]! >= OPENAI_MIN_CACHEABLE_TOKENS) updates.push([prompt.keys[k]!, { expiresAt: at + idleMs, lifeMs: idleMs }]);
  }
  const read = openAiCachedTokens(shared);
  const total = last >= 0 ? prompt.ends[last]! : 0;
  const usage: Usage = { inputTokens: total - read, cacheReadTokens: read, cacheWriteTokens: 0, outputTokens: 0 };
  return { usage, updates };
}
