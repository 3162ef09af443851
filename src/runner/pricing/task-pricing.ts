/**
 * What a task's requests are priced as: its model at its provider from the price table (a
 * pricing file's entries first), the compaction worker's model for the worker's requests, a
 * scripted task's `priceAs` model (a simulated price), or nothing — unpriced, never $0. A model
 * an OpenAI-compatible server serves (a base URL other than OpenAI's) is unpriced unless the
 * pricing file names it: the name may be a local model's that happens to match a priced one. Which
 * providers those are, and the id the price table knows each by, the provider registry says.
 */
import type { RequestPricer } from "../../core/provider.js";
import type { TranscriptWorkerConfig } from "../../core/transcript-types.js";
import { isScriptedSpec, type ProviderSpec } from "../../providers/provider-factory.js";
import { providerEntry } from "../../providers/provider-registry.js";
import type { PriceTable } from "./prices.js";
import { pricedModelName } from "./cost-figures.js";

/** One model as priced: `provider` null when the table finds the model at any provider (`priceAs`). */
export interface PricedModel {
  provider: string | null;
  model: string;
  /** true: a scripted task priced as a real model — the figures are simulated. */
  simulated: boolean;
}

export interface TaskPricing {
  /** What the task model's requests are priced as; null: unpriced. */
  task: PricedModel | null;
  /** What the worker's requests are priced as (the task's own when it names no worker); null: unpriced. */
  worker: PricedModel | null;
  pricer: RequestPricer;
}

export interface TaskPricingInput {
  /** The task's model as resolved (task file, else flags). */
  spec: ProviderSpec;
  /** A scripted task's `model.priceAs`. */
  priceAs?: string;
  /** `transcript.worker`, when the task names one. */
  worker?: TranscriptWorkerConfig;
  /** The base URL the environment gives the spec's provider (its registry entry's `*_BASE_URL`), when set; the spec's own baseUrl wins. */
  envBaseUrl?: string;
}

export function taskPricing(input: TaskPricingInput, table: PriceTable): TaskPricing {
  const task = pricedModel(input, table);
  const worker = input.worker ? knownOrNull({ provider: input.worker.provider, model: input.worker.name, simulated: false }, table) : task;
  const pricer: RequestPricer = (usage, who) => {
    const as = who === "worker" ? worker : task;
    return as === null ? { priced: false } : table.price(as.provider, as.model, usage);
  };
  return { task, worker, pricer };
}

function pricedModel(input: TaskPricingInput, table: PriceTable): PricedModel | null {
  const spec = input.spec;
  if (isScriptedSpec(spec)) {
    return input.priceAs === undefined ? null : knownOrNull({ provider: null, model: input.priceAs, simulated: true }, table);
  }
  const entry = providerEntry(spec.provider);
  const model: PricedModel = { provider: entry.pricingId, model: spec.name, simulated: false };
  const baseUrl = spec.baseUrl ?? input.envBaseUrl;
  if (entry.ownHosts !== null && baseUrl !== undefined && !isOwnHost(baseUrl, entry.ownHosts) && !table.overrides(model.provider, model.model)) return null;
  return knownOrNull(model, table);
}

function knownOrNull(model: PricedModel, table: PriceTable): PricedModel | null {
  return table.knows(model.provider, model.model) ? model : null;
}

/** Whether `baseUrl` is one of the provider's own hosts (else a compatible server whose model names are its own). */
function isOwnHost(baseUrl: string, hosts: readonly string[]): boolean {
  try {
    return hosts.includes(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}

/** How a priced model reads in reports: `anthropic/claude-sonnet-4-6`, `claude-sonnet-4-6 (simulated)`. */
export function pricedModelLabel(model: PricedModel | null): string {
  if (model === null) return "unpriced";
  return model.simulated ? `${pricedModelName(model)} (simulated)` : pricedModelName(model);
}
