/** The library's exports: the policy engine and the suite runner are reachable, and every export is documented. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as rhema from "../src/index.js";
import { repoRoot } from "./support/paths.js";

test("a library user can load a policy, approve with it, and run a suite", () => {
  for (const name of ["loadPolicyFile", "loadPolicy", "PolicyApproval", "loadTasks", "runSuite", "CodingAgent", "AnthropicProvider", "CheckpointStore"]) {
    assert.equal(typeof (rhema as Record<string, unknown>)[name], "function", name);
  }
});

test("every export statement of src/index.ts has a doc comment just above it", () => {
  const lines = readFileSync(join(repoRoot, "src/index.ts"), "utf8").split("\n");
  const undocumented = lines.flatMap((line, i) => (line.startsWith("export ") && !/^\/\*\*.*\*\/$/.test(lines[i - 1] ?? "") ? [line] : []));
  assert.deepEqual(undocumented, []);
});
