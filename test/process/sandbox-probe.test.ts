/** The sandbox probe: bwrap found and working here, missing on a PATH without it, and bwrap's failures explained. */
import assert from "node:assert/strict";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { classifyBwrapFailure, findOnPath, probeSandbox } from "../../src/process/sandbox-probe.js";
import { tempDir } from "../support/temp-dir.js";
import { sandboxSkip } from "./sandbox-fixture.js";

const skip = await sandboxSkip();

test("bwrap works here: the probe gives its version and path, once per process", { skip }, async () => {
  const probe = await probeSandbox();
  assert.equal(probe.ok, true);
  assert.ok(probe.ok && /^\d+\.\d+(\.\d+)?$/.test(probe.version), JSON.stringify(probe));
  assert.ok(probe.ok && probe.bwrap.endsWith("/bwrap"));
  assert.equal(probeSandbox(), probeSandbox(), "not cached");
});

test("bwrap missing on the PATH: the fix says to install bubblewrap", async (t) => {
  const empty = await tempDir(t);
  const probe = await probeSandbox({ path: `${empty}:relative/bin` });
  assert.deepEqual(probe, {
    ok: false, code: "bwrap_missing", reason: `bwrap (bubblewrap) is not installed: not found on ${empty}:relative/bin`,
    fix: "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`; " +
      "scripts/ci-install-bwrap.sh does it in CI), or run with --sandbox off",
  });
});

test("a bwrap that fails is run and its message classified (here a stand-in script)", async (t) => {
  const bin = await tempDir(t);
  await writeFile(join(bin, "bwrap"), "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.9.0'; exit 0; }\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n");
  await chmod(join(bin, "bwrap"), 0o755);
  const probe = await probeSandbox({ path: bin });
  assert.equal(probe.ok, false);
  assert.equal(!probe.ok && probe.code, "userns_restricted");
  assert.equal(await findOnPath("bwrap", `/nonexistent:${bin}`), join(bin, "bwrap"));
});

test("bwrap's failures: AppArmor's userns restriction, refused namespaces, anything else", () => {
  const apparmor = classifyBwrapFailure("bwrap: setting up uid map: Permission denied\n", 1);
  assert.equal(apparmor.code, "userns_restricted");
  assert.match(apparmor.reason, /^bwrap said "bwrap: setting up uid map: Permission denied": AppArmor restricts unprivileged user namespaces/);
  assert.match(apparmor.fix, /sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0.*actions\/runner-images#10443/);
  assert.equal(classifyBwrapFailure("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", 1).code, "userns_restricted");
  assert.equal(classifyBwrapFailure("bwrap: unshare failed: Operation not permitted", 1).code, "userns_restricted");
  for (const message of [
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.",
    "bwrap: No permissions to create a new namespace",
    "bwrap: Creating new namespace failed: Operation not permitted",
    "bwrap: Failed to make / slave: Operation not permitted",
  ]) {
    const refused = classifyBwrapFailure(message, 1);
    assert.equal(refused.code, "namespaces_refused", message);
    assert.match(refused.fix, /user\.max_user_namespaces.*--sandbox off$/);
  }
  assert.deepEqual(classifyBwrapFailure("", 9), {
    ok: false, code: "bwrap_failed", reason: "bwrap exited with code 9 and said nothing when asked to run `true` in a sandbox",
    fix: "run `bwrap --ro-bind / / --proc /proc --dev /dev --unshare-pid --unshare-net true` by hand to see why, or run with --sandbox off",
  });
});
