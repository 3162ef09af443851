#!/usr/bin/env bash
# Makes chromium (the browser report.html's tests and bench:viewer drive through playwright-core,
# which downloads none) available in CI, so test/browser/ runs instead of skipping. Idempotent:
# nothing is installed when `chromium` is on PATH already; otherwise Debian's `chromium` with
# apt-get (through sudo when not root). Then starts it headless once to show it works here.
# Exit 0 when it works, 1 when it cannot be installed or cannot start.
set -euo pipefail

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else echo "ci-install-chromium: need root (or sudo) to run: $*" >&2; return 1
  fi
}

if ! command -v chromium >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ci-install-chromium: chromium is missing and there is no apt-get here" >&2
    exit 1
  fi
  echo "ci-install-chromium: installing chromium with apt-get"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
    { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }
  command -v chromium >/dev/null 2>&1 || { echo "ci-install-chromium: installed, but not on PATH ($PATH)" >&2; exit 1; }
fi

# One page rendered headless: its DOM must come back. As root chromium refuses its own sandbox.
args=(--headless --disable-gpu --dump-dom)
[ "$(id -u)" -eq 0 ] && args=(--no-sandbox "${args[@]}")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
if ! dom=$(timeout 60 chromium "${args[@]}" --user-data-dir="$profile" 'data:text/html,<p>ok</p>' 2>/dev/null); then
  echo "ci-install-chromium: $(command -v chromium) does not start headless here" >&2
  exit 1
fi
if [[ "$dom" != *"<p>ok</p>"* ]]; then
  echo "ci-install-chromium: chromium started but rendered no page (it printed: ${dom:0:200})" >&2
  exit 1
fi
echo "ci-install-chromium: $(command -v chromium) runs headless here ($(chromium --version 2>/dev/null || echo 'version unknown'))"
