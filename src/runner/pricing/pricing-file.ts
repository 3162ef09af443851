/**
 * The pricing file (`--pricing FILE`): YAML that adds models to the bundled price table or
 * overrides its prices, read by yaml-source and checked by a strict zod schema, every problem
 * reported as `file:line:column: field: message` in a `PricingFileError` (exit 2, nothing run).
 * The published JSON Schema (schema/pricing.schema.json) is generated from `pricingFileSchema`.
 *
 *   version: 1
 *   models:
 *     - { provider: openai, model: llama3.1:8b, inputPerMTok: 0, outputPerMTok: 0 }   # a free local model
 *     - provider: anthropic
 *       model: claude-sonnet-4-6
 *       inputPerMTok: 3
 *       outputPerMTok: 15
 *       cacheReadPerMTok: 0.3        # default: the input price
 *       cacheWritePerMTok: 3.75      # 5-minute writes; default: the input price
 *       cacheWrite1hPerMTok: 6       # 1-hour writes; default: the 5-minute write price
 */
import { createHash } from "node:crypto";
import { readRegularFile } from "../../store/input-file.js";
import { z } from "zod";
import { errorMessage, throwIfMachineLimit } from "../../core/errors.js";
import type { ModelPricing } from "./prices.js";
import { NAMED_PROVIDERS, nameList, providerEntry, type NamedProviderName } from "../../providers/provider-registry.js";
import { YamlFileError, checkYamlFile } from "../../yaml-source/checked-yaml.js";
import { type SourcePosition } from "../../yaml-source/yaml-source.js";

const PRICING_FILE_VERSION = 1;

const dollarsPerMTok = z.number({ error: "expected a price in dollars per million tokens (a number)" })
  .nonnegative("a price cannot be negative (0 makes the model free)");

const modelPricingSchema = z.strictObject({
  provider: z.enum(NAMED_PROVIDERS, { error: `expected ${nameList(NAMED_PROVIDERS)} (an OpenAI-compatible server is openai)` })
    .describe("The provider the model is run at, as a task's model.provider names it."),
  model: z.string().min(1, "a model name cannot be empty").describe("The model's name, as a task's model.name (or a scripted task's priceAs) names it."),
  inputPerMTok: dollarsPerMTok.describe("Dollars per million uncached input tokens."),
  outputPerMTok: dollarsPerMTok.describe("Dollars per million output tokens."),
  cacheReadPerMTok: dollarsPerMTok.optional().describe("Dollars per million cache-read tokens; default: the input price."),
  cacheWritePerMTok: dollarsPerMTok.optional().describe("Dollars per million 5-minute cache-write tokens; default: the input price."),
  cacheWrite1hPerMTok: dollarsPerMTok.optional().describe("Dollars per million 1-hour cache-write tokens; default: the 5-minute write price."),
});

export const pricingFileSchema = z.strictObject({
  version: z.literal(PRICING_FILE_VERSION, { error: "expected version: 1" }).describe("The pricing file format version; 1."),
  models: z.array(modelPricingSchema).min(1, "list at least one model").describe("Models to add to the price table, or whose prices to override."),
}).superRefine((file, ctx) => {
  const seen = new Map<string, number>();
  file.models.forEach((m, i) => {
    // Two providers the table prices as one (openai and openai-responses) are one model.
    const key = `${pricingProvider(m.provider)}/${m.model}`;
    const first = seen.get(key);
    if (first !== undefined) ctx.addIssue({ code: "custom", path: ["models", i, "model"], message: `${m.provider}/${m.model} is already priced by models.${first}` });
    else seen.set(key, i);
  });
}).meta({ title: "rhema pricing file", description: "Model prices (dollars per million tokens) that add to or override rhema's bundled price table." });

/** The published JSON Schema of a pricing file. */
export function pricingJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(pricingFileSchema, { target: "draft-2020-12" }) as Record<string, unknown>;
}

/** A pricing file as read: its models, and what the reports record of it. */
export interface LoadedPricingFile {
  /** Absolute path. */
  file: string;
  /** sha256 (hex) of its bytes: which prices a report's costs were computed with. */
  sha256: string;
  models: ModelPricing[];
}

/** One thing wrong with a pricing file, located at the offending field. */
export interface PricingProblem extends SourcePosition {
  file: string;
  /** Dotted path (`models.1.inputPerMTok`); `yaml` for syntax, `file` for a file that cannot be read, "" for bytes that are not UTF-8 text. */
  field: string;
  message: string;
}

/** A pricing file that cannot be used; its message lists every problem, one a line. */
export class PricingFileError extends YamlFileError<PricingProblem> {}

/** Parses and validates a pricing file's text; throws `PricingFileError` naming every problem's place. */
export function parsePricingText(text: string | Uint8Array, file: string): ModelPricing[] {
  const checked = checkYamlFile(text, file, { schema: pricingFileSchema, what: "the pricing file", needs: "version: 1 and models" });
  if (!checked.ok) throw new PricingFileError(checked.problems);
  return checked.value.models.map(withoutAbsentKeys);
}

/** Reads, hashes and validates the pricing file at `file` (absolute). */
export async function loadPricingFile(file: string): Promise<LoadedPricingFile> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(file);
  } catch (err) {
    // Out of file handles or memory is the machine's (exit 3, the same command continues), not a bad file.
    throwIfMachineLimit(err);
    throw new PricingFileError([{ file, line: 1, column: 1, field: "file", message: `cannot read the pricing file: ${errorMessage(err)}` }], { cause: err });
  }
  const models = parsePricingText(bytes, file);
  return { file, sha256: createHash("sha256").update(bytes).digest("hex"), models };
}

/** A model's prices as the table keys them: at its provider's pricing id (`openai-responses` is priced as `openai`). */
function withoutAbsentKeys(m: z.infer<typeof modelPricingSchema>): ModelPricing {
  const present = Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as unknown as ModelPricing;
  return { ...present, provider: pricingProvider(m.provider) };
}

/** The provider id the price table knows `provider`'s models by. */
function pricingProvider(provider: NamedProviderName): string {
  return providerEntry(provider).pricingId ?? provider;
}
