/** The published JSON Schema is the zod schema's export, and says what the zod schema says. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { policyFileSchema, policyJsonSchema } from "../../../src/policy/file/policy-schema.js";
import { repoRoot } from "../../support/paths.js";

const REGENERATE = `node -e 'import("./dist/src/policy/file/policy-schema.js").then(m => require("fs").writeFileSync("schema/policy.schema.json", JSON.stringify(m.policyJsonSchema(), null, 2) + "\\n"))'`;

test("schema/policy.schema.json equals the schema generated from the zod source", () => {
  const committed = JSON.parse(readFileSync(join(repoRoot, "schema", "policy.schema.json"), "utf8")) as unknown;
  assert.deepEqual(committed, policyJsonSchema(), `regenerate it after a build with: ${REGENERATE}`);
});

test("the JSON Schema closes every object and states the refinements zod cannot export", () => {
  const schema = policyJsonSchema() as {
    additionalProperties: boolean; required: string[];
    properties: { rules: { items: { minProperties: number; maxProperties: number; properties: { allow: { anyOf: unknown[]; additionalProperties: boolean } } } } };
  };
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.required, ["version", "default", "rules"]);
  const rule = schema.properties.rules.items;
  assert.equal(rule.minProperties, 1);
  assert.equal(rule.maxProperties, 1);
  assert.equal(rule.properties.allow.additionalProperties, false);
  assert.equal(rule.properties.allow.anyOf.length, 3);
});

test("the zod schema accepts the first design's policy example as written", () => {
  const example = {
    version: 1, default: "deny",
    rules: [
      { allow: { tools: ["read_file", "list_dir", "glob", "grep"] } },
      { allow: { tools: ["write_file", "edit_file"], paths: ["src/**", "test/**"] } },
      { allow: { shell: ["npm test", "npm run build", "git diff *", "git status"] } },
      { deny: { shell: ["git push *"], reason: "no pushes from CI" } },
      { deny: { paths: [".github/**", "**/.env"] } },
    ],
  };
  assert.equal(policyFileSchema.safeParse(example).success, true);
});
