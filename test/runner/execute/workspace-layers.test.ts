/**
 * The choice of how workspaces are made (workspace-layers.ts), on this machine's real run
 * directories: as a user who is not root, the kernel's overlay is passed over without a try and
 * auto falls back to copies saying why each mechanism was passed over; naming one that cannot
 * work is exit 2 (usage) with the reason; `copy` needs no probe. As root, auto mounts a real
 * probe overlay and chooses overlay, leaving nothing mounted or written behind.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { RhemaError } from "../../../src/core/errors.js";
import { chooseWorkspaceMechanism } from "../../../src/runner/execute/workspace-layers.js";
import { mountPointsUnder } from "../../../src/runner/run-dir/layer-mounts.js";
import { tempDir } from "../../support/temp-dir.js";

test("not root and no fuse-overlayfs: auto copies, naming why for each mechanism; asking for one of them is exit 2", async (t) => {
  const runDir = await tempDir(t);
  const probe = { uid: 1001, fuseBinary: null };
  assert.deepEqual(await chooseWorkspaceMechanism(runDir, "auto", probe), {
    kind: "copy", reason: "overlay: needs real root (rhema runs as uid 1001, outside a user namespace of its own: --sandbox off, or none here can mount an overlay and start bwrap); fuse-overlayfs: not installed (no fuse-overlayfs on PATH)",
  });
  for (const choice of ["overlay", "fuse-overlayfs"] as const) {
    await assert.rejects(chooseWorkspaceMechanism(runDir, choice, probe), (err: unknown) =>
      err instanceof RhemaError && err.code === "usage" && err.message.startsWith(`--workspace-layers ${choice} cannot be used here (`));
  }
  assert.deepEqual(await chooseWorkspaceMechanism(runDir, "copy", probe), { kind: "copy", reason: "--workspace-layers copy" });
});

test("a fuse-overlayfs that cannot mount is passed over with its own words", async (t) => {
  const runDir = await tempDir(t);
  const chosen = await chooseWorkspaceMechanism(runDir, "auto", { uid: 1001, fuseBinary: "/bin/false" });
  assert.equal(chosen.kind, "copy");
  assert.match(chosen.kind === "copy" ? chosen.reason : "", /fuse-overlayfs: the probe mount failed: cannot mount the layer at .*\.layer-probe-\d+\/merged/);
  assert.deepEqual(await readdir(join(runDir, "prepared")).catch(() => []), [], "the probe leaves nothing behind");
});

test("as root, auto mounts a probe overlay and chooses overlay, leaving nothing mounted", { skip: process.getuid?.() !== 0 && "mounting needs root (CI runs as root)" }, async (t) => {
  const runDir = await tempDir(t);
  assert.deepEqual(await chooseWorkspaceMechanism(runDir, "auto", { uid: 0, fuseBinary: null }), { kind: "overlay" });
  assert.deepEqual(await mountPointsUnder(runDir), []);
  assert.deepEqual(await readdir(join(runDir, "prepared")), []);
});
