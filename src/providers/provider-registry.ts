/**
 * The provider registry: every model provider rhema knows, once — its name, how it is made, the
 * environment variables it reads, what it can do, and the id the price table knows it by. The
 * task and pricing schemas, the CLI's `--provider` choices, the Action's input checks, the
 * planner and the pricing read it; nothing else writes a provider's name out. A new provider is
 * one entry here (and its module, and its harness in test/support/provider-harnesses.ts: the
 * provider contract runs against every named entry and fails for one without a harness).
 *
 * Core may not import this layer: core's `ModelProviderName` (transcript-types.ts) is checked
 * against `NamedProviderName` by a test.
 */
import type { CacheRules } from "../cache/prompt-cache-simulator.js";
import type { ModelProvider } from "../core/provider.js";
import type { TokenCounter } from "../core/token-counter.js";
import type { ProviderAuth, ProviderEnvKeys } from "./provider-auth.js";
import type { RetryOptions } from "./provider-retry.js";
import type { ScriptStep } from "./script.js";
import { ScriptedProvider } from "./scripted.js";

/** What a provider can do; the planner, pricing and the agent read these instead of its name. */
export interface ProviderCapabilities {
  /** Answers from the task file's `script:` and names no model (no key, no request leaves the machine). */
  readonly scripted: boolean;
  /** Answers from recorded responses (a cassette) instead of a model. */
  readonly replays: boolean;
  /** Can be asked for output in a JSON schema. */
  readonly structuredOutput: boolean;
  /** Needs a model name (`model.name`, `--model`). */
  readonly needsModelName: boolean;
}

export type { ProviderEnvKeys };

/** Options every factory takes. */
export interface ProviderOptions {
  retry?: RetryOptions;
  /** What a provider that makes up its usage (scripted) counts it with; a model's own usage is its provider's. */
  tokenCounter?: TokenCounter;
  timeoutMs?: number;
  streamIdleMs?: number;
}

interface EntryShape {
  readonly envKeys: ProviderEnvKeys | null;
  readonly capabilities: ProviderCapabilities;
  /** The provider id the price table knows this provider's models by; null: its requests are priced only as `priceAs` names (any provider). */
  readonly pricingId: string | null;
  /**
   * Hosts whose model names are this provider's own: at another base URL (a compatible server)
   * a model is unpriced unless the pricing file names it. null: any base URL keeps the price (a proxy).
   */
  readonly ownHosts: readonly string[] | null;
  /**
   * How the engine counts this provider's tokens (src/tokens/counter-choice.ts): `tokenizer`, the
   * provider's published one for the model; `calibration`, the shipped calibration; `chars4`.
   */
  readonly tokenCounting: "tokenizer" | "calibration" | "chars4";
  /**
   * The prompt-cache rules the simulator applies to this provider's requests (`--cassette-usage
   * simulate`, `bench replay` of its run directories); null: a provider that sends no requests.
   */
  readonly cacheRules: CacheRules | null;
}

