/**
 * What only the anthropic-bedrock provider does, through the official Bedrock SDK against a fake
 * Bedrock runtime over real HTTP (fake-bedrock-server.ts): SigV4 with static keys and a session
 * token, Bedrock's body and the model in the path, exception frames mid-stream, a Bedrock API key,
 * AWS_PROFILE, no ambient environment read. What every provider does (streams cut mid-frame,
 * usage, stop reasons, throttling and other retries, AccessDenied and quota refusals, 400s,
 * malformed calls, abort, the idle limit, resumed byte-stable prefixes, cassettes) is the provider
 * contract's (provider-contract.test.ts, its Bedrock harness in provider-harnesses.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ProviderError, ProviderRefusedError } from "../../src/core/errors.js";
import { AnthropicBedrockProvider } from "../../src/providers/anthropic-bedrock.js";
import type { ProviderAuth } from "../../src/providers/provider-auth.js";
import type { RetryOptions } from "../../src/providers/provider-retry.js";
import { FakeBedrockServer } from "../support/fake-bedrock-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";
import { tempDir } from "../support/temp-dir.js";

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

async function fake(t: { after(fn: () => unknown): void }, options: Parameters<typeof FakeBedrockServer.start>[0] = {}): Promise<FakeBedrockServer> {
  const server = await FakeBedrockServer.start(options);
  t.after(() => server.close());
  return server;
}

function keys(server: FakeBedrockServer, sessionToken: string | null = null): Extract<ProviderAuth, { kind: "aws" }> {
  return { kind: "aws", region: server.region, signing: { by: "keys", accessKeyId: server.accessKeyId, secretAccessKey: "fake-secret", sessionToken } };
}

/** A provider on `server` signing with its static keys; waits are recorded instead of slept. */
function providerOn(server: FakeBedrockServer, retry: RetryOptions = {}, auth = keys(server)) {
  const waits: number[] = [];
  const provider = new AnthropicBedrockProvider({
    model: MODEL, auth, baseUrl: server.baseUrl, retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...retry },
  });
  return { provider, waits };
}

const ask = (provider: AnthropicBedrockProvider) => collect(provider.stream(request([user("hi")]), new AbortController().signal));

test("signs with the static keys and session token (SigV4, the region's bedrock scope), sends Bedrock's body and names the model in the path", async (t) => {
  const server = await fake(t, { sessionToken: "fake-session-token" });
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "signed" }] });
  const { provider } = providerOn(server, {}, keys(server, "fake-session-token"));
  assert.equal(textOf(await ask(provider)), "signed");
  assert.deepEqual(server.violations, []);
  assert.deepEqual(server.models, [MODEL]);
  const sent = server.requests[0]!;
  assert.match(String(sent.headers.authorization), new RegExp(`^AWS4-HMAC-SHA256 Credential=${server.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, `));
  assert.equal(sent.headers["x-amz-security-token"], "fake-session-token");
  assert.equal(sent.headers["x-api-key"], undefined);
  assert.equal(typeof sent.body.anthropic_version, "string");
  assert.deepEqual([sent.body.model, sent.body.stream, sent.body.max_tokens], [undefined, undefined, 8192]);
  assert.equal(provider.id, `anthropic-bedrock:${MODEL}`);
});

test("a throttlingException frame before any output is retried; a validation error is not", async (t) => {
  const server = await fake(t);
  const stream = { kind: "stream" as const, blocks: [{ type: "text" as const, text: "after the frame" }] };
  server.reply(
    { kind: "exception_after", reply: stream, frames: 1, exception: "throttlingException", message: "Too many tokens, please wait before trying again." },
    stream,
    { kind: "aws_error", status: 400, type: "ValidationException", message: "max_tokens: must be at most 64000" },
  );
  const { provider, waits } = providerOn(server);
  assert.equal(textOf(await ask(provider)), "after the frame");
  assert.deepEqual(waits, [500]);
  await assert.rejects(ask(provider), (err: unknown) => {
    assert.ok(err instanceof ProviderError && !(err instanceof ProviderRefusedError));
    assert.deepEqual([err.message, err.status, err.retryable], ["anthropic-bedrock: 400 ValidationException: max_tokens: must be at most 64000", 400, false]);
    return true;
  });
});

test("a Bedrock API key is sent as a bearer token instead of a signature", async (t) => {
  const server = await fake(t, { bearerToken: "bedrock-api-key-fake" });
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "ok" }] });
  const { provider } = providerOn(server, {}, { kind: "aws", region: "us-east-1", signing: { by: "bearer", token: "bedrock-api-key-fake" } });
  assert.equal(textOf(await ask(provider)), "ok");
  assert.equal(server.requests[0]!.headers.authorization, "Bearer bedrock-api-key-fake");
  assert.deepEqual(server.violations, []);
});

test("reads nothing from the environment: the SDK's own variables move neither the endpoint, the region nor the credentials", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "ours" }] });
  setAmbient(t, {
    AWS_REGION: "eu-west-3", ANTHROPIC_BEDROCK_BASE_URL: "http://127.0.0.1:9", AWS_BEARER_TOKEN_BEDROCK: "ambient-bedrock-key",
    AWS_ACCESS_KEY_ID: "AKIDAMBIENT", AWS_SECRET_ACCESS_KEY: "ambient-secret", ANTHROPIC_API_KEY: "sk-ant-ambient",
  });
  const { provider } = providerOn(server);
  assert.equal(textOf(await ask(provider)), "ours");
  assert.deepEqual(server.violations, []);
  assert.match(String(server.requests[0]!.headers.authorization), new RegExp(`Credential=${server.accessKeyId}/\\d{8}/us-east-1/bedrock/`));
});

/** Sets `vars` in process.env for this test (what an SDK reading the environment itself would find). */
function setAmbient(t: { after(fn: () => unknown): void }, vars: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  });
}

test("AWS_PROFILE signs with the profile's keys from the shared credentials file (the AWS SDK's fromIni)", async (t) => {
  const server = await fake(t, { accessKeyId: "AKIDPROFILEFAKE" });
  const dir = await tempDir(t);
  const file = join(dir, "credentials");
  writeFileSync(file, "[default]\naws_access_key_id = AKIDDEFAULTWRONG\naws_secret_access_key = wrong\n\n[ci]\naws_access_key_id = AKIDPROFILEFAKE\naws_secret_access_key = profile-secret\n");
  setAmbient(t, { AWS_SHARED_CREDENTIALS_FILE: file, AWS_CONFIG_FILE: join(dir, "absent-config") });
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "from the profile" }] });
  const { provider } = providerOn(server, {}, { kind: "aws", region: "us-east-1", signing: { by: "profile", profile: "ci" } });
  assert.equal(textOf(await ask(provider)), "from the profile");
  assert.deepEqual(server.violations, []);
});
