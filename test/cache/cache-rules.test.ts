/** The documented numbers: the minimum cacheable prefix by model name. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { anthropicMinCacheableTokens } from "../../src/cache/cache-rules.js";

test("the minimum cacheable prefix follows the model, dated ids and dotted names included", () => {
  const table = Object.fromEntries(
    [
      "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-sonnet-4-6", "claude-sonnet-4-20250514",
      "claude-opus-4-1", "claude-opus-4-20250514", "claude-opus-4-5-20251101", "claude-opus-4.6", "claude-opus-4-7",
      "claude-opus-4-8", "claude-haiku-4-5-20251001", "claude-3-5-haiku-20241022", "claude-3-haiku-20240307",
      "claude-3-7-sonnet-20250219", "some-local-model",
    ].map((m) => [m, anthropicMinCacheableTokens(m)]),
  );
  assert.deepEqual(table, {
    "claude-sonnet-4-5": 1_024, "claude-sonnet-4-5-20250929": 1_024, "claude-sonnet-4-6": 1_024, "claude-sonnet-4-20250514": 1_024,
    "claude-opus-4-1": 1_024, "claude-opus-4-20250514": 1_024, "claude-opus-4-5-20251101": 4_096, "claude-opus-4.6": 4_096, "claude-opus-4-7": 4_096,
    "claude-opus-4-8": 1_024, "claude-haiku-4-5-20251001": 4_096, "claude-3-5-haiku-20241022": 2_048, "claude-3-haiku-20240307": 2_048,
    "claude-3-7-sonnet-20250219": 1_024, "some-local-model": 1_024,
  });
});
