/**
 * Which TTL a request's cache marks carry: the task's setting (`5m`, `1h` or `auto`), and for
 * `auto` a guess, from what is known when the request is sent, whether the gap before the next
 * request will outlive the 5-minute entries but not the 1-hour ones.
 *
 * The arithmetic behind `auto` (Anthropic's multipliers): marking a request 1 hour costs 0.75 ×
 * the tokens it writes more than 5 minutes would (2 × instead of 1.25 ×); when the next gap is
 * longer than 5 minutes and at most an hour, it saves the next request rewriting this one's
 * prompt (1.25 ×) by reading it (0.1 ×). So 1 hour pays when the chance of such a gap is above
 * 0.75 × written ÷ (1.15 × prompt) — small once the prompt is large, since a request writes
 * little more than what is new since the last one.
 *
 * What `auto` knows: the gaps between this task's earlier requests (the last one ends now), the
 * tokens new since the last request and the prompt's size, and a pause known to lie ahead (none
 * in rhema's engine today: a retry waits inside the provider, and checks come after the last
 * request). It never reads the gap it is guessing; `oracleCacheTtl` does, as an upper bound.
 */
import { CACHE_TTL_MS, type CacheTtl } from "../cache/cache-rules.js";
import type { CacheTtlSetting } from "../core/transcript-types.js";

export type { CacheTtlSetting };
export const CACHE_TTL_SETTINGS = ["5m", "1h", "auto"] as const satisfies readonly CacheTtlSetting[];

/** What is known when a request is sent. */
export interface TtlEvidence {
  /** Gaps between this task's requests so far, oldest first, ms; the last one ends now. */
  gapsMs: readonly number[];
  /** Tokens new since the last request: about what this request writes. */
  newTokens: number;
  /** The request's prompt: what the next request reads if this one's entries live. */
  promptTokens: number;
  /** A pause known to come before the next request (a retry-after), ms. */
  knownPauseMs?: number;
}

const MIN_LONG_GAPS_FOR_A_RATE = 2;

/** True for a gap that the 1-hour TTL bridges and the 5-minute one does not. */
export function isLongGap(gapMs: number): boolean {
  return gapMs > CACHE_TTL_MS["5m"] && gapMs <= CACHE_TTL_MS["1h"];
}

/**
 * `auto`'s choice: a known pause decides; else 1 hour right after a long gap (pauses come in
 * runs: a person away, a long build), or once two long gaps make a pattern and their share of
 * the gaps so far (one more counted, not yet seen) is above what 1 hour costs (the header's
 * break-even); else 5 minutes. A single pause is taken for an event, not a rate: over a session
 * with one, a rate of 1 in 10 would buy the hour for every request after it.
 */
export function autoCacheTtl(evidence: TtlEvidence): CacheTtl {
  if (evidence.knownPauseMs !== undefined) return isLongGap(evidence.knownPauseMs) ? "1h" : "5m";
  const gaps = evidence.gapsMs;
  if (gaps.length === 0) return "5m";
  if (isLongGap(gaps[gaps.length - 1]!)) return "1h";
  const long = gaps.filter(isLongGap).length;
  if (long < MIN_LONG_GAPS_FOR_A_RATE || evidence.promptTokens <= 0) return "5m";
  const breakEven = (0.75 * Math.max(0, evidence.newTokens)) / (1.15 * evidence.promptTokens);
  return long / (gaps.length + 1) > breakEven ? "1h" : "5m";
}

/** The TTL that knows the next gap (null: no next request): 1 hour exactly for a long one. */
export function oracleCacheTtl(nextGapMs: number | null): CacheTtl {
  return nextGapMs !== null && isLongGap(nextGapMs) ? "1h" : "5m";
}

/** A choice was right when it is the oracle's for the gap that followed. */
export function ttlChoiceRight(chosen: CacheTtl, nextGapMs: number): boolean {
  return chosen === oracleCacheTtl(nextGapMs);
}
