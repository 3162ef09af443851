/**
 * The `anthropic-bedrock` provider: Anthropic's models on AWS Bedrock, through the official
 * `@anthropic-ai/bedrock-sdk` client. The request and stream mapping are the `anthropic`
 * provider's (anthropic.ts): the client rewrites the Messages request to Bedrock's
 * `InvokeModelWithResponseStream` (the model in the path, `anthropic_version` in the body), signs
 * it with SigV4 and turns the AWS event-stream frames back into the Messages API's events.
 *
 * Credentials come from the registry's variables only (provider-auth.ts), each handed to the
 * client explicitly so that it reads none of the environment itself: static keys (and a session
 * token); a named profile, resolved from the shared AWS files by the AWS SDK's `fromIni`; a
 * Bedrock API key (a bearer token); or none at a base URL (a gateway that signs).
 *
 * Failures: Bedrock's HTTP errors carry `{"message":…}` and the exception's name in
 * `x-amzn-errortype`; a stream's exception frames arrive as `event: error` with the camel-cased
 * name (`throttlingException`). provider-refusal.ts judges them.
 */
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import type { APIError } from "@anthropic-ai/sdk";
import { assertNever } from "../core/errors.js";
import type { ProviderAuth } from "./provider-auth.js";
import { classifyBedrockFailure, shouldRetryHeader, type FailureFacts } from "./provider-refusal.js";
import { AnthropicMessagesProvider, type MessagesPlatform, type MessagesProviderOptions } from "./anthropic.js";

const PROVIDER = "anthropic-bedrock";

export interface AnthropicBedrockProviderOptions extends MessagesProviderOptions {
  /** The Bedrock model id or inference profile, e.g. `us.anthropic.claude-sonnet-4-5-20250929-v1:0`; the provider id is `anthropic-bedrock:<model>`. */
  model: string;
  auth: Extract<ProviderAuth, { kind: "aws" }>;
  /** The endpoint's origin (default `https://bedrock-runtime.<region>.amazonaws.com`). */
  baseUrl?: string;
  /** How long one HTTP request may take (default: the SDK's, 10 minutes). */
  timeoutMs?: number;
}

const BEDROCK_PLATFORM: MessagesPlatform = {
  provider: PROVIDER,
  errors: AnthropicBedrock,
  facts: bedrockFailureFacts,
  classify: classifyBedrockFailure,
};

export class AnthropicBedrockProvider extends AnthropicMessagesProvider {
  constructor(options: AnthropicBedrockProviderOptions) {
    super(BEDROCK_PLATFORM, bedrockClient(options), options);
  }
}

/** The client, every option given so that the SDK reads no environment variable of its own. */
function bedrockClient(options: AnthropicBedrockProviderOptions): AnthropicBedrock {
  const { region, signing } = options.auth;
  const common = {
    awsRegion: region,
    baseURL: options.baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`,
    maxRetries: 0, // our own retry decides (provider-retry.ts)
    logLevel: "off" as const, // the library never prints
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  };
  switch (signing.by) {
    case "keys":
      return new AnthropicBedrock({ ...common, apiKey: null, awsAccessKey: signing.accessKeyId, awsSecretKey: signing.secretAccessKey, awsSessionToken: signing.sessionToken });
    case "profile":
      return new AnthropicBedrock({ ...common, apiKey: null, providerChainResolver: () => profileCredentials(signing.profile) });
    case "bearer":
      return new AnthropicBedrock({ ...common, apiKey: signing.token });
    case "none":
      return new AnthropicBedrock({ ...common, apiKey: null, skipAuth: true });
    default:
      return assertNever(signing);
  }
}

/** A named profile's credentials, from the shared AWS files (its SSO, role or process entries too): the AWS SDK's own resolver, loaded only for a profile. */
async function profileCredentials(profile: string) {
  const { fromIni } = await import("@aws-sdk/credential-providers");
  const provider = fromIni({ profile });
  return () => provider();
}

/** What Bedrock's error says: the exception's name from `x-amzn-errortype` (or a stream's exception frame), its message. */
export function bedrockFailureFacts(err: APIError): FailureFacts {
  const headerType = err.headers?.get("x-amzn-errortype")?.split(":")[0]?.trim() || null;
  const body = (err.error ?? {}) as { message?: unknown; Message?: unknown };
  const bodyMessage = typeof body.message === "string" ? body.message : typeof body.Message === "string" ? body.Message : null;
  return {
    status: err.status ?? null,
    type: headerType ?? err.type,
    code: err.errorCode,
    message: err.apiMessage ?? bodyMessage,
    shouldRetry: shouldRetryHeader(err.headers),
  };
}
