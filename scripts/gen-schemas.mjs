#!/usr/bin/env node
// Regenerates the published JSON Schemas in schema/ from the zod schemas they describe
// (compiled output: run `npm run build` first). test/runner/*-schema and
// test/policy/policy-schema tests fail when a committed schema and its zod source disagree;
// this script is how to make them agree.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { taskJsonSchema } = await import(join(root, "dist/src/runner/tasks/task-schema.js"));
const { statsJsonSchema } = await import(join(root, "dist/src/runner/reports/stats-report.js"));
const { policyJsonSchema } = await import(join(root, "dist/src/policy/file/policy-schema.js"));
const { pricingJsonSchema } = await import(join(root, "dist/src/runner/pricing/pricing-file.js"));
const { resultJsonSchema } = await import(join(root, "dist/src/runner/run-dir/task-result.js"));
const { matrixJsonSchema } = await import(join(root, "dist/src/runner/tasks/matrix-file.js"));
const { compareJsonSchema } = await import(join(root, "dist/src/runner/reports/compare-json.js"));
const { calibrationJsonSchema } = await import(join(root, "dist/src/tokens/calibration-file.js"));
const { cassetteJsonSchema } = await import(join(root, "dist/src/store/cassette-file.js"));
const { answersJsonSchema } = await import(join(root, "dist/src/action/answer-outputs.js"));

const schemas = [
  ["task.schema.json", taskJsonSchema()],
  ["stats.schema.json", statsJsonSchema()],
  ["policy.schema.json", policyJsonSchema()],
  ["pricing.schema.json", pricingJsonSchema()],
  ["result.schema.json", resultJsonSchema()],
  ["matrix.schema.json", matrixJsonSchema()],
  ["compare.schema.json", compareJsonSchema()],
  ["calibration.schema.json", calibrationJsonSchema()],
  ["cassette.schema.json", cassetteJsonSchema()],
  ["answers.schema.json", answersJsonSchema()],
];
for (const [name, schema] of schemas) {
  writeFileSync(join(root, "schema", name), JSON.stringify(schema, null, 2) + "\n");
  console.log(`wrote schema/${name}`);
}
