/**
 * The `anthropic-vertex` provider: Anthropic's models on Google Vertex AI, through the official
 * `@anthropic-ai/vertex-sdk` client. The request and stream mapping are the `anthropic`
 * provider's (anthropic.ts): the client posts the Messages request to the model's
 * `:streamRawPredict` endpoint (the model and project in the path, `anthropic_version` in the
 * body) with a Google OAuth bearer token, and the endpoint answers in the Messages API's SSE.
 *
 * Credentials: Google Application Default Credentials through `google-auth-library`, built here
 * from the registry's variables (provider-auth.ts) — the credentials file named by
 * GOOGLE_APPLICATION_CREDENTIALS (a service account key, or an `external_account` file as
 * Workload Identity Federation writes it in CI), the region and the project handed over
 * explicitly. Without a file the library searches as ADC does (gcloud's application-default
 * file, then the metadata server of a Google Cloud machine).
 *
 * Failures: the platform's own (401, 403, 429 RESOURCE_EXHAUSTED) carry Google's
 * `{"error":{"code","message","status"}}`, the model's Anthropic's body; provider-refusal.ts
 * judges them.
 */
import { AnthropicVertex } from "@anthropic-ai/vertex-sdk";
import type { APIError } from "@anthropic-ai/sdk";
import { GoogleAuth, type AuthClient } from "google-auth-library";
import type { ProviderAuth } from "./provider-auth.js";
import { classifyVertexFailure, shouldRetryHeader, type FailureFacts } from "./provider-refusal.js";
import { AnthropicMessagesProvider, type MessagesPlatform, type MessagesProviderOptions } from "./anthropic.js";

const PROVIDER = "anthropic-vertex";
/** The OAuth scope Vertex AI's endpoints take. */
export const VERTEX_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

export interface AnthropicVertexProviderOptions extends MessagesProviderOptions {
  /** The Vertex model id, e.g. `claude-sonnet-4-5@20250929`; the provider id is `anthropic-vertex:<model>`. */
  model: string;
  auth: Extract<ProviderAuth, { kind: "google-adc" }>;
  /** The endpoint's base, with its `/v1` (default: the region's `https://<region>-aiplatform.googleapis.com/v1`). */
  baseUrl?: string;
  /** How long one HTTP request may take (default: the SDK's, 10 minutes). */
  timeoutMs?: number;
  /** The client that signs the requests, instead of one from the credentials (tests: a static token; no token endpoint is reached). */
  authClient?: AuthClient;
}

const VERTEX_PLATFORM: MessagesPlatform = {
  provider: PROVIDER,
  errors: AnthropicVertex,
  facts: vertexFailureFacts,
  classify: classifyVertexFailure,
};

export class AnthropicVertexProvider extends AnthropicMessagesProvider {
  constructor(options: AnthropicVertexProviderOptions) {
    const { region, projectId, credentialsFile } = options.auth;
    const signer = options.authClient
      ? { authClient: options.authClient }
      : { googleAuth: new GoogleAuth({ scopes: VERTEX_SCOPE, ...(credentialsFile !== null ? { keyFilename: credentialsFile } : {}), ...(projectId !== null ? { projectId } : {}) }) };
    super(VERTEX_PLATFORM, new AnthropicVertex({
      region,
      projectId,
      // null, not undefined: the SDK would read ANTHROPIC_VERTEX_BASE_URL itself and take its own default
      baseURL: options.baseUrl ?? null,
      ...signer,
      maxRetries: 0, // our own retry decides (provider-retry.ts)
      logLevel: "off", // the library never prints
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    }), options);
  }
}

/** What Vertex's error says: Anthropic's error type, or Google's `status` (also as `bodyStatus`). */
export function vertexFailureFacts(err: APIError): FailureFacts {
  const google = (err.error as { error?: { status?: unknown } } | undefined)?.error?.status;
  const bodyStatus = typeof google === "string" ? google : null;
  return {
    status: err.status ?? null,
    type: err.type ?? bodyStatus,
    code: err.errorCode,
    message: err.apiMessage,
    shouldRetry: shouldRetryHeader(err.headers),
    bodyStatus,
  };
}