const ENTRIES = {
  scripted: {
    envKeys: null,
    capabilities: { scripted: true, replays: false, structuredOutput: false, needsModelName: false },
    pricingId: null,
    ownHosts: null,
    tokenCounting: "chars4",
    cacheRules: null,
  },
  anthropic: {
    envKeys: { auth: { kind: "api-key", apiKey: "ANTHROPIC_API_KEY" }, baseUrl: "ANTHROPIC_BASE_URL" },
    capabilities: { scripted: false, replays: false, structuredOutput: true, needsModelName: true },
    pricingId: "anthropic",
    ownHosts: null,
    tokenCounting: "calibration",
    cacheRules: "anthropic",
  },
  openai: {
    envKeys: { auth: { kind: "api-key", apiKey: "OPENAI_API_KEY" }, baseUrl: "OPENAI_BASE_URL" },
    capabilities: { scripted: false, replays: false, structuredOutput: true, needsModelName: true },
    pricingId: "openai",
    ownHosts: ["api.openai.com"],
    tokenCounting: "tokenizer",
    cacheRules: "openai",
  },
  // OpenAI's Responses API (openai-responses.ts): the same key and base URL as Chat Completions.
  "openai-responses": {
    envKeys: { auth: { kind: "api-key", apiKey: "OPENAI_API_KEY" }, baseUrl: "OPENAI_BASE_URL" },
    capabilities: { scripted: false, replays: false, structuredOutput: true, needsModelName: true },
    pricingId: "openai",
    ownHosts: ["api.openai.com"],
    tokenCounting: "tokenizer",
    cacheRules: "openai",
  },
  // Google's Gemini API (gemini.ts). The base URL variable is the one the SDK itself reads. No
  // Gemini tokenizer ships and Anthropic's calibration does not fit it: chars/4 (a calibration
  // file fitted from Gemini's billed usage, `--calibration`, replaces it). Its implicit cache has
  // no rules of its own in the simulator: like OpenAI's it is an automatic prefix cache with no
  // writes, so OpenAI's rules are the nearest (not Gemini's own minimums).
  gemini: {
    envKeys: { auth: { kind: "api-key", apiKey: "GEMINI_API_KEY" }, baseUrl: "GOOGLE_GEMINI_BASE_URL" },
    capabilities: { scripted: false, replays: false, structuredOutput: true, needsModelName: true },
    pricingId: "google",
    ownHosts: ["generativelanguage.googleapis.com"],
    tokenCounting: "chars4",
    cacheRules: "openai",
  },
  // Anthropic's models on AWS Bedrock (anthropic-bedrock.ts) and on Google Vertex AI
  // (anthropic-vertex.ts): the Messages API mapping of `anthropic`, through the platforms' own SDK
  // clients — SigV4-signed with AWS credentials; Google Application Default Credentials. The base
  // URL variables are the SDKs' own. Priced by the table's AWS Bedrock and Google providers, which
  // know the platforms' model ids (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`,
  // `claude-sonnet-4-5@20250929`); a gateway or private endpoint keeps the price.
  "anthropic-bedrock": {
    envKeys: {
      auth: {
        kind: "aws", accessKeyId: "AWS_ACCESS_KEY_ID", secretAccessKey: "AWS_SECRET_ACCESS_KEY", sessionToken: "AWS_SESSION_TOKEN",
        profile: "AWS_PROFILE", bearerToken: "AWS_BEARER_TOKEN_BEDROCK", region: "AWS_REGION",
      },
      baseUrl: "ANTHROPIC_BEDROCK_BASE_URL",
    },
    capabilities: { scripted: false, replays: false, structuredOutput: true, needsModelName: true },
    pricingId: "aws",
    ownHosts: null,
    tokenCounting: "calibration",
    cacheRules: "anthropic",
  },
  "anthropic-vertex": {
    envKeys: {
      auth: { kind: "google-adc", credentialsFile: "GOOGLE_APPLICATION_CREDENTIALS", region: "CLOUD_ML_REGION", projectId: "ANTHROPIC_VERTEX_PROJECT_ID" },
      baseUrl: "ANTHROPIC_VERTEX_BASE_URL",
    },
    capabilities: { scripted: false, replays: false, structuredOutput: true, needsModelName: true },
    pricingId: "google",
    ownHosts: null,
    tokenCounting: "calibration",
    cacheRules: "anthropic",
  },
  // A task whose model is a recording (`model: { provider: cassette, path }`): the planner reads
  // the recorded provider and model from the cassette and plans the task as a strict replay of it.
  cassette: {
    envKeys: null,
    capabilities: { scripted: false, replays: true, structuredOutput: false, needsModelName: false },
    pricingId: null,
    ownHosts: null,
    tokenCounting: "chars4",
    cacheRules: null,
  },
} as const satisfies Record<string, EntryShape>;

type Entries = typeof ENTRIES;
/** Every provider's name. */
export type ProviderName = keyof Entries;
/** The providers that answer from a script in the task file. */
export type ScriptedProviderName = { [K in ProviderName]: Entries[K]["capabilities"]["scripted"] extends true ? K : never }[ProviderName];
/** The providers that answer from a recording (a cassette). */
export type ReplayProviderName = { [K in ProviderName]: Entries[K]["capabilities"]["replays"] extends true ? K : never }[ProviderName];
/** The providers that run a named model (a key or a base URL, a model name). */
export type NamedProviderName = Exclude<ProviderName, ScriptedProviderName | ReplayProviderName>;

/** A provider's entry. */
export interface ProviderEntry extends EntryShape {
  readonly name: ProviderName;
}

