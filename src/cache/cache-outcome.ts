/** What the cache rules return: one request's usage and the entries it leaves behind. */
import type { Usage } from "../core/provider.js";

/** A cached prefix: readable until `expiresAt` (ms, inclusive); a read extends it by `lifeMs`. */
export interface CacheEntry {
  expiresAt: number;
  lifeMs: number;
}

export interface CacheOutcome {
  /** Output tokens are left at 0: the simulator sees only the prompt. */
  usage: Usage;
  /** Entries to set, by prefix key, once the request is done. */
  updates: Array<[string, CacheEntry]>;
}
