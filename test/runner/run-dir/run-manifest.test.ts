/** manifest.json: written and read back whole; missing is null; anything else is manifest_invalid, naming the file. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RunDir } from "../../../src/runner/run-dir/run-dir.js";
import { planManifestTasks, type ManifestTask, type RunManifest } from "../../../src/runner/run-dir/run-manifest.js";
import { StateFileError } from "../../../src/runner/run-dir/state-file.js";
import { tempDir } from "../../support/temp-dir.js";

const MANIFEST: RunManifest = {
  version: 1,
  runId: "7d1c0d1e-0000-4000-8000-000000000001",
  startedAt: "2026-03-04T05:06:07.000Z",
  resumes: 1,
  activeMs: 4_200,
  hashScheme: "content-v2",
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

test("a manifest written before activeMs existed reads as 0 ms of wall time", async (t) => {
  const runDir = new RunDir(await tempDir(t));
  const { activeMs: _, ...older } = MANIFEST;
  await writeFile(runDir.manifestPath, JSON.stringify(older));
  assert.deepEqual(await runDir.readManifest(), { ...MANIFEST, activeMs: 0 });
});

const task = (suite: string, id: string, contentHash = "h"): ManifestTask => ({ suite, id, file: `/s/${suite}/${id}.yaml`, contentHash });

test("a selection that is a subset of the manifest keeps the whole manifest, the selected tasks updated", () => {
  const previous = [task("a", "one"), task("a", "two"), task("b", "three")];
  assert.deepEqual(planManifestTasks(previous, [task("a", "two", "new")], "resume"),
    { kind: "ok", tasks: [task("a", "one"), task("a", "two", "new"), task("b", "three")] });
});

test("a selection with tasks the manifest lacks is refused, naming them, unless added or restarted", () => {
  const previous = [task("arith", "add")];
  const selected = [task("refactor", "rename"), task("arith", "add"), task("refactor", "extract")];
  assert.deepEqual(planManifestTasks(previous, selected, "resume"), { kind: "outside", missing: [task("refactor", "extract"), task("refactor", "rename")] });
  assert.deepEqual(planManifestTasks(previous, selected, "add"), { kind: "ok", tasks: [task("arith", "add"), task("refactor", "extract"), task("refactor", "rename")] });
  assert.deepEqual(planManifestTasks(previous, [task("refactor", "rename")], "restart"), { kind: "ok", tasks: [task("refactor", "rename")] });
});

test("a first run's manifest is its selection, in task order", () => {
  assert.deepEqual(planManifestTasks(null, [task("b", "x"), task("a", "y")], "resume"), { kind: "ok", tasks: [task("a", "y"), task("b", "x")] });
});

test("a manifest written before hash schemes reads as file-bytes: its hashes are of the files' bytes", async (t) => {
  const runDir = new RunDir(join(await tempDir(t), "run"));
  await runDir.writeManifest(MANIFEST);
  const { hashScheme: _scheme, ...old } = MANIFEST;
  await writeFile(runDir.manifestPath, JSON.stringify(old));
  assert.deepEqual(await runDir.readManifest(), { ...MANIFEST, hashScheme: "file-bytes" });
});
