/**
 * The published schemas (schema/*.json, schema/junit/*.xsd) as the tests validate what rhema
 * writes against them: one ajv holding every JSON Schema by its file name (so a `$ref` to
 * "result.schema.json" resolves as it does beside the files), and junit.xml against the XSD.
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { validateXML } from "xmllint-wasm";
import { junitXsd, repoRoot } from "./paths.js";

/** A published JSON Schema's file name under schema/. */
export type SchemaName = `${string}.schema.json`;

/** One ajv with every schema/*.json added by its file name; `date-time` checked as the zod schemas write it (ajv-formats is not a dependency). */
export function publishedSchemas(): { ajv: Ajv2020; validator: (name: SchemaName) => ValidateFunction } {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajv.addFormat("date-time", (text: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) && !Number.isNaN(Date.parse(text)));
  const dir = join(repoRoot, "schema");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".schema.json"))) {
    ajv.addSchema(JSON.parse(readFileSync(join(dir, name), "utf8")) as object, name);
  }
  return {
    ajv,
    validator: (name) => {
      const validate = ajv.getSchema(name);
      assert.ok(validate, `no published schema schema/${name}`);
      return validate;
    },
  };
}

/** Asserts `value` validates, naming `where` and the first errors. */
export function assertValid(validate: ValidateFunction, value: unknown, where: string): void {
  assert.ok(validate(value), `${where} does not validate:\n${JSON.stringify(validate.errors?.slice(0, 5), null, 1)}`);
}

/** Asserts the JUnit XML validates against schema/junit/junit-10-ext.xsd. */
export async function assertValidJUnit(xml: string, where = "junit.xml"): Promise<void> {
  const xsd = await readFile(junitXsd("junit-10-ext.xsd"), "utf8");
  const result = await validateXML({ xml: [{ fileName: "junit.xml", contents: xml }], schema: [{ fileName: "junit-10-ext.xsd", contents: xsd }] });
  assert.ok(result.valid, `${where}: ${result.rawOutput}`);
}
