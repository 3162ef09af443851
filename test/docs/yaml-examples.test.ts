/**
 * The example files the docs show are valid: a ```yaml block marked `task`, `policy` or `pricing`
 * goes through the same schema or loader rhema reads that kind of file with (the task file's zod
 * schema — its relative paths name files of the example, so the schema, not the loader; the policy
 * and pricing parsers whole). An example that stops matching the code fails here.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import { taskFileSchema } from "../../src/runner/tasks/task-schema.js";
import { parsePolicyText } from "../../src/policy/file/policy-file.js";
import { parsePricingText } from "../../src/runner/pricing/pricing-file.js";
import { errorMessage } from "../../src/core/errors.js";
import { type FencedBlock, docFiles, fencedBlocks, readDoc } from "../support/doc-blocks.js";

const KINDS = ["task", "policy", "pricing"] as const;
const examples = docFiles().flatMap((file) => fencedBlocks(file, readDoc(file))).filter((b) => b.lang === "yaml" && KINDS.some((k) => b.marks.includes(k)));

function problem(block: FencedBlock): string | null {
  const name = `${block.file}:${block.line}`;
  try {
    if (block.marks.includes("task")) {
      const checked = taskFileSchema.safeParse(parse(block.body));
      return checked.success ? null : checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    }
    if (block.marks.includes("policy")) parsePolicyText(block.body, name);
    else parsePricingText(block.body, name);
    return null;
  } catch (err) {
    return errorMessage(err);
  }
}

test("the docs show a valid task file, policy file and pricing file", () => {
  for (const kind of KINDS) assert.ok(examples.some((b) => b.marks.includes(kind)), `a ${kind} example is marked`);
});

test("every task, policy and pricing example in the docs is valid", () => {
  const invalid = examples.flatMap((b) => {
    const why = problem(b);
    return why === null ? [] : [`${b.file}:${b.line}: ${why}`];
  });
  assert.deepEqual(invalid, []);
});
