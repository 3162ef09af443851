/** A provider id's name: what the run's stops (one per provider) and `bench replay`'s cache rules key on. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { providerNameOf } from "../../src/core/provider.js";

test("a provider id's name is what comes before its first colon, the whole id when it has none", () => {
  assert.equal(providerNameOf("anthropic:claude-sonnet-4-6"), "anthropic");
  assert.equal(providerNameOf("openai-responses:gpt-5"), "openai-responses");
  // Model ids may hold colons themselves (Bedrock's `…-v1:0`): only the first one splits.
  assert.equal(providerNameOf("anthropic-bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0"), "anthropic-bedrock");
  assert.equal(providerNameOf("scripted"), "scripted");
  assert.equal(providerNameOf(""), "");
});
