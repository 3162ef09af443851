/**
 * How a named provider authenticates: the environment variables its registry entry names (one of
 * three kinds) and the credentials read from them. Three kinds, because the clouds do not take a
 * key:
 *
 *   api-key     one key variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY)
 *   aws         AWS credentials for SigV4 (Bedrock): static keys (with a session token for
 *               temporary ones, as an OIDC role assumption leaves them), or a named profile, or a
 *               Bedrock API key; and the region
 *   google-adc  Google Application Default Credentials (Vertex AI): a credentials file, else the
 *               auth library's own search (gcloud's file, the metadata server); the region and
 *               the project
 *
 * Every value a provider uses is read here from the env record the CLI hands in and passed to its
 * SDK explicitly, so an SDK that would read the environment itself never picks up another
 * variable. Pure.
 */
import { RhemaError, assertNever } from "../core/errors.js";

/** The variables a provider reads for its credentials, by kind. */
export type ProviderAuthKeys =
  | { readonly kind: "api-key"; readonly apiKey: string }
  | {
      readonly kind: "aws";
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
      readonly sessionToken: string;
      readonly profile: string;
      /** A Bedrock API key (sent as a bearer token instead of signing). */
      readonly bearerToken: string;
      readonly region: string;
    }
  | { readonly kind: "google-adc"; readonly credentialsFile: string; readonly region: string; readonly projectId: string };

/** The environment variables a provider reads (from the env record the edge hands in). */
export interface ProviderEnvKeys {
  readonly auth: ProviderAuthKeys;
  /** The base URL override (a compatible server, a proxy, a gateway). */
  readonly baseUrl: string;
}

/** Credentials as read, by kind; what each adapter is handed. */
export type ProviderAuth =
  | { kind: "api-key"; apiKey: string }
  | {
      kind: "aws";
      region: string;
      /** How the requests are authenticated: signed with keys or a profile's, a bearer key, or not at all (a gateway at a base URL signs). */
      signing:
        | { by: "keys"; accessKeyId: string; secretAccessKey: string; sessionToken: string | null }
        | { by: "profile"; profile: string }
        | { by: "bearer"; token: string }
        | { by: "none" };
    }
  | { kind: "google-adc"; region: string; projectId: string | null; credentialsFile: string | null };

/** AWS's own default region, as the Bedrock SDK takes it when none is set. */
export const AWS_DEFAULT_REGION = "us-east-1";

/** Sent as the API key to a server at a custom base URL when no key is set. */
export const NO_KEY_PLACEHOLDER = "no-key";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The credentials `keys` name, from `env`. `hasBaseUrl`: a base URL is set, so a server that needs
 * no key (a compatible server, a gateway that signs) may be meant. Throws `RhemaError`
 * `provider_unavailable` naming the variables to set when there are none to use.
 */
export function readProviderAuth(provider: string, envKeys: ProviderEnvKeys, env: Env, hasBaseUrl: boolean): ProviderAuth {
  const keys = envKeys.auth;
  const missing = (what: string, withoutFor: string | null): RhemaError => new RhemaError("provider_unavailable",
    `the ${provider} provider needs ${what}${withoutFor === null ? "" : ` (or a base URL, ${envKeys.baseUrl} or model.baseUrl, for ${withoutFor})`}`);
  switch (keys.kind) {
    case "api-key": {
      const apiKey = valueOf(env, keys.apiKey);
      if (apiKey === undefined && !hasBaseUrl) throw missing(`an API key: set ${keys.apiKey} in the environment`, "a compatible server that needs none");
      return { kind: "api-key", apiKey: apiKey ?? NO_KEY_PLACEHOLDER };
    }
    case "aws":
      return { kind: "aws", region: valueOf(env, keys.region) ?? AWS_DEFAULT_REGION, signing: awsSigning(provider, keys, env, hasBaseUrl, missing) };
    case "google-adc": {
      const region = valueOf(env, keys.region);
      if (region === undefined) throw missing(`a region: set ${keys.region} in the environment (us-east5, europe-west1, global, …)`, null);
      return { kind: "google-adc", region, projectId: valueOf(env, keys.projectId) ?? null, credentialsFile: valueOf(env, keys.credentialsFile) ?? null };
    }
    default:
      return assertNever(keys);
  }
}

function awsSigning(
  provider: string, keys: Extract<ProviderAuthKeys, { kind: "aws" }>, env: Env, hasBaseUrl: boolean, missing: (what: string, withoutFor: string) => RhemaError,
): Extract<ProviderAuth, { kind: "aws" }>["signing"] {
  const accessKeyId = valueOf(env, keys.accessKeyId);
  const secretAccessKey = valueOf(env, keys.secretAccessKey);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    const [set, unset] = accessKeyId === undefined ? [keys.secretAccessKey, keys.accessKeyId] : [keys.accessKeyId, keys.secretAccessKey];
    throw new RhemaError("provider_unavailable", `the ${provider} provider needs both AWS keys: ${set} is set but ${unset} is not`);
  }
  if (accessKeyId !== undefined && secretAccessKey !== undefined) {
    return { by: "keys", accessKeyId, secretAccessKey, sessionToken: valueOf(env, keys.sessionToken) ?? null };
  }
  const profile = valueOf(env, keys.profile);
  if (profile !== undefined) return { by: "profile", profile };
  const token = valueOf(env, keys.bearerToken);
  if (token !== undefined) return { by: "bearer", token };
  if (hasBaseUrl) return { by: "none" };
  throw missing(`AWS credentials: set ${keys.accessKeyId} and ${keys.secretAccessKey} (with ${keys.sessionToken} for temporary ones), ${keys.profile}, or ${keys.bearerToken} in the environment`, "a gateway that signs the requests itself");
}

/** The variable (or variables) a person fixes when the provider refuses its credentials: `ANTHROPIC_API_KEY`, `AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY`. */
export function credentialNames(keys: ProviderAuthKeys): string {
  switch (keys.kind) {
    case "api-key":
      return keys.apiKey;
    case "aws":
      return `${keys.accessKeyId}/${keys.secretAccessKey}`;
    case "google-adc":
      return keys.credentialsFile;
    default:
      return assertNever(keys);
  }
}

/** A variable's value, trimmed; absent and blank both mean unset. */
export function valueOf(env: Env, name: string): string | undefined {
  return nonEmpty(env[name]);
}

/** `value` trimmed, or undefined when absent or blank. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined;
}
