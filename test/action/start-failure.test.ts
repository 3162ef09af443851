/**
 * What the step shows for an error that stopped the run, as a pure function: each located problem
 * of a task, policy or pricing file an annotation on its file (relative), line and column; a file
 * that is not in the repository (outside it, missing, a preset's name) no `file=` but its path in
 * the message; the input that named a file said; flags named as inputs; any other error quoted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RhemaError } from "../../src/core/errors.js";
import { PolicyFileError } from "../../src/policy/file/policy-file.js";
import { PricingFileError } from "../../src/runner/pricing/pricing-file.js";
import { TaskFileError } from "../../src/runner/tasks/task-file.js";
import { describeStartFailure } from "../../src/action/start-failure.js";

const exists = (path: string) => !path.includes("missing");

test("task file problems: one annotation each on the relative path, line and column; the summary lists them", () => {
  const err = new TaskFileError([
    { file: "/repo/suite/a.yaml", line: 3, column: 11, field: "limits.timout", message: "unknown key; did you mean `timeout`?" },
    { file: "/repo/suite/b.yaml", line: 1, column: 1, field: "", message: "not UTF-8 text" },
    { file: "/elsewhere/c.yaml", line: 2, column: 5, field: "prompt", message: "expected text" },
  ]);
  const out = describeStartFailure(err, "/repo", {}, exists);
  assert.deepEqual(out.annotations, [
    { level: "error", title: "invalid task file", message: "limits.timout: unknown key; did you mean `timeout`?", file: "suite/a.yaml", line: 3, column: 11 },
    { level: "error", title: "invalid task file", message: "not UTF-8 text", file: "suite/b.yaml", line: 1, column: 1 },
    { level: "error", title: "invalid task file", message: "/elsewhere/c.yaml:2:5: prompt: expected text" },
  ]);
  assert.match(out.summary, /^## rhema: the run did not start\n/);
  assert.match(out.summary, /^- `suite\/a\.yaml:3:11` \(task file\): limits\.timout: unknown key/m);
  assert.match(out.summary, /^- `\/elsewhere\/c\.yaml:2:5` \(task file\): prompt: expected text$/m);
  assert.match(out.failure, /^the run did not start: 3 problems in 3 files \(each annotated on its file; the job summary lists them\):\nsuite\/a\.yaml:3:11: limits/);
});

test("the policy and pricing inputs' files are said to be theirs; a missing file or a preset gets no file=", () => {
  const policy = new PolicyFileError("/repo/ci/p.yaml", [{ file: "/repo/ci/p.yaml", line: 4, column: 14, message: "rules.0.allow: unknown key `tols`" }]);
  assert.deepEqual(describeStartFailure(policy, "/repo", { policy: "/repo/ci/p.yaml" }, exists).annotations, [
    { level: "error", title: "invalid policy file (the policy input)", message: "rules.0.allow: unknown key `tols`", file: "ci/p.yaml", line: 4, column: 14 },
  ]);
  const missing = new PolicyFileError("/repo/missing.yaml", [{ file: "/repo/missing.yaml", message: "cannot read the policy file: ENOENT" }]);
  const out = describeStartFailure(missing, "/repo", { policy: "/repo/missing.yaml" }, exists);
  assert.deepEqual(out.annotations, [{ level: "error", title: "invalid policy file (the policy input)", message: "missing.yaml: cannot read the policy file: ENOENT" }]);
  assert.match(out.failure, /\nmissing\.yaml \(the `policy` input\): cannot read the policy file: ENOENT$/);
  const preset = new PolicyFileError("preset:nope", [{ file: "preset:nope", message: "unknown preset `nope`" }]);
  assert.deepEqual(describeStartFailure(preset, "/repo", { policy: "preset:nope" }, exists).annotations, [
    { level: "error", title: "invalid policy file (the policy input)", message: "preset:nope: unknown preset `nope`" },
  ]);
  const pricing = new PricingFileError([{ file: "/repo/prices.yaml", line: 3, column: 7, field: "models.0.inputPerMTok", message: "a price cannot be negative" }]);
  assert.deepEqual(describeStartFailure(pricing, "/repo", { pricing: "/repo/prices.yaml" }, exists).annotations, [
    { level: "error", title: "invalid pricing file (the pricing input)", message: "models.0.inputPerMTok: a price cannot be negative", file: "prices.yaml", line: 3, column: 7 },
  ]);
});

test("any other error: no annotation of its own, the message quoted in the summary with the inputs named", () => {
  const usage = describeStartFailure(new RhemaError("usage", "Expected --shard as i/n, got \"3/2\""), "/repo", {}, exists);
  assert.deepEqual(usage.annotations, []);
  assert.equal(usage.failure, "Expected the `shard` input as i/n, got \"3/2\"");
  assert.match(usage.summary, /^## rhema: the run did not start\n\nNothing ran[^\n]*\n\n```\nExpected the `shard` input/);
  const output = describeStartFailure(new RhemaError("output_failed", "cannot write /repo/.rhema/x: no space left on device (ENOSPC)"), "/repo", {}, exists);
  assert.match(output.summary, /^## rhema: the run stopped on an error\n\nWhat finished is kept/);
});
