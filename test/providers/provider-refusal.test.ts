/**
 * Which provider failures refuse the run (provider-refusal.ts), judged from the error bodies the
 * APIs send, as the official SDKs parse them: each body below is the real API's shape and
 * wording, run through the SDK's own error class (`APIError.generate`), then classified.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { APIError as AnthropicAPIError } from "@anthropic-ai/sdk";
import { APIError as OpenAIAPIError } from "openai";
import { classifyAnthropicFailure, classifyOpenAIFailure, type FailureClass } from "../../src/providers/provider-refusal.js";
import { anthropicFailureFacts } from "../../src/providers/anthropic.js";
import { openaiFailureFacts } from "../../src/providers/openai.js";

/** The SDK's error for `status` and `body`, judged as anthropic.ts judges it. */
function anthropic(status: number, body: unknown, headers: Record<string, string> = {}): FailureClass {
  return classifyAnthropicFailure(anthropicFailureFacts(AnthropicAPIError.generate(status, body as object, undefined, new Headers(headers))));
}

/** The SDK's error for `status` and `body`, judged as openai.ts judges it. */
function openai(status: number, body: unknown): FailureClass {
  return classifyOpenAIFailure(openaiFailureFacts(OpenAIAPIError.generate(status, body as object, undefined, new Headers())));
}

const anthropicBody = (type: string, message: string, details?: object) => ({
  type: "error", error: { type, message, ...(details ? { details } : {}) }, request_id: "req_011CSHoEeqs5C35K2UUqR7Fy",
});
const openaiBody = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });

const AUTH: FailureClass = { kind: "refused", reason: "auth" };
const QUOTA: FailureClass = { kind: "refused", reason: "quota" };
const RETRY: FailureClass = { kind: "transient", ifPersistent: null };
const FAILED: FailureClass = { kind: "failed" };

test("anthropic: a bad or revoked key and a refused permission refuse the key", () => {
  assert.deepEqual(anthropic(401, anthropicBody("authentication_error", "invalid x-api-key")), AUTH);
  assert.deepEqual(anthropic(403, anthropicBody("permission_error", "Your API key does not have permission to use the specified resource.")), AUTH);
});

test("anthropic: a billing error, a low credit balance and a spend limit refuse the run for its quota; a ramp limit is retried", () => {
  assert.deepEqual(anthropic(402, anthropicBody("billing_error", "There's an issue with your billing or payment information.")), QUOTA);
  assert.deepEqual(anthropic(400, anthropicBody("invalid_request_error",
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")), QUOTA);
  assert.deepEqual(anthropic(429, anthropicBody("rate_limit_error", "You have reached your specified API usage limits.", { error_code: "enforced_spend_limit_reached" })), QUOTA);
  assert.deepEqual(anthropic(429, anthropicBody("rate_limit_error", "Contract spend limit reached.", { error_code: "contract_spend_limit_reached" })), QUOTA);
  assert.deepEqual(anthropic(429, anthropicBody("rate_limit_error", "Ramp limit exceeded.", { error_code: "ramp_limit_exceeded" })), RETRY);
});

test("anthropic: rate limits, overload and server errors are retried; a bad request or an unknown model fails the trial alone", () => {
  assert.deepEqual(anthropic(429, anthropicBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")), RETRY);
  assert.deepEqual(anthropic(529, anthropicBody("overloaded_error", "Overloaded")), RETRY);
  assert.deepEqual(anthropic(500, anthropicBody("api_error", "Internal server error")), RETRY);
  assert.deepEqual(anthropic(400, anthropicBody("invalid_request_error", "messages: text content blocks must be non-empty")), FAILED);
  assert.deepEqual(anthropic(404, anthropicBody("not_found_error", "model: claude-nope")), FAILED);
  // The server's x-should-retry wins over the status, as in the SDK.
  assert.deepEqual(anthropic(500, anthropicBody("api_error", "no"), { "x-should-retry": "false" }), FAILED);
});

test("anthropic: an error frame inside a stream is judged by its type", () => {
  const frame = (type: string) => classifyAnthropicFailure({ status: null, type, code: null, message: "m", shouldRetry: null });
  assert.deepEqual(frame("overloaded_error"), RETRY);
  assert.deepEqual(frame("billing_error"), QUOTA);
  assert.deepEqual(frame("authentication_error"), AUTH);
  assert.deepEqual(frame("invalid_request_error"), FAILED);
});

test("openai: an incorrect, revoked or deactivated key and a refused region refuse the key", () => {
  assert.deepEqual(openai(401, openaiBody("Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key")), AUTH);
  assert.deepEqual(openai(401, openaiBody("The OpenAI account associated with this API key has been deactivated.", "invalid_request_error", "account_deactivated")), AUTH);
  assert.deepEqual(openai(403, openaiBody("Country, region, or territory not supported", "request_forbidden", "unsupported_country_region_territory")), AUTH);
});

test("openai: insufficient_quota refuses the run for its quota; an ordinary 429 is retried", () => {
  assert.deepEqual(openai(429, openaiBody("You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota", "insufficient_quota")), QUOTA);
  assert.deepEqual(openai(400, openaiBody("Billing hard limit has been reached", "invalid_request_error", "billing_hard_limit_reached")), QUOTA);
  assert.deepEqual(openai(429, openaiBody("Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s.", "tokens", "rate_limit_exceeded")), RETRY);
  assert.deepEqual(openai(503, openaiBody("The engine is currently overloaded, please try again later", "server_error", null)), RETRY);
  assert.deepEqual(openai(400, openaiBody("Invalid 'messages[1].content': string too long.", "invalid_request_error", "string_above_max_length")), FAILED);
});

test("a compatible server's RESOURCE_EXHAUSTED is retried, and refuses the run for its quota if it does not clear", () => {
  // The Google error as a compatible endpoint sends it (a list-wrapped one reaches the SDK as "no body": a plain 429).
  assert.deepEqual(openai(429, { error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } }), { kind: "transient", ifPersistent: "quota" });
});
