/**
 * Each provider's credentials read from the env record by kind (provider-auth.ts): an API key (or a
 * base URL without one), AWS credentials by precedence (keys, profile, Bedrock API key, none at a
 * base URL), Google ADC with its required region; what is missing is said, naming the variables.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RhemaError } from "../../src/core/errors.js";
import { NO_KEY_PLACEHOLDER, credentialNames, readProviderAuth, type ProviderAuth } from "../../src/providers/provider-auth.js";
import { providerEntry } from "../../src/providers/provider-registry.js";

const keysOf = (name: "anthropic" | "anthropic-bedrock" | "anthropic-vertex") => providerEntry(name).envKeys!;
const unavailable = (pattern: RegExp) => (err: unknown) => err instanceof RhemaError && err.code === "provider_unavailable" && pattern.test(err.message);

test("an API key, or the placeholder at a base URL; neither is exit 2 naming the variable", () => {
  assert.deepEqual(readProviderAuth("anthropic", keysOf("anthropic"), { ANTHROPIC_API_KEY: " sk-ant " }, false), { kind: "api-key", apiKey: "sk-ant" });
  assert.deepEqual(readProviderAuth("anthropic", keysOf("anthropic"), {}, true), { kind: "api-key", apiKey: NO_KEY_PLACEHOLDER });
  assert.throws(() => readProviderAuth("anthropic", keysOf("anthropic"), { ANTHROPIC_API_KEY: " " }, false), unavailable(
    /^the anthropic provider needs an API key: set ANTHROPIC_API_KEY in the environment \(or a base URL, ANTHROPIC_BASE_URL or model\.baseUrl, for a compatible server that needs none\)$/));
});

test("AWS credentials by precedence: static keys (with a session token), a profile, a Bedrock API key, none at a base URL; the region defaults to us-east-1", () => {
  const read = (env: Record<string, string>, baseUrl = false) => {
    const auth = readProviderAuth("anthropic-bedrock", keysOf("anthropic-bedrock"), env, baseUrl);
    assert.equal(auth.kind, "aws");
    return auth as Extract<ProviderAuth, { kind: "aws" }>;
  };
  const all = { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "secret", AWS_SESSION_TOKEN: "token", AWS_PROFILE: "ci", AWS_BEARER_TOKEN_BEDROCK: "bk", AWS_REGION: "eu-west-1" };
  assert.deepEqual(read(all), { kind: "aws", region: "eu-west-1", signing: { by: "keys", accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: "token" } });
  assert.deepEqual(read({ AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "secret" }), {
    kind: "aws", region: "us-east-1", signing: { by: "keys", accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: null },
  });
  assert.deepEqual(read({ AWS_PROFILE: "ci", AWS_BEARER_TOKEN_BEDROCK: "bk" }).signing, { by: "profile", profile: "ci" });
  assert.deepEqual(read({ AWS_BEARER_TOKEN_BEDROCK: "bk" }).signing, { by: "bearer", token: "bk" });
  assert.deepEqual(read({}, true).signing, { by: "none" });
  assert.throws(() => read({ AWS_REGION: "us-west-2" }), unavailable(
    /^the anthropic-bedrock provider needs AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \(with AWS_SESSION_TOKEN for temporary ones\), AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK in the environment \(or a base URL, ANTHROPIC_BEDROCK_BASE_URL or model\.baseUrl, for a gateway that signs the requests itself\)$/));
  assert.throws(() => read({ AWS_ACCESS_KEY_ID: "AKID" }), unavailable(/needs both AWS keys: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not$/));
});

test("Google ADC: the region is required, the project and the credentials file are optional", () => {
  const read = (env: Record<string, string>) => readProviderAuth("anthropic-vertex", keysOf("anthropic-vertex"), env, true);
  assert.deepEqual(read({ CLOUD_ML_REGION: "us-east5", ANTHROPIC_VERTEX_PROJECT_ID: "p", GOOGLE_APPLICATION_CREDENTIALS: "/k.json" }), {
    kind: "google-adc", region: "us-east5", projectId: "p", credentialsFile: "/k.json",
  });
  assert.deepEqual(read({ CLOUD_ML_REGION: "global" }), { kind: "google-adc", region: "global", projectId: null, credentialsFile: null });
  assert.throws(() => read({ ANTHROPIC_VERTEX_PROJECT_ID: "p" }), unavailable(/^the anthropic-vertex provider needs a region: set CLOUD_ML_REGION in the environment/));
});

test("a refusal names the variables to fix, by kind", () => {
  assert.deepEqual(["anthropic", "anthropic-bedrock", "anthropic-vertex"].map((n) => credentialNames(keysOf(n as "anthropic").auth)), [
    "ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
  ]);
});
