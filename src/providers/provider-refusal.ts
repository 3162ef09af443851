/**
 * Which HTTP failures of a provider refuse the run, decided per provider in pure functions from
 * what its API sends. Three kinds:
 *
 *   refused    no retry and no other trial gets past it: the key (401; 403 permission) or the
 *              account's money (a spent quota or credit balance). The runner stops the provider's
 *              trials resumably and says it once (runner/execute/provider-stops.ts).
 *   transient  retried, bounded (provider-retry.ts): 408, 409, 429, 5xx, 529 — unless the server's
 *              `x-should-retry` says otherwise. `ifPersistent` names a refusal the failure becomes
 *              when it does not clear within the retries (a RESOURCE_EXHAUSTED that stays).
 *   failed     this request's own failure (400 invalid request, 404 model): the trial errors.
 *
 * Anthropic (`{"type":"error","error":{"type":…,"message":…,"details":{"error_code":…}}}`):
 * `authentication_error` 401, `permission_error` 403, `billing_error` 402, a 400 whose message
 * says the credit balance is too low, and the 429s whose `error_code` is a spend limit
 * (`contract_spend_limit_reached`, `enforced_spend_limit_reached`; a `ramp_limit_exceeded` clears).
 * OpenAI (`{"error":{"message":…,"type":…,"code":…}}`): 401 (`invalid_api_key`, a revoked or
 * deactivated key), 403, and the 429 whose code or type is `insufficient_quota` (also
 * `billing_hard_limit_reached`, `billing_not_active`); a compatible server's 429 that says
 * RESOURCE_EXHAUSTED (Gemini's) is transient until the retries are spent, then `quota`.
 * Gemini (`{"error":{"code":…,"message":…,"status":…,"details":[…]}}`): 401 UNAUTHENTICATED,
 * 403 PERMISSION_DENIED (a key without access, or one blocked as leaked), and the 400 whose
 * `ErrorInfo` reason is `API_KEY_INVALID` (Gemini answers a bad key so); a 429 RESOURCE_EXHAUSTED
 * is transient until the retries are spent, then `quota`.
 * Anthropic on Bedrock (`{"message":…}`, the exception's name in `x-amzn-errortype`; in a stream,
 * an exception frame): 401 and 403 (AccessDeniedException, UnrecognizedClientException,
 * ExpiredTokenException) refuse the credentials; a ServiceQuotaExceededException is transient
 * until the retries are spent, then `quota`; ThrottlingException, ModelNotReadyException and the
 * stream's server exceptions are retried; otherwise Anthropic's rules (the payloads inside chunks
 * are Anthropic's).
 * Anthropic on Vertex AI (Google's `{"error":{"code","message","status"}}` from the platform,
 * Anthropic's body from the model): 401 and 403 refuse the credentials, a 429 RESOURCE_EXHAUSTED
 * is transient until the retries are spent, then `quota`; otherwise Anthropic's rules.
 * Messages are matched only where the API gives nothing else (Anthropic's low credit balance).
 */
import type { RefusalReason } from "../core/errors.js";

/** HTTP statuses worth another attempt: timeouts, lock conflicts, rate limits, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export type FailureClass =
  | { kind: "refused"; reason: RefusalReason }
  | { kind: "transient"; ifPersistent: RefusalReason | null }
  | { kind: "failed" };

/** What one failure said: its status (null for an error frame inside a stream) and its body's fields. */
export interface FailureFacts {
  status: number | null;
  /** The body's error `type` (`authentication_error`, `insufficient_quota`). */
  type: string | null;
  /** The body's error `code` (OpenAI) or `details.error_code` (Anthropic). */
  code: string | null;
  /** The body's human message. */
  message: string | null;
  /** The server's `x-should-retry` header: true, false, or null when absent. */
  shouldRetry: boolean | null;
  /** A Google-style body's `status` (`RESOURCE_EXHAUSTED`), from a compatible server; absent: none. */
  bodyStatus?: string | null;
}

const ANTHROPIC_SPEND_LIMITS = new Set(["contract_spend_limit_reached", "enforced_spend_limit_reached"]);
/** Error types an `event: error` frame may carry that a fresh request may cure. */
const ANTHROPIC_RETRYABLE_TYPES = new Set(["overloaded_error", "api_error", "rate_limit_error", "timeout_error"]);
const OPENAI_QUOTA_CODES = new Set(["insufficient_quota", "billing_hard_limit_reached", "billing_not_active"]);

