/**
 * routeSdkWarnings, as both edges use it (the CLI prints `rhema: warning: …`, the Action a
 * `::warning`): each distinct message once, as one line, whatever its arguments; restore puts
 * the original method back.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { routeSdkWarnings, type WarnTarget } from "../../src/providers/sdk-warnings.js";

test("each distinct SDK warning reaches the edge once, as one line; restore puts the original back", () => {
  const original: unknown[][] = [];
  const target: WarnTarget = { warn: (...args: unknown[]) => void original.push(args) };
  const routed: string[] = [];
  const restore = routeSdkWarnings(target, (message) => routed.push(message));
  const deprecated = (model: string) => `The model '${model}' is deprecated and will reach end-of-life on November 30th, 2026\nPlease migrate to a newer model.`;
  for (let request = 0; request < 4; request++) target.warn(deprecated("claude-sonnet-4-5"));
  target.warn(deprecated("claude-opus-4-5"));
  target.warn("%s uses %d tokens", "a model", 3);
  target.warn("%s uses %d tokens", "a model", 3);
  target.warn("");
  assert.deepEqual(routed, [
    "The model 'claude-sonnet-4-5' is deprecated and will reach end-of-life on November 30th, 2026 Please migrate to a newer model.",
    "The model 'claude-opus-4-5' is deprecated and will reach end-of-life on November 30th, 2026 Please migrate to a newer model.",
    "a model uses 3 tokens",
  ]);
  assert.deepEqual(original, [], "nothing reached the console");
  restore();
  target.warn("after");
  assert.deepEqual(original, [["after"]]);
});
