/**
 * What only the anthropic-vertex provider does, through the official Vertex SDK against the fake
 * Anthropic server in its Vertex form over real HTTP: the `:streamRawPredict` path naming the
 * project, region and model, the Bearer token (an injected static-token auth client; an
 * `external_account` credentials file whose STS `token_url` is the fake), a token the platform
 * does not take, Anthropic's in-stream errors retried, no ambient environment read. What every
 * provider does (streams cut mid-frame, usage, stop reasons, retries, PERMISSION_DENIED and
 * RESOURCE_EXHAUSTED refusals, 400s, malformed calls, abort, the idle limit, resumed byte-stable
 * prefixes, cassettes) is the provider contract's (provider-contract.test.ts, its Vertex harness
 * in provider-harnesses.ts).
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

test("asks :streamRawPredict under the project and region with the model in the path and the bearer token; no model or API key in the request", async (t) => {
  const server = await fake(t);
  server.reply({ kind: "stream", blocks: [{ type: "text", text: "routed" }] });
  const { provider } = providerOn(server);
  assert.equal(textOf(await ask(provider)), "routed");
  assert.deepEqual(server.violations, []);
  const sent = server.requests[0]!;
  assert.equal(sent.path, `/v1/projects/${VERTEX.project}/locations/${VERTEX.region}/publishers/anthropic/models/${MODEL}:streamRawPredict`);
  assert.equal(sent.headers.authorization, `Bearer ${VERTEX.token}`);
  assert.equal(sent.headers["x-api-key"], undefined);
  assert.deepEqual([sent.body.model, sent.body.stream, typeof sent.body.anthropic_version], [undefined, true, "string"]);
  assert.equal(provider.id, `anthropic-vertex:${MODEL}`);
});

test("a token the platform does not take (401 UNAUTHENTICATED) refuses the credentials at once", async (t) => {
  const server = await fake(t);
  const { provider: badToken, waits } = providerOn(server, {}, "ya29.revoked");
  await assert.rejects(ask(badToken), (err: unknown) => {
    assert.ok(err instanceof ProviderRefusedError);
    assert.deepEqual([err.refusal.reason, err.refusal.status, err.refusal.kind], ["auth", 401, "UNAUTHENTICATED"]);
    return true;
  });
  assert.equal(server.requests.length, 1);
  assert.deepEqual(waits, []);
});

test("an overloaded_error event in the stream before any output is retried", async (t) => {
  const server = await fake(t);
  server.reply(
    { kind: "stream", blocks: [{ type: "text", text: "x" }], errorAfterFrames: { frames: 1, type: "overloaded_error", message: "Overloaded" } },
    { kind: "stream", blocks: [{ type: "text", text: "through" }] },
  );
  const { provider, waits } = providerOn(server, { maxAttempts: 2 });
  assert.equal(textOf(await ask(provider)), "through");
  assert.deepEqual(waits, [500]);
  assert.equal(server.requests.length, 2);
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
