import { test } from "node:test";
import assert from "node:assert/strict";
import type { ModelProviderName } from "../../src/core/transcript-types.js";
import { RhemaError } from "../../src/core/errors.js";
import { createProvider, type ProviderSpec } from "../../src/providers/provider-factory.js";
import type { ProviderAuthKeys } from "../../src/providers/provider-auth.js";
import {
  NAMED_PROVIDERS, PROVIDER_NAMES, REPLAY_PROVIDERS, SCRIPTED_PROVIDERS, isNamedProvider, isScriptedProvider, providerEntry, type NamedProviderName,
} from "../../src/providers/provider-registry.js";
import { taskFileSchema } from "../../src/runner/tasks/task-schema.js";
import { pricingFileSchema } from "../../src/runner/pricing/pricing-file.js";

// Core may not import the registry, so it keeps its own list of the named providers: the two must
// be one type (this file does not compile when they differ).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const coreAgrees: Same<ModelProviderName, NamedProviderName> = true;

test("core's ModelProviderName is the registry's NamedProviderName", () => {
  assert.equal(coreAgrees, true);
});

test("each provider is named, scripted or a recording, one of the three; named ones read a key and a base URL and need a model name", () => {
  assert.deepEqual([...PROVIDER_NAMES].sort(), [...NAMED_PROVIDERS, ...SCRIPTED_PROVIDERS, ...REPLAY_PROVIDERS].sort());
  assert.deepEqual([...REPLAY_PROVIDERS], ["cassette"]);
  for (const name of PROVIDER_NAMES) {
    const entry = providerEntry(name);
    const named = !entry.capabilities.scripted && !entry.capabilities.replays;
    assert.ok(!(entry.capabilities.scripted && entry.capabilities.replays), name);
    assert.equal(isScriptedProvider(name), entry.capabilities.scripted, name);
    assert.equal(isNamedProvider(name), named, name);
    assert.equal(entry.envKeys !== null, named, `${name}: env keys`);
    assert.equal(entry.capabilities.needsModelName, named, `${name}: model name`);
  }
  assert.equal(isNamedProvider("nope"), false);
  assert.equal(isScriptedProvider("nope"), false);
});

test("the provider each entry makes carries its scripted capability (the agent reads it, not the id); a recording is never made as a provider", () => {
  assert.throws(() => createProvider({ provider: "cassette", name: "m" } as unknown as ProviderSpec, {}), (err: unknown) =>
    err instanceof RhemaError && err.code === "invalid_config" && /planned as the model it recorded/.test(err.message));
  for (const name of [...NAMED_PROVIDERS, ...SCRIPTED_PROVIDERS]) {
    const spec = (isScriptedProvider(name)
      ? { provider: name, script: [{ say: "hi" }], name: "s/t" }
      : { provider: name, name: "m" }) as ProviderSpec;
    const keys = providerEntry(name).envKeys;
    const env = keys ? credentialEnv(keys.auth) : {};
    assert.equal(createProvider(spec, env).answersFromScript === true, providerEntry(name).capabilities.scripted, name);
  }
});

test("the task and pricing schemas take exactly the registry's providers", () => {
  for (const name of PROVIDER_NAMES) {
    const model = isScriptedProvider(name) ? { provider: name, script: [{ say: "done" }] }
      : REPLAY_PROVIDERS.some((r) => r === name) ? { provider: name, path: "cassettes" } : { provider: name, name: "m" };
    assert.equal(taskFileSchema.safeParse({ prompt: "p", model }).success, true, name);
    assert.equal(pricingFileSchema.safeParse({ version: 1, models: [{ provider: name, model: "m", inputPerMTok: 1, outputPerMTok: 1 }] }).success, isNamedProvider(name), name);
  }
  assert.equal(taskFileSchema.safeParse({ prompt: "p", model: { provider: "nope", name: "m" } }).success, false);
});

/** Values for every credential variable `auth` names (enough for any provider to be made). */
function credentialEnv(auth: ProviderAuthKeys): Record<string, string> {
  return Object.fromEntries(Object.entries(auth).filter(([k]) => k !== "kind").map(([, name]) => [name, "v"]));
}
