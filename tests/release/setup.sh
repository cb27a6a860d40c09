#!/usr/bin/env bash
# tests/release/setup.sh - what the release script and its test (tests/release) need; called by
# tests/setup.sh. Idempotent.
#
#   tests/release/setup.sh apt   # Debian: dpkg-dev (dpkg-shlibdeps), binutils (readelf) and
#                                # systemd (systemd-analyze); python3 zips the bundle itself
#   tests/release/setup.sh npm   # tests/release/node_modules: @anthropic-ai/mcpb (its manifest
#                                # schemas and `mcpb validate`), run with tests/conformance's Node 22
# (Python: skillsaw, which carries the MCP registry's published server.json schemas, and
# jsonschema come from tests/requirements.txt.)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { printf '[release-setup %s] %s\n' "$(date +%T)" "$*" >&2; }
# shellcheck source=tests/bed/apt.sh
source "$HERE/../bed/apt.sh"

case "${1:-}" in
  apt) install_packages dpkg-dev binutils systemd ;;
  npm)
    stamp=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)
    if [[ $(cat "$HERE/node_modules/.lsm-setup-stamp" 2>/dev/null) != "$stamp" ]]; then
      say "npm ci in tests/release"
      (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
      echo "$stamp" >"$HERE/node_modules/.lsm-setup-stamp"
    fi
    say "mcpb $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
      "$HERE/node_modules/@anthropic-ai/mcpb/package.json") ready"
    ;;
  *) echo "usage: $0 apt|npm" >&2; exit 2 ;;
esac
