#!/usr/bin/env bash
# tests/bed/wine.sh - the Windows half of lsm under Wine 8.0 on a private Xvfb, for tests/wine.
#
#   tests/bed/wine.sh install     # Debian packages (apt only for what is missing), the rust target
#   tests/bed/wine.sh build       # lsm.exe (windows-gnu), the ProcessPrng stand-in, the test app
#   eval "$(tests/bed/wine.sh up)"   # Xvfb and a Wine prefix; prints the environment
#   tests/bed/wine.sh down
#
# Wine 8.0 has no bcryptprimitives.dll, which Rust's std needs before main (ProcessPrng):
# tests/wine/bcryptprimitives.c stands in for it, beside lsm.exe. A crash would start Wine's
# debugger and hang the run: winedbg is disabled; so are mscoree and mshtml, whose first-run
# installers (Mono, Gecko) would ask in a dialog. An X11 window manager (openbox) draws the
# frames, as on a desktop: Wine leaves title bars and borders to it. Settings: LSM_WINEBED_DIR
# (/tmp/lsm-winebed), LSM_WINEBED_DISPLAY (:81), LSM_WINEBED_WM (openbox; "none": no window
# manager, nothing draws the frames), CARGO_TARGET_DIR (where `build` finds lsm.exe).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${LSM_WINEBED_DIR:-/tmp/lsm-winebed}
DISP=${LSM_WINEBED_DISPLAY:-:81}
BIN=$DIR/bin
TARGET=x86_64-pc-windows-gnu
WM=${LSM_WINEBED_WM:-openbox}
PACKAGES=(wine wine64 gcc-mingw-w64-x86-64 xvfb x11-utils)
[[ $WM == none ]] || PACKAGES+=("$WM")

say() { printf '[winebed %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=tests/bed/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

print_env() {
  cat <<EOF2
export DISPLAY=$DISP
export WINEPREFIX=$DIR/prefix
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
export LSM_WINEBED_DIR=$DIR
export LSM_WIN_BIN=$BIN
unset WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS AT_SPI_BUS_ADDRESS
EOF2
}

install() {
  install_packages "${PACKAGES[@]}" || die "apt-get install failed"
  rustup target list --installed | grep -qx "$TARGET" || rustup target add "$TARGET" >&2 || die "rustup target add"
}

build() {
  mkdir -p "$BIN"
  (cd "$ROOT" && cargo build --release --locked --target "$TARGET" -p lsm >&2) || die "cargo build lsm.exe"
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/$TARGET/release/lsm.exe" "$BIN/"
  x86_64-w64-mingw32-gcc -shared -O2 -o "$BIN/bcryptprimitives.dll" "$ROOT/tests/wine/bcryptprimitives.c" \
    "$ROOT/tests/wine/bcryptprimitives.def" -ladvapi32 || die "building bcryptprimitives.dll"
  x86_64-w64-mingw32-gcc -municode -mwindows -O2 -Wall -o "$BIN/lsm_wintest.exe" \
    "$ROOT/tests/wine/lsm_wintest.c" -lshell32 || die "building lsm_wintest.exe"
  say "built lsm.exe, bcryptprimitives.dll, lsm_wintest.exe in $BIN"
}

up() {
  mkdir -p "$DIR/logs"
  if ! xdpyinfo -display "$DISP" >/dev/null 2>&1; then
    setsid Xvfb "$DISP" -screen 0 1280x800x24 -noreset -nolisten tcp >"$DIR/logs/xvfb.log" 2>&1 </dev/null &
    echo $! >"$DIR/xvfb.pid"
    for _ in $(seq 1 50); do xdpyinfo -display "$DISP" >/dev/null 2>&1 && break; sleep 0.1; done
    xdpyinfo -display "$DISP" >/dev/null 2>&1 || die "Xvfb $DISP did not start"
  fi
  if [[ $WM != none ]] && ! { [[ -f $DIR/wm.pid ]] && kill -0 "$(cat "$DIR/wm.pid")" 2>/dev/null; }; then
    command -v "$WM" >/dev/null || die "$WM is missing: run tests/bed/wine.sh install (or LSM_WINEBED_WM=none)"
    DISPLAY=$DISP setsid "$WM" >"$DIR/logs/wm.log" 2>&1 </dev/null &
    echo $! >"$DIR/wm.pid"
    sleep 0.5
    kill -0 "$(cat "$DIR/wm.pid")" 2>/dev/null || die "$WM did not start (see $DIR/logs/wm.log)"
  fi
  eval "$(print_env)"
  if [[ ! -f $WINEPREFIX/system.reg ]]; then
    say "creating the Wine prefix (10-20 s)"
    wineboot -i >"$DIR/logs/wineboot.log" 2>&1 || die "wineboot failed (see $DIR/logs/wineboot.log)"
  fi
  print_env
  say "up: Wine $(wine --version 2>/dev/null) on $DISP, window manager: $WM"
}

down() {
  if [[ -d $DIR ]]; then
    eval "$(print_env)"
    wineserver -k >/dev/null 2>&1
    [[ -f $DIR/wm.pid ]] && kill "$(cat "$DIR/wm.pid")" 2>/dev/null
    [[ -f $DIR/xvfb.pid ]] && kill "$(cat "$DIR/xvfb.pid")" 2>/dev/null
    rm -f "$DIR/xvfb.pid" "$DIR/wm.pid"
  fi
  say "down"
}

case "${1:-up}" in
  install) install ;;
  build) build ;;
  up) up ;;
  env) print_env ;;
  down) down ;;
  *) echo "usage: $0 install|build|up|env|down" >&2; exit 2 ;;
esac
