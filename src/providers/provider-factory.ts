/**
 * Builds a `ModelProvider` from a task's `model:` spec. The one place in providers that reads
 * environment values — and only from the `env` record the CLI hands in, never `process.env`: the
 * credential and base-URL variables each provider's registry entry names (provider-registry.ts),
 * read by provider-auth.ts.
 *
 * A key is required unless a base URL is given: a compatible local server (Ollama, vLLM,
 * llama.cpp, LM Studio, a proxy) may need none, and gets `NO_KEY_PLACEHOLDER` (the SDKs refuse
 * to start without one); so may a gateway in front of Bedrock that signs itself. A spec's
 * `baseUrl` wins over the environment's.
 */
import { RhemaError } from "../core/errors.js";
import { NO_KEY_PLACEHOLDER, nonEmpty, readProviderAuth, valueOf, type ProviderAuth } from "./provider-auth.js";
import type { ModelProvider, ModelRequest, StreamEvent } from "../core/provider.js";
import type { RetryOptions } from "./provider-retry.js";
import type { ScriptStep } from "./script.js";
import {
  PROVIDER_NAMES, isProviderName, loadNamedProvider, nameList, providerEntry, scriptedProvider,
  type NamedProviderName, type ScriptedProviderName,
} from "./provider-registry.js";

export type ProviderSpec =
  | { provider: ScriptedProviderName; script: readonly ScriptStep[]; name?: string }
  | { provider: NamedProviderName; name: string; baseUrl?: string };

/** Environment values as the CLI read them; absent and empty both mean unset. */
export type ProviderEnv = Readonly<Record<string, string | undefined>>;

export interface CreateProviderOptions {
  /** Passed to every provider, the scripted one too (attempts, backoff, `onRetry`, an injected sleep for tests). */
  retry?: RetryOptions;
  /** Passed to the HTTP providers: how long one request may take. */
  timeoutMs?: number;
  /** Passed to the HTTP providers: the longest a stream may send no content (default 5m; Infinity: none). */
  streamIdleMs?: number;
}

export { NO_KEY_PLACEHOLDER };

/** Whether `spec` answers from a script (by its provider's capability, not its name). */
export function isScriptedSpec(spec: ProviderSpec): spec is Extract<ProviderSpec, { script: readonly ScriptStep[] }> {
  return isProviderName(spec.provider) && providerEntry(spec.provider).capabilities.scripted;
}

/**
 * The provider `spec` names. Throws `RhemaError` `provider_unavailable` when a key is missing
 * (naming the variable to set) and `invalid_config` for a spec without a model name or with an
 * unknown provider.
 */
export function createProvider(spec: ProviderSpec, env: ProviderEnv, options: CreateProviderOptions = {}): ModelProvider {
  if (!isProviderName(spec.provider)) {
    const name = String((spec as { provider?: unknown }).provider);
    throw new RhemaError("invalid_config", `unknown model provider "${name}"; expected one of: ${[...PROVIDER_NAMES].sort().join(", ")}`);
  }
  if (isScriptedSpec(spec)) return scriptedProvider(spec.script, spec.name, options);
  if (providerEntry(spec.provider).capabilities.replays) {
    throw new RhemaError("invalid_config", `a ${spec.provider} model is planned as the model it recorded (model.path), not made as a provider`);
  }
  const named = spec as Extract<ProviderSpec, { baseUrl?: string }>;
  const { auth, baseUrl } = credentials(named, env);
  return lazyProvider(`${named.provider}:${named.name}`, () => loadNamedProvider(named.provider, {
    model: named.name, auth, baseUrl, retry: options.retry, timeoutMs: options.timeoutMs, streamIdleMs: options.streamIdleMs,
  }));
}

/** The base URL the environment gives provider `name` (its `*_BASE_URL`), when set. */
export function envBaseUrl(name: NamedProviderName, env: ProviderEnv): string | undefined {
  const keys = providerEntry(name).envKeys;
  return keys === null ? undefined : valueOf(env, keys.baseUrl);
}

function credentials(spec: { provider: NamedProviderName; name: string; baseUrl?: string }, env: ProviderEnv): { auth: ProviderAuth; baseUrl: string | undefined } {
  if (typeof spec.name !== "string" || spec.name.trim() === "") {
    throw new RhemaError("invalid_config", `the ${spec.provider} provider needs a model name (model.name), got none`);
  }
  const names = providerEntry(spec.provider).envKeys;
  if (names === null) throw new RhemaError("invalid_config", `the ${spec.provider} provider reads no key; expected one of ${nameList(PROVIDER_NAMES)}`);
  const baseUrl = nonEmpty(spec.baseUrl) ?? valueOf(env, names.baseUrl);
  return { auth: readProviderAuth(spec.provider, names, env, baseUrl !== undefined), baseUrl };
}

/**
 * A provider whose SDK is loaded at its first request: the SDKs take a quarter of a second to
 * import, which a run of scripted tasks (or one that fails validation) should not pay.
 */
function lazyProvider(id: string, load: () => Promise<ModelProvider>): ModelProvider {
  let loading: Promise<ModelProvider> | null = null;
  return {
    id,
    async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
      loading ??= load();
      yield* (await loading).stream(req, signal);
    },
  };
}
