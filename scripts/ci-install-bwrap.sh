#!/usr/bin/env bash
# Makes bubblewrap (`bwrap`, the OS sandbox of rhema's commands) available in CI. Idempotent:
# nothing happens when bwrap is already on PATH. Otherwise installs Debian/Ubuntu's `bubblewrap`
# with apt-get (through sudo when not root). Then says whether a sandbox can actually be made:
# GitHub's ubuntu-24.04 runners restrict unprivileged user namespaces with AppArmor, which stops
# bwrap with "setting up uid map: Permission denied" (actions/runner-images#10443); set
# RHEMA_ALLOW_USERNS=1 to lift that with sysctl. Exit 0 when bwrap works, 1 when it cannot be
# installed or cannot make a sandbox.
set -euo pipefail

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else echo "ci-install-bwrap: need root (or sudo) to run: $*" >&2; return 1
  fi
}

if ! command -v bwrap >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ci-install-bwrap: bwrap is missing and there is no apt-get here; install bubblewrap with this system's package manager" >&2
    exit 1
  fi
  echo "ci-install-bwrap: installing bubblewrap with apt-get"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap >/dev/null 2>&1 ||
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap; }
  if ! command -v bwrap >/dev/null 2>&1; then
    echo "ci-install-bwrap: bubblewrap was installed but bwrap is not on PATH ($PATH)" >&2
    exit 1
  fi
fi

# The forms rhema's probe (src/process/sandbox-probe.ts) tries: a user namespace that cannot make
# another (bubblewrap 0.8 or later), else, for root, every capability dropped.
probe() {
  local common=(--ro-bind / / --proc /proc --dev /dev --tmpfs /tmp --unshare-pid --unshare-net --die-with-parent --new-session --clearenv)
  env -i "$(command -v bwrap)" --unshare-user --disable-userns "${common[@]}" -- /bin/true 2>&1 ||
    { [ "$(id -u)" -eq 0 ] && env -i "$(command -v bwrap)" --cap-drop ALL "${common[@]}" -- /bin/true 2>&1; }
}

if message=$(probe); then
  echo "ci-install-bwrap: $(bwrap --version) works"
  exit 0
fi
restricted=$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo 0)
if [ "$restricted" = 1 ] && [ "${RHEMA_ALLOW_USERNS:-0}" = 1 ]; then
  echo "ci-install-bwrap: lifting AppArmor's restriction of unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=0)"
  as_root sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0
  if message=$(probe); then
    echo "ci-install-bwrap: $(bwrap --version) works"
    exit 0
  fi
fi
echo "ci-install-bwrap: bwrap is installed but cannot make a sandbox here: ${message}" >&2
if [ "$restricted" = 1 ]; then
  echo "ci-install-bwrap: AppArmor restricts unprivileged user namespaces; rerun with RHEMA_ALLOW_USERNS=1, or run sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (actions/runner-images#10443)" >&2
fi
exit 1
