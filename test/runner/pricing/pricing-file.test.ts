/**
 * The pricing file: a valid file gives the models the price table takes; each kind of mistake is
 * a PricingFileError located at the offending field; the committed JSON Schema is the zod one's.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFile, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { PricingFileError, loadPricingFile, parsePricingText, pricingJsonSchema } from "../../../src/runner/pricing/pricing-file.js";
import { loadPriceTable } from "../../../src/runner/pricing/prices.js";
import { repoRoot } from "../../support/paths.js";
import { tempDir } from "../../support/temp-dir.js";

const VALID = `version: 1
models:
  - { provider: openai, model: "llama3.1:8b", inputPerMTok: 0, outputPerMTok: 0 }
  - provider: anthropic
    model: claude-sonnet-4-5
    inputPerMTok: 2
    outputPerMTok: 10
    cacheReadPerMTok: 0.2
`;

test("a valid pricing file gives its models, which price requests before the bundled table", async (t) => {
  const file = join(await tempDir(t), "pricing.yaml");
  await writeFile(file, VALID);
  const loaded = await loadPricingFile(file);
  assert.deepEqual(loaded, {
    file, sha256: createHash("sha256").update(VALID).digest("hex"),
    models: [
      { provider: "openai", model: "llama3.1:8b", inputPerMTok: 0, outputPerMTok: 0 },
      { provider: "anthropic", model: "claude-sonnet-4-5", inputPerMTok: 2, outputPerMTok: 10, cacheReadPerMTok: 0.2 },
    ],
  });
  const table = await loadPriceTable(loaded.models);
  assert.deepEqual(table.price("openai", "llama3.1:8b", { inputTokens: 1e6, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 1e6 }), { priced: true, usd: 0 });
  assert.deepEqual(table.price("anthropic", "claude-sonnet-4-5", { inputTokens: 1e6, cacheReadTokens: 1e6, cacheWriteTokens: 0, outputTokens: 0 }), { priced: true, usd: 2.2 });
});

const problemsOf = (text: string): string[] => {
  try {
    parsePricingText(text, "p.yaml");
  } catch (err) {
    assert.ok(err instanceof PricingFileError, String(err));
    assert.equal(err.code, "invalid_input");
    return err.message.split("\n");
  }
  assert.fail("expected a PricingFileError");
};

test("each mistake is located at its field: file:line:column: field: message", () => {
  assert.deepEqual(problemsOf("version: 1\nmodels:\n  - { provider: openai, model: m, inputPerMTok: -1, outputPerMTok: 0 }\n"),
    ["p.yaml:3:49: models.0.inputPerMTok: a price cannot be negative (0 makes the model free)"]);
  assert.deepEqual(problemsOf("version: 1\nmodels:\n  - provider: ollama\n    model: m\n    inputPerMTok: 0\n    outputPerMTok: 0\n"),
    ["p.yaml:3:15: models.0.provider: expected anthropic, openai, openai-responses, gemini, anthropic-bedrock or anthropic-vertex (an OpenAI-compatible server is openai)"]);
  assert.deepEqual(problemsOf("version: 1\nmodels:\n  - { provider: openai, model: m, inputPerMTok: 1, outputPerMTok: 0, cachedPerMTok: 1 }\n"),
    ["p.yaml:3:70: models.0: unknown key `cachedPerMTok`; did you mean `cacheReadPerMTok`?"]);
  assert.deepEqual(problemsOf("version: 1\nmodels:\n  - { provider: openai, model: m, inputPerMTok: 1 }\n"),
    ["p.yaml:3:5: models.0: missing key `outputPerMTok`"]);
  assert.deepEqual(problemsOf("version: 1\nmodels:\n  - { provider: openai, model: m, inputPerMTok: 1, outputPerMTok: 1 }\n  - { provider: openai, model: m, inputPerMTok: 2, outputPerMTok: 2 }\n"),
    ["p.yaml:4:32: models.1.model: openai/m is already priced by models.0"]);
  assert.deepEqual(problemsOf("version: 2\nmodels: []\n"), ["p.yaml:1:10: version: expected version: 1", "p.yaml:2:9: models: list at least one model"]);
  assert.match(problemsOf("version: 1\nmodels: [\n")[0]!, /^p\.yaml:\d+:\d+: yaml: /);
  assert.deepEqual(problemsOf("# nothing\n"), ["p.yaml:1:1: (root): the pricing file is empty: it needs version: 1 and models"]);
});

test("a pricing file that cannot be read names its path", async (t) => {
  const file = join(await tempDir(t), "missing.yaml");
  await assert.rejects(loadPricingFile(file), (err: unknown) => err instanceof PricingFileError && err.message.startsWith(`${file}:1:1: file: cannot read the pricing file: ENOENT`));
});

test("the committed schema/pricing.schema.json equals the one generated from the zod schema", async () => {
  const committed = JSON.parse(await readFile(join(repoRoot, "schema/pricing.schema.json"), "utf8"));
  assert.deepStrictEqual(committed, pricingJsonSchema(), "run `npm run build && node scripts/gen-schemas.mjs`");
});

test("a model of openai-responses is priced as OpenAI's: the table keys it at openai, and naming it under both is a duplicate", () => {
  assert.deepEqual(parsePricingText("version: 1\nmodels:\n  - { provider: openai-responses, model: gpt-x, inputPerMTok: 1, outputPerMTok: 2 }\n", "p.yaml"),
    [{ provider: "openai", model: "gpt-x", inputPerMTok: 1, outputPerMTok: 2 }]);
  assert.throws(() => parsePricingText("version: 1\nmodels:\n  - { provider: openai, model: gpt-x, inputPerMTok: 1, outputPerMTok: 2 }\n  - { provider: openai-responses, model: gpt-x, inputPerMTok: 1, outputPerMTok: 2 }\n", "p.yaml"),
    /models\.1\.model: openai-responses\/gpt-x is already priced by models\.0/);
});
