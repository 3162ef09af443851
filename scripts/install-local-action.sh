#!/usr/bin/env bash
# Installs GitHub's local runner for JavaScript actions, @github/local-action 7.0.1, with every
# dependency at the version scripts/local-action/package-lock.json pins (`npm ci`), into a scratch
# prefix outside the clone, and prints the path of its `local-action` binary (for
# RHEMA_LOCAL_ACTION_BIN; test/action/action-local-runner.test.ts runs the action with it). An
# install of the same lockfile is reused, so a second CI run on the machine takes no time.
#   scripts/install-local-action.sh [PREFIX]
# PREFIX defaults to $RHEMA_LOCAL_ACTION_PREFIX, else ${XDG_CACHE_HOME:-~/.cache}/rhema/local-action-<lock hash>.
# Progress and npm's messages go to stderr; stdout is the binary's path only.
set -euo pipefail
pinned="$(cd "$(dirname "$0")" && pwd)/local-action"
lock_hash=$(sha256sum "$pinned/package-lock.json" | cut -c1-12)
prefix=${1:-${RHEMA_LOCAL_ACTION_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/rhema/local-action-$lock_hash}}
bin="$prefix/node_modules/.bin/local-action"
marker="$prefix/.installed-$lock_hash"

if [ -f "$marker" ] && [ -x "$bin" ]; then
  echo "install-local-action: reusing $prefix" >&2
  echo "$bin"
  exit 0
fi

# Into a folder beside the prefix, renamed when complete: a killed install is never reused.
partial="$prefix.partial.$$"
trap 'rm -rf "$partial"' EXIT
rm -rf "$partial"
mkdir -p "$partial"
cp "$pinned/package.json" "$pinned/package-lock.json" "$partial/"
echo "install-local-action: npm ci @github/local-action 7.0.1 into $prefix" >&2
npm ci --prefix "$partial" --no-audit --no-fund --loglevel=error >&2
if [ ! -x "$partial/node_modules/.bin/local-action" ]; then
  echo "install-local-action: npm ci finished but $partial/node_modules/.bin/local-action is missing" >&2
  exit 1
fi
touch "$partial/.installed-$lock_hash"
rm -rf "$prefix"
mkdir -p "$(dirname "$prefix")"
mv "$partial" "$prefix"
echo "$bin"
