#!/usr/bin/env bash
# Makes fuse-overlayfs (one of rhema's layered-workspace mechanisms, --workspace-layers
# fuse-overlayfs) available in CI, so its tests run instead of skipping. Idempotent: nothing is
# installed when it is on PATH already; otherwise Debian/Ubuntu's `fuse-overlayfs` with apt-get
# (through sudo when not root). Then mounts one layer to show it works here (/dev/fuse usable).
# Exit 0 when it works, 1 when it cannot be installed or cannot mount.
set -euo pipefail

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else echo "ci-install-fuse-overlayfs: need root (or sudo) to run: $*" >&2; return 1
  fi
}

if ! command -v fuse-overlayfs >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ci-install-fuse-overlayfs: fuse-overlayfs is missing and there is no apt-get here" >&2
    exit 1
  fi
  echo "ci-install-fuse-overlayfs: installing fuse-overlayfs with apt-get"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fuse-overlayfs >/dev/null 2>&1 ||
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fuse-overlayfs; }
  command -v fuse-overlayfs >/dev/null 2>&1 || { echo "ci-install-fuse-overlayfs: installed, but not on PATH ($PATH)" >&2; exit 1; }
fi

# One layer over a one-file base, written through and read back, then unmounted.
dir=$(mktemp -d)
trap 'fusermount3 -u "$dir/merged" 2>/dev/null || umount "$dir/merged" 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir "$dir/lower" "$dir/upper" "$dir/work" "$dir/merged"
echo base > "$dir/lower/a"
if ! message=$(fuse-overlayfs -o "lowerdir=$dir/lower,upperdir=$dir/upper,workdir=$dir/work" "$dir/merged" 2>&1); then
  echo "ci-install-fuse-overlayfs: fuse-overlayfs cannot mount here: $message" >&2
  exit 1
fi
echo layer > "$dir/merged/a"
if [ "$(cat "$dir/upper/a")" != layer ] || [ "$(cat "$dir/lower/a")" != base ]; then
  echo "ci-install-fuse-overlayfs: a write through the mount did not land in the layer alone" >&2
  exit 1
fi
echo "ci-install-fuse-overlayfs: $(command -v fuse-overlayfs) mounts here"
