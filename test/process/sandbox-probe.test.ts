/** The sandbox probe: bwrap found and working here, missing on a PATH without it, and bwrap's failures explained. */
import assert from "node:assert/strict";
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { capabilitiesKept, classifyBwrapFailure, findOnPath, probeSandbox } from "../../src/process/sandbox-probe.js";
import { tempDir } from "../support/temp-dir.js";
import { sandboxSkip, wrappedBwrap } from "./sandbox-fixture.js";

const skip = await sandboxSkip();

test("bwrap works here: the probe gives its version, path and form (a user namespace, nobody inside for root), once per process", { skip }, async () => {
  const probe = await probeSandbox();
  assert.equal(probe.ok, true);
  const uid = process.getuid!();
  assert.deepEqual(probe.ok && probe.isolation, { kind: "userns", uid: uid === 0 ? 65534 : uid, gid: uid === 0 ? 65534 : process.getgid!() });
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
    fix: "run `bwrap --unshare-user --disable-userns --ro-bind / / --proc /proc --dev /dev --unshare-pid --unshare-net true` by hand to see why, or run with --sandbox off",
  });
});

test("bwrap older than 0.8 (no --disable-userns) is named as such, with the fix", () => {
  const old = classifyBwrapFailure("bwrap: Unknown option --disable-userns\n", 1);
  assert.equal(old.code, "bwrap_too_old");
  assert.match(old.reason, /older than 0\.8/);
  assert.match(old.fix, /bubblewrap 0\.8 or later/);
});

test("capabilitiesKept: a command holds with no capability but the bounding set's and no-new-privileges set", () => {
  const status = (eff: string, nnp = "1") => `Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t${eff}\nCapEff:\t${eff}\nCapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\nNoNewPrivs:\t${nnp}\n`;
  assert.equal(capabilitiesKept(status("0000000000000000")), null);
  assert.equal(capabilitiesKept(status("000001fffeffffff")), "CapPrm 000001fffeffffff, CapEff 000001fffeffffff");
  assert.equal(capabilitiesKept(status("0000000000000000", "0")), "NoNewPrivs 0");
  assert.equal(capabilitiesKept(""), "CapInh unreadable, CapPrm unreadable, CapEff unreadable, CapAmb unreadable, NoNewPrivs unreadable");
});

test("no user namespace here: a root rhema falls back to --cap-drop ALL when that holds, and to nothing when capabilities stay", { skip: skip || (process.getuid?.() !== 0 && "needs root") }, async (t) => {
  const dropping = await wrappedBwrap(await tempDir(t), true, false);
  const probe = await probeSandbox({ path: dropping });
  assert.deepEqual(probe.ok && probe.isolation, { kind: "cap-drop" }, JSON.stringify(probe));
  const keeping = await wrappedBwrap(await tempDir(t), true, true);
  const kept = await probeSandbox({ path: keeping });
  assert.equal(kept.ok, false);
  // The user namespace's failure is what is reported: the cap-drop form was only a fallback.
  assert.equal(!kept.ok && kept.code, "namespaces_refused", JSON.stringify(kept));
  assert.match(!kept.ok ? kept.reason : "", /; and without one \(--cap-drop ALL, as root\): a command in the sandbox \(--cap-drop ALL\) kept capabilities: CapPrm 0*[1-9a-f]/);
});
