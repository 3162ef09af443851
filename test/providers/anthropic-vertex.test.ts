/**
 * The anthropic-vertex provider through the official Vertex SDK against the fake Anthropic server
 * in its Vertex form over real HTTP (`:streamRawPredict`, the Messages API's SSE cut mid-frame, a
 * Bearer token): with an injected static-token auth client (no token endpoint is reached), and
 * with an `external_account` credentials file whose STS `token_url` is the fake; Google's errors
 * judged (refusals, RESOURCE_EXHAUSTED), Anthropic's in-stream errors retried.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProviderRefusedError } from "../../src/core/errors.js";
import { AnthropicVertexProvider } from "../../src/providers/anthropic-vertex.js";
import type { ProviderAuth } from "../../src/providers/provider-auth.js";
import type { RetryOptions } from "../../src/providers/provider-retry.js";
import { FakeAnthropicServer } from "../support/fake-anthropic-server.js";
import { collect, request, textOf, user } from "../support/provider-streams.js";
import { turnThenResumedTurn, withoutCacheMarks } from "../support/resumed-prefix.js";
import { tempDir } from "../support/temp-dir.js";
import { staticTokenClient, writeExternalAccountFile } from "../support/vertex-credentials.js";

const MODEL = "claude-sonnet-4-5@20250929";
const VERTEX = { project: "rhema-test", region: "us-east5", token: "ya29.fake-access-token", subjectToken: "fake-oidc-subject-token" };

async function fake(t: { after(fn: () => unknown): void }): Promise<FakeAnthropicServer> {
  const server = await FakeAnthropicServer.startVertex(VERTEX);
  t.after(() => server.close());
  return server;
}

const AUTH: Extract<ProviderAuth, { kind: "google-adc" }> = { kind: "google-adc", region: VERTEX.region, projectId: VERTEX.project, credentialsFile: null };

function providerOn(server: FakeAnthropicServer, retry: RetryOptions = {}, token = VERTEX.token) {
  const waits: number[] = [];
  const provider = new AnthropicVertexProvider({
    model: MODEL, auth: AUTH, baseUrl: server.baseUrl, authClient: staticTokenClient(token),
    retry: { random: () => 0, sleep: async (ms) => void waits.push(ms), ...retry },
  });
  return { provider, waits };
}

const ask = (provider: AnthropicVertexProvider) => collect(provider.stream(request([user("hi")]), new AbortController().signal));

test("streams text, tool calls and cache usage from :streamRawPredict, SSE cut mid-frame, with the bearer token, the model in the path", async (t) => {
  const server = await fake(t);
  server.reply({
    kind: "stream",
    splitBytes: 5,
    blocks: [{ type: "text", text: "Grüße — looking." }, { type: "tool_use", id: "toolu_v", name: "grep", input: { pattern: "ü" } }],
    usage: { input_tokens: 9, cache_read_input_tokens: 700, cache_creation_input_tokens: 50, output_tokens: 21 },
  });
  const { provider } = providerOn(server);
  const events = await ask(provider);
  assert.equal(textOf(events), "Grüße — looking.");
  assert.deepEqual(events.filter((e) => e.type !== "text"), [
    { type: "tool_call", id: "toolu_v", name: "grep", input: { pattern: "ü" } },
    { type: "usage", usage: { inputTokens: 9, cacheReadTokens: 700, cacheWriteTokens: 50, outputTokens: 21 } },
    { type: "stop", reason: "tool_use" },
  ]);
  assert.deepEqual(server.violations, []);
  const sent = server.requests[0]!;
  assert.equal(sent.path, `/v1/projects/${VERTEX.project}/locations/${VERTEX.region}/publishers/anthropic/models/${MODEL}:streamRawPredict`);
  assert.equal(sent.headers.authorization, `Bearer ${VERTEX.token}`);
  assert.deepEqual([sent.body.model, sent.body.stream, typeof sent.body.anthropic_version], [undefined, true, "string"]);
  assert.equal(provider.id, `anthropic-vertex:${MODEL}`);
});

test("a token the platform does not take (401) and a project without access (403) refuse the credentials at once", async (t) => {
  const server = await fake(t);
  const { provider: badToken, waits } = providerOn(server, {}, "ya29.revoked");
  await assert.rejects(ask(badToken), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual([err.refusal.reason, err.refusal.status, err.refusal.kind], ["auth", 401, "UNAUTHENTICATED"]);
    return true;
  });
  server.reply({ kind: "google_error", status: 403, googleStatus: "PERMISSION_DENIED", message: "Permission 'aiplatform.endpoints.predict' denied" });
  const { provider } = providerOn(server);
  await assert.rejects(ask(provider), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual(err.refusal, { provider: "anthropic-vertex", reason: "auth", status: 403, kind: "PERMISSION_DENIED", detail: "Permission 'aiplatform.endpoints.predict' denied" });
    return true;
  });
  assert.equal(server.requests.length, 2);
  assert.deepEqual(waits, []);
});

test("a 429 RESOURCE_EXHAUSTED is retried, and refuses the quota when it outlasts the retries; an overloaded_error event is retried", async (t) => {
  const server = await fake(t);
  const exhausted = { kind: "google_error" as const, status: 429, googleStatus: "RESOURCE_EXHAUSTED", message: "Quota exceeded for aiplatform.googleapis.com/online_prediction_tokens_per_minute" };
  server.reply(
    exhausted,
    { kind: "stream", blocks: [{ type: "text", text: "x" }], errorAfterFrames: { frames: 1, type: "overloaded_error", message: "Overloaded" } },
    { kind: "stream", blocks: [{ type: "text", text: "through" }] },
    exhausted, exhausted,
  );
  const { provider, waits } = providerOn(server, { maxAttempts: 3 });
  assert.equal(textOf(await ask(provider)), "through");
  assert.deepEqual(waits, [500, 1000]);
  const { provider: second } = providerOn(server, { maxAttempts: 2 });
  await assert.rejects(ask(second), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual([err.refusal.reason, err.refusal.status, err.refusal.kind], ["quota", 429, "RESOURCE_EXHAUSTED"]);
    return true;
  });
});

test("an external_account credentials file (Workload Identity Federation) gets its token from the file's STS token_url", async (t) => {
  const server = await fake(t);
  const dir = await tempDir(t);
  const { file } = writeExternalAccountFile(dir, server.tokenUrl, VERTEX.subjectToken);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "federated" }] });
  const provider = new AnthropicVertexProvider({ model: MODEL, auth: { ...AUTH, credentialsFile: file }, baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  assert.equal(textOf(await ask(provider)), "federated");
  assert.deepEqual(server.requests.map((r) => r.path), ["/v1/token", `/v1/projects/${VERTEX.project}/locations/${VERTEX.region}/publishers/anthropic/models/${MODEL}:streamRawPredict`]);
  assert.equal(server.requests[1]!.headers.authorization, `Bearer ${VERTEX.token}`);
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

test("reads nothing from the environment: the SDK's and the auth library's own variables move neither the endpoint, the region, the project nor the credentials", async (t) => {
  const server = await fake(t);
  const dir = await tempDir(t);
  const { file } = writeExternalAccountFile(dir, server.tokenUrl, VERTEX.subjectToken);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "ours" }] });
  setAmbient(t, {
    ANTHROPIC_VERTEX_BASE_URL: "http://127.0.0.1:9/v1", CLOUD_ML_REGION: "europe-west1", ANTHROPIC_VERTEX_PROJECT_ID: "ambient-project",
    GOOGLE_APPLICATION_CREDENTIALS: join(dir, "absent.json"), ANTHROPIC_API_KEY: "sk-ant-ambient",
  });
  const provider = new AnthropicVertexProvider({ model: MODEL, auth: { ...AUTH, credentialsFile: file }, baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
  assert.equal(textOf(await ask(provider)), "ours");
  assert.deepEqual(server.violations, []);
  assert.equal(server.requests[1]!.path, `/v1/projects/${VERTEX.project}/locations/${VERTEX.region}/publishers/anthropic/models/${MODEL}:streamRawPredict`);
  assert.equal(server.requests[1]!.headers["x-api-key"], undefined);
});

/** Sets `vars` in process.env for this test (what an SDK reading the environment itself would find). */
function setAmbient(t: { after(fn: () => unknown): void }, vars: Record<string, string>): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  });
}