/** Every provider's name, in the registry's order. */
export const PROVIDER_NAMES = Object.keys(ENTRIES) as [ProviderName, ...ProviderName[]];
/** The providers whose models are named (`--provider`'s choices, a worker's, a pricing file's). */
export const NAMED_PROVIDERS = PROVIDER_NAMES.filter((n) => !ENTRIES[n].capabilities.scripted && !ENTRIES[n].capabilities.replays) as [NamedProviderName, ...NamedProviderName[]];
/** The providers that answer from a recording. */
export const REPLAY_PROVIDERS = PROVIDER_NAMES.filter((n) => ENTRIES[n].capabilities.replays) as [ReplayProviderName, ...ReplayProviderName[]];
/** The providers that answer from the task file's script. */
export const SCRIPTED_PROVIDERS = PROVIDER_NAMES.filter((n) => ENTRIES[n].capabilities.scripted) as [ScriptedProviderName, ...ScriptedProviderName[]];

/** Whether `name` is a provider the registry knows. */
export function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(ENTRIES, name);
}

/** Whether `name` names a provider that runs a named model. */
export function isNamedProvider(name: string): name is NamedProviderName {
  return isProviderName(name) && !ENTRIES[name].capabilities.scripted && !ENTRIES[name].capabilities.replays;
}

/** Whether `name` is a provider that answers from the task file's script (the `scripted` capability). */
export function isScriptedProvider(name: string): name is ScriptedProviderName {
  return isProviderName(name) && ENTRIES[name].capabilities.scripted;
}

/** The entry of provider `name`. */
export function providerEntry(name: ProviderName): ProviderEntry {
  return { name, ...ENTRIES[name] };
}

/** `anthropic, openai or scripted` (a list of names for messages). */
export function nameList(names: readonly string[], last = "or"): string {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} ${last} ${names.at(-1)}`;
}

/** A scripted provider from `script` (the registry's one factory for scripted entries). */
export function scriptedProvider(script: readonly ScriptStep[], name: string | undefined, options: ProviderOptions = {}): ModelProvider {
  return new ScriptedProvider(script, { name, record: false, ...(options.retry ? { retry: options.retry } : {}), ...(options.tokenCounter ? { counter: options.tokenCounter } : {}) });
}

/** The module and class of each named provider, loaded at its first request (the SDKs are slow to import). */
export async function loadNamedProvider(
  name: NamedProviderName, config: { model: string; auth: ProviderAuth; baseUrl: string | undefined } & ProviderOptions,
): Promise<ModelProvider> {
  switch (name) {
    case "anthropic": {
      const { AnthropicProvider } = await import("./anthropic.js");
      return new AnthropicProvider({ ...config, apiKey: authOf(config.auth, "api-key").apiKey });
    }
    case "openai": {
      const { OpenAIProvider } = await import("./openai.js");
      return new OpenAIProvider({ ...config, apiKey: authOf(config.auth, "api-key").apiKey });
    }
    case "openai-responses": {
      const { OpenAIResponsesProvider } = await import("./openai-responses.js");
      return new OpenAIResponsesProvider({ ...config, apiKey: authOf(config.auth, "api-key").apiKey });
    }
    case "gemini": {
      const { GeminiProvider } = await import("./gemini.js");
      return new GeminiProvider({ ...config, apiKey: authOf(config.auth, "api-key").apiKey });
    }
    case "anthropic-bedrock": {
      const { AnthropicBedrockProvider } = await import("./anthropic-bedrock.js");
      return new AnthropicBedrockProvider({ ...config, auth: authOf(config.auth, "aws") });
    }
    case "anthropic-vertex": {
      const { AnthropicVertexProvider } = await import("./anthropic-vertex.js");
      return new AnthropicVertexProvider({ ...config, auth: authOf(config.auth, "google-adc") });
    }
    default: {
      const unknown: never = name;
      throw new Error(`no factory for provider ${String(unknown)}`);
    }
  }
}

/** `auth` as the kind the entry names (the factory read it from that entry: another kind is a bug). */
function authOf<K extends ProviderAuth["kind"]>(auth: ProviderAuth, kind: K): Extract<ProviderAuth, { kind: K }> {
  if (auth.kind !== kind) throw new Error(`provider credentials of kind ${kind} expected, got ${auth.kind}`);
  return auth as Extract<ProviderAuth, { kind: K }>;
}
