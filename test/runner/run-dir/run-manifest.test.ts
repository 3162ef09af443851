/** manifest.json: written and read back whole; missing is null; anything else is manifest_invalid, naming the file. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import type { RunManifest } from "../../../src/runner/run-dir/run-manifest.js";
import { StateFileError } from "../../../src/runner/run-dir/state-file.js";
import { tempDir } from "../../support/temp-dir.js";

const MANIFEST: RunManifest = {
  version: 1,
  runId: "7d1c0d1e-0000-4000-8000-000000000001",
  startedAt: "2026-03-04T05:06:07.000Z",
  resumes: 1,
  tasks: [
    { suite: "arith", id: "add", file: "/suites/arith/add.yaml", contentHash: "aa" },
    { suite: "arith", id: "mul", file: "/suites/arith/mul.yaml", contentHash: "bb" },
  ],
};

test("reads back the manifest it wrote, 0600, at manifest.json", async (t) => {
  const runDir = new RunDir(join(await tempDir(t), "run"));
  await runDir.writeManifest(MANIFEST);
  assert.equal(runDir.manifestPath, join(runDir.path, "manifest.json"));
  assert.deepEqual(await runDir.readManifest(), MANIFEST);
  assert.equal((await stat(runDir.manifestPath)).mode & 0o777, 0o600);
});

test("a run directory without a manifest has none", async (t) => {
  assert.equal(await new RunDir(await tempDir(t)).readManifest(), null);
});

for (const [what, text] of [
  ["not JSON", ""],
  ["a task without its hash", JSON.stringify({ ...MANIFEST, tasks: [{ suite: "a", id: "b", file: "f" }] })],
  ["another version", JSON.stringify({ ...MANIFEST, version: 3 })],
] as const) {
  test(`a manifest with ${what} is manifest_invalid, naming the file and the way out`, async (t) => {
    const runDir = new RunDir(await tempDir(t));
    await writeFile(runDir.manifestPath, text);
    await assert.rejects(runDir.readManifest(), (err: unknown) =>
      err instanceof StateFileError && err.code === "manifest_invalid" && err.path === runDir.manifestPath &&
      err.message.startsWith(`${runDir.manifestPath}: not a rhema run manifest (`) && /pass another --out or remove the folder/.test(err.message));
  });
}
