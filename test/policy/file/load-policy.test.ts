/** `loadPolicy`: presets by name, files relative to a given folder, and clear errors otherwise. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadPolicy } from "../../../src/policy/file/load-policy.js";
import { PolicyFileError } from "../../../src/policy/file/policy-file.js";
import { tempDir } from "../../support/temp-dir.js";

test("preset:NAME loads a built-in policy", async () => {
  const { policy } = await loadPolicy("preset:read-only");
  assert.equal(policy.source, "preset:read-only");
  assert.equal(policy.defaultLabel, "default (preset:read-only)");
});

test("an unknown preset names the ones there are", async () => {
  await assert.rejects(loadPolicy("preset:yolo"), (err: PolicyFileError) => {
    assert.equal(err.code, "policy_invalid");
    assert.equal(err.message, "preset:yolo: unknown preset `yolo`; the presets are read-only, workspace-write, ci");
    return true;
  });
});

test("a relative file path resolves against the folder the caller gives", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "ci.yaml"), "version: 1\ndefault: deny\nrules: []\n");
  const { policy } = await loadPolicy("ci.yaml", { baseDir: dir });
  assert.equal(policy.defaultLabel, "default (ci.yaml)");
  await assert.rejects(loadPolicy("nope.yaml", { baseDir: dir }), PolicyFileError);
});
