import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { scriptStepSchema, taskJsonSchema } from "../../../src/runner/tasks/task-schema.js";
import { repoRoot } from "../../support/paths.js";

test("the committed schema/task.schema.json equals the one generated from the zod schema", async () => {
  const committed = JSON.parse(await readFile(join(repoRoot, "schema/task.schema.json"), "utf8"));
  assert.deepStrictEqual(committed, taskJsonSchema(), "run `npm run build && node scripts/gen-schemas.mjs`");
});

test("the JSON Schema states the script step rules zod keeps in a refinement", () => {
  const schema = JSON.stringify(taskJsonSchema());
  assert.ok(schema.includes('"not":{"required":["call","calls"]}'));
  assert.ok(schema.includes('"dependentRequired":{"input":["call"]}'));
});

test("the JSON Schema states the scripted model's rules: script or scripts, pick only with scripts", () => {
  const schema = JSON.stringify(taskJsonSchema());
  assert.ok(schema.includes('"oneOf":[{"required":["script"]},{"required":["scripts"]}]'));
  assert.ok(schema.includes('"dependentRequired":{"pick":["scripts"]}'));
});

test("script steps: say, call with input, calls, fail are accepted; call with calls is not", () => {
  assert.ok(scriptStepSchema.safeParse({ say: "hi" }).success);
  assert.ok(scriptStepSchema.safeParse({ call: "shell", input: { command: "ls" } }).success);
  assert.ok(scriptStepSchema.safeParse({ calls: [{ call: "a" }, { call: "b", input: 1 }] }).success);
  assert.ok(scriptStepSchema.safeParse({ fail: { status: 500 } }).success);
  assert.ok(!scriptStepSchema.safeParse({ call: "a", calls: [{ call: "b" }] }).success);
});

test("example task files point editors at the published schema with a modeline", async () => {
  for (const rel of ["test/runner/fixtures/suites/arithmetic/fix-add.yaml", "test/runner/fixtures/suites/scripted/echo.yml"]) {
    const file = join(repoRoot, rel);
    const modeline = /^# yaml-language-server: \$schema=(\S+)$/m.exec(await readFile(file, "utf8"));
    assert.ok(modeline, `${rel} has no modeline`);
    assert.equal(resolve(dirname(file), modeline[1]!), join(repoRoot, "schema/task.schema.json"));
  }
});
