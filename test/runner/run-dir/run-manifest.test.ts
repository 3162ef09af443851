/** manifest.json: written and read back whole; missing is null; anything else is a clear error. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { MANIFEST_FILE, readManifest, writeManifest, type RunManifest } from "../../../src/runner/run-dir/run-manifest.js";
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

test("reads back the manifest it wrote, 0600", async (t) => {
  const runDir = join(await tempDir(t), "run");
  await writeManifest(runDir, MANIFEST);
  assert.deepEqual(await readManifest(runDir), MANIFEST);
  assert.equal((await stat(join(runDir, MANIFEST_FILE))).mode & 0o777, 0o600);
});

test("a run directory without a manifest has none", async (t) => {
  assert.equal(await readManifest(await tempDir(t)), null);
});

for (const [what, text] of [
  ["not JSON", ""],
  ["a task without its hash", JSON.stringify({ ...MANIFEST, tasks: [{ suite: "a", id: "b", file: "f" }] })],
  ["another version", JSON.stringify({ ...MANIFEST, version: 3 })],
] as const) {
  test(`a manifest with ${what} is an error naming the file and the way out`, async (t) => {
    const runDir = await tempDir(t);
    const path = join(runDir, MANIFEST_FILE);
    await writeFile(path, text);
    await assert.rejects(readManifest(runDir), (err: unknown) =>
      err instanceof RhemaError && err.code === "session_invalid" && err.message.startsWith(`${path}: not a rhema run manifest (`) && /pass another --out or remove the folder/.test(err.message));
  });
}
