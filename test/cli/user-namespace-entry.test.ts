/**
 * Which command lines the executable starts again inside a user namespace (user-namespace-entry.ts):
 * `rhema run` that may mount the kernel's overlay and sandboxes its commands, by its flags in every
 * spelling yargs takes; nothing else.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { flagValue, runWantsUserNamespace } from "../../src/cli/user-namespace-entry.js";

test("a flag's value in each spelling yargs reads, the last one winning, nothing after --", () => {
  assert.equal(flagValue(["run", "t", "--workspace-layers", "copy"], "workspace-layers"), "copy");
  assert.equal(flagValue(["run", "--workspace-layers=fuse-overlayfs", "t"], "workspace-layers"), "fuse-overlayfs");
  assert.equal(flagValue(["run", "--workspaceLayers", "copy"], "workspace-layers"), "copy");
  assert.equal(flagValue(["run", "--sandbox", "off", "--sandbox=bwrap"], "sandbox"), "bwrap");
  assert.equal(flagValue(["run", "--", "--sandbox", "off"], "sandbox"), undefined);
  assert.equal(flagValue(["run", "--sandbox-x", "off"], "sandbox"), undefined);
});

test("a run that may mount the kernel's overlay and sandboxes its commands goes inside; any other command line does not", () => {
  assert.equal(runWantsUserNamespace(["run", "tasks/"]), true);
  assert.equal(runWantsUserNamespace(["run", "tasks/", "--workspace-layers", "overlay", "--sandbox", "bwrap"]), true);
  assert.equal(runWantsUserNamespace(["run", "tasks/", "--workspace-layers", "copy"]), false, "copies asked for");
  assert.equal(runWantsUserNamespace(["run", "tasks/", "--workspace-layers=fuse-overlayfs"]), false, "fuse-overlayfs asked for");
  assert.equal(runWantsUserNamespace(["run", "tasks/", "--sandbox", "off"]), false, "unsandboxed commands would run as the namespace's 0");
  assert.equal(runWantsUserNamespace(["run", "--help"]), false);
  assert.equal(runWantsUserNamespace(["validate", "tasks/"]), false);
  assert.equal(runWantsUserNamespace([]), false);
});
