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
 * What `auto` knows: the gaps between this task's earlier requests (the last one ends now), what
 * this request will write (the tokens new since the last one, or the whole prompt when the gap
 * just ended outlived the last marks) and the prompt's size, and a pause known to lie ahead (none
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
  /** What this request will write: the tokens new since the last one, or the whole prompt when the cache is gone. */
  writtenTokens: number;
  /** The request's prompt: what the next request reads if this one's entries live. */
  promptTokens: number;
  /** A pause known to come before the next request (a retry-after), ms. */
  knownPauseMs?: number;
}

const MIN_LONG_GAPS_FOR_A_RATE = 2;
/** The chance taken for another long gap right after one. */
const RUN_OF_PAUSES_CHANCE = 0.5;

/** True for a gap that the 1-hour TTL bridges and the 5-minute one does not. */
export function isLongGap(gapMs: number): boolean {
  return gapMs > CACHE_TTL_MS["5m"] && gapMs <= CACHE_TTL_MS["1h"];
}

/**
 * `auto`'s choice: a known pause decides; else 1 hour when the chance of a long next gap is above
 * what the hour costs on this request (the header's break-even). The chance: the share of long
 * gaps so far (one more counted, not yet seen) once two make a pattern — a single pause is an
 * event, not a rate — and at least even right after a long gap (pauses come in runs: a person
 * away, a long build). Right after a pause that emptied the cache the request rewrites its whole
 * prompt, so the hour must be likelier than 0.75 ÷ 1.15 to pay.
 */
export function autoCacheTtl(evidence: TtlEvidence): CacheTtl {
  if (evidence.knownPauseMs !== undefined) return isLongGap(evidence.knownPauseMs) ? "1h" : "5m";
  const gaps = evidence.gapsMs;
  if (gaps.length === 0) return "5m";
  if (evidence.promptTokens <= 0) return "5m";
  const long = gaps.filter(isLongGap).length;
  const rate = long < MIN_LONG_GAPS_FOR_A_RATE ? 0 : long / (gaps.length + 1);
  const chance = isLongGap(gaps[gaps.length - 1]!) ? Math.max(rate, RUN_OF_PAUSES_CHANCE) : rate;
  const breakEven = (0.75 * Math.max(0, evidence.writtenTokens)) / (1.15 * evidence.promptTokens);
  return chance > breakEven ? "1h" : "5m";
}

/** The TTL that knows the next gap (null: no next request): 1 hour exactly for a long one. */
export function oracleCacheTtl(nextGapMs: number | null): CacheTtl {
  return nextGapMs !== null && isLongGap(nextGapMs) ? "1h" : "5m";
}

/** A choice was right when it is the oracle's for the gap that followed. */
export function ttlChoiceRight(chosen: CacheTtl, nextGapMs: number): boolean {
  return chosen === oracleCacheTtl(nextGapMs);
}