/** An Anthropic Messages API failure. */
export function classifyAnthropicFailure(f: FailureFacts): FailureClass {
  if (f.status === 401 || f.type === "authentication_error") return { kind: "refused", reason: "auth" };
  if (f.status === 403 || f.type === "permission_error") return { kind: "refused", reason: "auth" };
  if (f.status === 402 || f.type === "billing_error") return { kind: "refused", reason: "quota" };
  if (f.code !== null && ANTHROPIC_SPEND_LIMITS.has(f.code)) return { kind: "refused", reason: "quota" };
  // The one billing refusal the API sends as a plain invalid request: "Your credit balance is too low to access the Anthropic API…".
  if (f.status === 400 && /credit balance is too low/i.test(f.message ?? "")) return { kind: "refused", reason: "quota" };
  if (f.status === null) return f.type !== null && ANTHROPIC_RETRYABLE_TYPES.has(f.type) ? transient(null) : { kind: "failed" };
  return retryable(f) ? transient(null) : { kind: "failed" };
}

/** An OpenAI Chat Completions failure (or a compatible server's). */
export function classifyOpenAIFailure(f: FailureFacts): FailureClass {
  if (f.status === 401) return { kind: "refused", reason: "auth" };
  if (f.status === 403) return { kind: "refused", reason: "auth" };
  if (f.status === 402) return { kind: "refused", reason: "quota" };
  if ((f.code !== null && OPENAI_QUOTA_CODES.has(f.code)) || (f.type !== null && OPENAI_QUOTA_CODES.has(f.type))) {
    return { kind: "refused", reason: "quota" };
  }
  // An error inside an accepted stream counts as the server's failure.
  if (f.status === null) return transient(null);
  if (f.status === 429 && /RESOURCE_EXHAUSTED/.test(`${f.bodyStatus ?? ""} ${f.code ?? ""} ${f.message ?? ""}`)) return transient("quota");
  return retryable(f) ? transient(null) : { kind: "failed" };
}

/** A Gemini API failure: `type` and `bodyStatus` are the body's `status`, `code` its `ErrorInfo` reason. */
export function classifyGeminiFailure(f: FailureFacts): FailureClass {
  if (f.status === 401 || f.status === 403) return { kind: "refused", reason: "auth" };
  if (f.code === "API_KEY_INVALID") return { kind: "refused", reason: "auth" };
  if (f.status === 429 && f.bodyStatus === "RESOURCE_EXHAUSTED") return transient("quota");
  if (f.status === null) return transient(null);
  return retryable(f) ? transient(null) : { kind: "failed" };
}

/** Bedrock's exceptions a fresh request may cure, as `x-amzn-errortype` names them and (camel-cased) as a stream's exception frame does. */
const BEDROCK_RETRYABLE_TYPES = new Set([
  "ThrottlingException", "ModelNotReadyException", "InternalServerException", "ServiceUnavailableException", "ModelStreamErrorException", "ModelTimeoutException",
].flatMap((t) => [t, t.charAt(0).toLowerCase() + t.slice(1)]));

/** An Anthropic-on-Bedrock failure: `type` is the exception's name (`AccessDeniedException`, `throttlingException`) or an Anthropic error type. */
export function classifyBedrockFailure(f: FailureFacts): FailureClass {
  if (f.status === 401 || f.status === 403) return { kind: "refused", reason: "auth" };
  if (f.type === "ServiceQuotaExceededException" || f.type === "serviceQuotaExceededException") return transient("quota");
  if (f.type !== null && BEDROCK_RETRYABLE_TYPES.has(f.type)) return transient(null);
  return classifyAnthropicFailure(f);
}

/** An Anthropic-on-Vertex failure: `bodyStatus` is a Google body's `status`. */
export function classifyVertexFailure(f: FailureFacts): FailureClass {
  if (f.status === 401 || f.status === 403) return { kind: "refused", reason: "auth" };
  if (f.status === 429 && f.bodyStatus === "RESOURCE_EXHAUSTED") return transient("quota");
  return classifyAnthropicFailure(f);
}

function transient(ifPersistent: RefusalReason | null): FailureClass {
  return { kind: "transient", ifPersistent };
}

/** The status's verdict, which a server's `x-should-retry` overrides (as in the SDKs). */
function retryable(f: FailureFacts): boolean {
  return f.shouldRetry ?? (f.status !== null && isRetryableStatus(f.status));
}

/** `x-should-retry` as the SDKs read it. */
export function shouldRetryHeader(headers: Headers | undefined): boolean | null {
  const says = headers?.get("x-should-retry");
  return says === "true" ? true : says === "false" ? false : null;
}
