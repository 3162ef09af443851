/**
 * Anthropic's prompt-cache rules as pure functions: given the live entries, one request's
 * prefixes and marks, and the time, what the API would report and which entries it leaves.
 *
 * - Read: each mark looks at its own block and up to `ANTHROPIC_LOOKBACK_BLOCKS` blocks before
 *   it for a live entry; the longest prefix found by any mark is read, and that entry's TTL
 *   starts again.
 * - Write: an entry is made at each mark whose prefix reaches the model's minimum. Tokens past
 *   the read are written, and split by TTL as the docs bill them: from the read to the last
 *   1-hour mark at the 1-hour rate, from there to the last mark at the 5-minute rate. A mark
 *   inside the read prefix costs nothing more; its entry is refreshed (or made) all the same.
 * - Everything after the last mark, and anything not read or written, is input.
 * Entries are never read under the minimum because they are never written under it.
 */
import { ANTHROPIC_LOOKBACK_BLOCKS, ANTHROPIC_MAX_BREAKPOINTS, CACHE_TTL_MS, type CacheTtl } from "./cache-rules.js";
import type { CacheEntry, CacheOutcome } from "./cache-outcome.js";
import { CacheRequestError } from "./cache-request-error.js";
import type { CacheBreakpoint, PrefixChain } from "./prompt-blocks.js";

interface Mark {
  block: number;
  ttl: CacheTtl;
}

/** Usage and entry updates for one request under Anthropic's rules. Throws `CacheRequestError`. */
export function anthropicOutcome(
  entries: ReadonlyMap<string, CacheEntry>,
  prompt: PrefixChain,
  request: { breakpoints: readonly CacheBreakpoint[]; at: number; minTokens: number },
): CacheOutcome {
  const marks = checkedMarks(request.breakpoints, prompt.keys.length);
  const { at, minTokens } = request;
  const alive = (k: number) => {
    const entry = entries.get(prompt.keys[k]!);
    return entry !== undefined && at <= entry.expiresAt ? entry : undefined;
  };
  const tokensThrough = (k: number) => (k < 0 ? 0 : prompt.ends[k]!);

  const readEnd = longestHit(marks, (k) => alive(k) !== undefined);
  const updates = new Map<string, CacheEntry>();
  const readEntry = readEnd >= 0 ? alive(readEnd)! : undefined;
  if (readEntry) updates.set(prompt.keys[readEnd]!, { expiresAt: at + readEntry.lifeMs, lifeMs: readEntry.lifeMs });

  let hourEnd = readEnd;
  let writeEnd = readEnd;
  for (const mark of marks) {
    if (tokensThrough(mark.block) < minTokens) continue;
    const key = prompt.keys[mark.block]!;
    updates.set(key, refreshed(updates.get(key) ?? alive(mark.block), mark.ttl, at));
    if (mark.block > readEnd) {
      writeEnd = Math.max(writeEnd, mark.block);
      if (mark.ttl === "1h") hourEnd = Math.max(hourEnd, mark.block);
    }
  }
  const read = tokensThrough(readEnd);
  const hour = tokensThrough(hourEnd) - read;
  const write = tokensThrough(writeEnd) - read;
  const total = tokensThrough(prompt.keys.length - 1);
  return {
    usage: {
      inputTokens: total - read - write,
      cacheReadTokens: read,
      cacheWriteTokens: write,
      ...(hour > 0 ? { cacheWrite1hTokens: hour } : {}),
      outputTokens: 0,
    },
    updates: [...updates],
  };
}

/** The last block of the longest live prefix any mark finds in its lookback window; -1 if none. */
function longestHit(marks: readonly Mark[], isAlive: (block: number) => boolean): number {
  let hit = -1;
  for (const mark of marks) {
    for (let k = mark.block; k >= Math.max(0, mark.block - ANTHROPIC_LOOKBACK_BLOCKS) && k > hit; k--) {
      if (isAlive(k)) {
        hit = k;
        break;
      }
    }
  }
  return hit;
}

/** An entry written at `at` with `ttl`, keeping a live one's longer life. */
function refreshed(previous: CacheEntry | undefined, ttl: CacheTtl, at: number): CacheEntry {
  const lifeMs = CACHE_TTL_MS[ttl];
  if (previous && previous.expiresAt > at + lifeMs) return previous;
  return { expiresAt: at + lifeMs, lifeMs };
}

/** The marks, validated as the API validates them (count, place, TTL order), in block order. */
function checkedMarks(breakpoints: readonly CacheBreakpoint[], blockCount: number): Mark[] {
  if (breakpoints.length > ANTHROPIC_MAX_BREAKPOINTS) {
    throw new CacheRequestError(
      `${breakpoints.length} cache breakpoints in one request; Anthropic accepts at most ${ANTHROPIC_MAX_BREAKPOINTS} (the API answers 400)`,
    );
  }
  const marks = breakpoints.map((b, i): Mark => {
    if (!Number.isInteger(b.block) || b.block < 0 || b.block >= blockCount) {
      throw new CacheRequestError(`breakpoints[${i}].block: expected a block index from 0 to ${blockCount - 1}, got ${JSON.stringify(b.block)}`);
    }
    const ttl = b.ttl ?? "5m";
    if (!Object.hasOwn(CACHE_TTL_MS, ttl)) throw new CacheRequestError(`breakpoints[${i}].ttl: expected "5m" or "1h", got ${JSON.stringify(b.ttl)}`);
    return { block: b.block, ttl };
  });
  marks.sort((a, b) => a.block - b.block);
  for (let i = 1; i < marks.length; i++) {
    if (marks[i]!.block === marks[i - 1]!.block) throw new CacheRequestError(`two breakpoints on block ${marks[i]!.block}`);
    if (marks[i]!.ttl === "1h" && marks[i - 1]!.ttl === "5m") {
      throw new CacheRequestError(
        `a 1h breakpoint (block ${marks[i]!.block}) follows a 5m one (block ${marks[i - 1]!.block}); Anthropic requires longer TTLs first (the API answers 400)`,
      );
    }
  }
  return marks;
}
