/**
 * The anthropic-bedrock provider through the official Bedrock SDK against a fake Bedrock runtime
 * over real HTTP (fake-bedrock-server.ts): InvokeModelWithResponseStream's AWS event-stream frames
 * (CRCs checked by the SDK) cut mid-frame, SigV4 with static keys, Bedrock's errors judged
 * (refusals, throttling, exception frames), a connection lost mid-frame.
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
import { turnThenResumedTurn, withoutCacheMarks } from "../support/resumed-prefix.js";

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

test("streams text, tool calls and cache usage from event-stream frames cut mid-frame, signed with the static keys and session token", async (t) => {
  const server = await fake(t, { sessionToken: "fake-session-token" });
  server.reply({
    kind: "stream",
    splitBytes: 7,
    blocks: [
      { type: "text", text: "Café ☕ — reading." },
      { type: "tool_use", id: "toolu_a", name: "read_file", input: { path: "src/é.ts" } },
    ],
    usage: { input_tokens: 40, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 33 },
  });
  const { provider } = providerOn(server, {}, keys(server, "fake-session-token"));
  const events = await ask(provider);

  assert.equal(textOf(events), "Café ☕ — reading.");
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "tool_call", id: "toolu_a", name: "read_file", input: { path: "src/é.ts" } },
    { type: "usage", usage: { inputTokens: 40, cacheReadTokens: 1000, cacheWriteTokens: 200, outputTokens: 33 } },
    { type: "stop", reason: "tool_use" },
  ]);
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

test("a 403 AccessDeniedException refuses the credentials at once: not retried, named by the exception", async (t) => {
  const server = await fake(t);
  const message = "User: arn:aws:iam::123456789012:user/ci is not authorized to perform: bedrock:InvokeModelWithResponseStream";
  server.reply({ kind: "aws_error", status: 403, type: "AccessDeniedException", message });
  const { provider, waits } = providerOn(server);
  await assert.rejects(ask(provider), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual(err.refusal, { provider: "anthropic-bedrock", reason: "auth", status: 403, kind: "AccessDeniedException", detail: message });
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("a 429 ThrottlingException is retried (retry-after honoured), then the stream succeeds", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "aws_error", status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again." },
    { kind: "aws_error", status: 429, type: "ThrottlingException", message: "Too many requests, please wait before trying again.", headers: { "retry-after": "3" } },
    { kind: "stream", blocks: [{ type: "text", text: "finally" }] },
  );
  const { provider, waits } = providerOn(server);
  const events = await ask(provider);
  assert.equal(textOf(events), "finally");
  assert.deepEqual(waits, [500, 3000]);
  assert.equal(server.requests.length, 3);
});

test("a ServiceQuotaExceededException that outlasts the retries becomes a refusal of the quota", async (t) => {
  const server = await fake(t);
  server.reply(...[1, 2].map(() => ({ kind: "aws_error" as const, status: 400, type: "ServiceQuotaExceededException", message: "Your request exceeds the service quota for your account." })));
  const { provider } = providerOn(server, { maxAttempts: 2 });
  await assert.rejects(ask(provider), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual(err.refusal, {
      provider: "anthropic-bedrock", reason: "quota", status: 400, kind: "ServiceQuotaExceededException", detail: "Your request exceeds the service quota for your account.",
    });
    return true;
  });
  assert.equal(server.requests.length, 2);
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

test("a connection lost mid-frame is a retryable stream failure: the next attempt answers", async (t) => {
  const server = await fake(t);
  const stream = { kind: "stream" as const, blocks: [{ type: "text" as const, text: "whole" }] };
  server.reply({ kind: "cut_mid_frame", reply: stream, afterFrames: 2 }, stream);
  const { provider, waits } = providerOn(server);
  assert.equal(textOf(await ask(provider)), "whole");
  assert.equal(server.requests.length, 2);
  assert.deepEqual(waits, [500]);
});

test("a Bedrock API key is sent as a bearer token instead of a signature", async (t) => {
  const server = await fake(t, { bearerToken: "bedrock-api-key-fake" });
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "ok" }] });
  const { provider } = providerOn(server, {}, { kind: "aws", region: "us-east-1", signing: { by: "bearer", token: "bedrock-api-key-fake" } });
  assert.equal(textOf(await ask(provider)), "ok");
  assert.equal(server.requests[0]!.headers.authorization, "Bearer bedrock-api-key-fake");
  assert.deepEqual(server.violations, []);
});

test("a turn through CodingAgent resumed from disk sends the same prefix, byte for byte: tools, system, the earlier messages", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", blocks: [{ type: "tool_use", id: "toolu_r", name: "append_line", input: { tag: "one" } }] },
    { kind: "stream", blocks: [{ type: "text", text: "Done." }] },
    { kind: "stream", blocks: [{ type: "text", text: "Again." }] },
  );
  await turnThenResumedTurn(t, () => providerOn(server).provider);
  const [, step2, resumed] = server.bodies;
  assert.equal(server.bodies.length, 3);
  for (const key of ["tools", "system"]) assert.equal(JSON.stringify(resumed[key]), JSON.stringify(step2[key]), key);
  assert.equal(withoutCacheMarks(resumed.messages.slice(0, step2.messages.length)), withoutCacheMarks(step2.messages));
  assert.deepEqual(resumed.messages[step2.messages.length], { role: "assistant", content: [{ type: "text", text: "Done." }] });
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
