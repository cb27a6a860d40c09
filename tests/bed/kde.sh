#!/usr/bin/env bash
# tests/bed/kde.sh - a headless KDE Plasma Wayland desktop for tests/kde: a private session
# bus, kwin_wayland --virtual (with XWayland), the XDG desktop portal with its KDE backend
# (RemoteDesktop: keyboard and pointer without a dialog) and AT-SPI (activated on the bus).
#
#   tests/bed/kde.sh install            # Debian packages (apt only for what is missing)
#   eval "$(tests/bed/kde.sh up)"      # start; prints the session's environment
#   tests/bed/kde.sh env | status | down
#   tests/bed/kde.sh ensure-app KEY     # testapp | xterm: start once, print its pid
#   tests/bed/kde.sh stop-app KEY
#   tests/bed/kde.sh grant-screenshots EXE   # KWin's ScreenShot2 for that executable (a .desktop
#   tests/bed/kde.sh revoke-screenshots      #   grant, as a user would install it; KSycoca rebuilt)
#
# kwin_wayland is started from a copy without its file capabilities (a container cannot exec
# it with them); the copy must keep the name kwin_wayland (KWin's platform plugin checks it).
# Settings: LSM_KDEBED_DIR (default /tmp/lsm-kdebed), LSM_KDEBED_SIZE (1280x800).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${LSM_KDEBED_DIR:-/tmp/lsm-kdebed}
RUN=$DIR/run
HOMED=$DIR/home
LOGS=$DIR/logs
PIDS=$DIR/pids
SIZE=${LSM_KDEBED_SIZE:-1280x800}
WD=wayland-kde
PY=/usr/bin/python3   # Debian's python: python3-gi for the test app
PACKAGES=(kwin-wayland xdg-desktop-portal xdg-desktop-portal-kde xwayland at-spi2-core dbus-daemon
          dbus-bin libglib2.0-bin libkf5service-bin python3-gi gir1.2-gtk-3.0 python3-pyatspi xterm)

say() { printf '[kdebed %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=tests/bed/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

print_env() {
  cat <<EOF
export XDG_RUNTIME_DIR=$RUN
export WAYLAND_DISPLAY=$WD
export DBUS_SESSION_BUS_ADDRESS=unix:path=$RUN/bus
export XDG_SESSION_TYPE=wayland
export XDG_CURRENT_DESKTOP=KDE
export LSM_KDEBED_DIR=$DIR
export LSM_TESTAPP_LOG=$LOGS/testapp-events.log
unset DISPLAY AT_SPI_BUS_ADDRESS GDK_BACKEND QT_QPA_PLATFORM GSK_RENDERER XAUTHORITY
EOF
}

daemon_env() {
  export XDG_RUNTIME_DIR=$RUN HOME=$HOMED
  export XDG_CONFIG_HOME=$HOMED/.config XDG_DATA_HOME=$HOMED/.local/share XDG_CACHE_HOME=$HOMED/.cache
  export XDG_SESSION_TYPE=wayland XDG_CURRENT_DESKTOP=KDE
  export DBUS_SESSION_BUS_ADDRESS=unix:path=$RUN/bus
  export NO_AT_BRIDGE=0 LSM_TESTAPP_LOG=$LOGS/testapp-events.log
  # Nothing of another session this shell may have inherited (run-all's X11 or GNOME bed).
  unset DISPLAY WAYLAND_DISPLAY AT_SPI_BUS_ADDRESS GDK_BACKEND QT_QPA_PLATFORM GSK_RENDERER XAUTHORITY
}

alive() { # a zombie (no init reaps it in a container) is not alive
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null && [[ $(ps -o stat= -p "$1" 2>/dev/null | cut -c1) != Z ]]
}
pid_of() { [[ -f $PIDS ]] && awk -v n="$1" '$1==n{print $2}' "$PIDS" | tail -1; }
record() { echo "$1 $2" >>"$PIDS"; }
has_name() {
  gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.NameHasOwner "$1" 2>/dev/null | grep -q true
}
wait_for() { # wait_for SECONDS CMD...
  local t=$1 i=0; shift
  while ! "$@"; do i=$((i + 1)); ((i >= t * 5)) && return 1; sleep 0.2; done
}
spawn() { # spawn NAME CMD... in a new session, so `down` finds its whole tree
  local name=$1; shift
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  record "$name" $!
}
is_up() { alive "$(pid_of kwin)" && alive "$(pid_of session-bus)"; }

up() {
  if is_up; then print_env; return 0; fi
  [[ -f $PIDS ]] && down >/dev/null 2>&1
  [[ -x /usr/bin/kwin_wayland ]] || die "kwin_wayland missing: run '$0 install'"
  mkdir -p "$RUN" "$HOMED" "$LOGS" "$DIR/bin"; chmod 700 "$RUN" "$DIR"; : >"$PIDS"
  daemon_env
  cp /usr/bin/kwin_wayland "$DIR/bin/kwin_wayland"
  dbus-daemon --session --fork --address="unix:path=$RUN/bus" --print-pid=3 3>"$DIR/.bus.pid" \
    >"$LOGS/session-bus.log" 2>&1 || die "session bus failed"
  record session-bus "$(cat "$DIR/.bus.pid")"
  # What the bus's activated services (the portals, AT-SPI) see.
  dbus-update-activation-environment XDG_CURRENT_DESKTOP=KDE XDG_SESSION_TYPE=wayland \
    WAYLAND_DISPLAY=$WD XDG_RUNTIME_DIR="$RUN" HOME="$HOMED" XDG_CONFIG_HOME="$XDG_CONFIG_HOME" \
    XDG_DATA_HOME="$XDG_DATA_HOME" XDG_CACHE_HOME="$XDG_CACHE_HOME" >/dev/null 2>&1 ||
    die "dbus-update-activation-environment failed"
  mkdir -p /tmp/.X11-unix && chmod 1777 /tmp/.X11-unix
  local w=${SIZE%x*} h=${SIZE#*x}
  spawn kwin "$DIR/bin/kwin_wayland" --virtual --width "$w" --height "$h" --socket "$WD" \
    --no-lockscreen --xwayland
  wait_for 30 has_name org.kde.KWin || { tail -20 "$LOGS/kwin.log" >&2; die "kwin_wayland not up"; }
  wait_for 10 test -S "$RUN/$WD" || die "no Wayland socket $RUN/$WD"
  # The portal front end (activated on first call; started here so its failure shows now).
  wait_for 20 gdbus call --session --dest org.freedesktop.portal.Desktop \
    --object-path /org/freedesktop/portal/desktop --method org.freedesktop.DBus.Properties.Get \
    org.freedesktop.portal.RemoteDesktop version >/dev/null 2>&1 ||
    die "the desktop portal has no RemoteDesktop interface (xdg-desktop-portal-kde?)"
  say "up: kwin_wayland $SIZE on $WD, portal and AT-SPI on $RUN/bus"
  print_env
}

app_cmd() { # the command line of an application KEY
  case $1 in
    testapp) echo "env GDK_BACKEND=wayland $PY $ROOT/tests/apps/lsm_testapp.py" ;;
    xterm) echo "xterm -geometry 80x24 -fa Monospace -fs 11" ;;
    *) return 1 ;;
  esac
}

ensure_app() {
  local key=$1 pid cmd
  pid=$(pid_of "app-$key")
  if alive "$pid"; then echo "$pid"; return 0; fi
  cmd=$(app_cmd "$key") || die "unknown application $key"
  daemon_env
  export WAYLAND_DISPLAY=$WD
  if [[ $key == xterm ]]; then # an X11 client: the display of kwin's own Xwayland
    DISPLAY=$(ps -o args= --ppid "$(pid_of kwin)" | awk '$1 ~ /Xwayland$/ { print $2; exit }')
    [[ $DISPLAY == :* ]] || die "kwin runs no Xwayland"
    export DISPLAY
  fi
  # shellcheck disable=SC2086
  spawn "app-$key" $cmd
  pid=$(pid_of "app-$key")
  echo "$pid"
}

stop_app() {
  local pid i; pid=$(pid_of "app-$1")
  alive "$pid" || return 0
  kill "$pid" 2>/dev/null
  for ((i = 0; i < 50; i++)); do alive "$pid" || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  return 0
}

# KWin answers ScreenShot2 calls of a process whose executable is the Exec of an installed
# .desktop file with X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2, found through
# KSycoca: the file goes where a user's would, and the database is rebuilt as Plasma's kded would.
GRANT=dev.lsm.lsm.desktop
grant_screenshots() {
  local exe; exe=$(readlink -f "$1") || die "no executable $1"
  [[ -x $exe ]] || die "not executable: $exe"
  daemon_env
  mkdir -p "$XDG_DATA_HOME/applications"
  printf '%s\n' '[Desktop Entry]' 'Type=Application' 'Name=lsm' 'NoDisplay=true' "Exec=$exe" \
    'X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2' >"$XDG_DATA_HOME/applications/$GRANT"
  kbuildsycoca5 >>"$LOGS/kbuildsycoca.log" 2>&1 || die "kbuildsycoca5 failed"
  say "ScreenShot2 granted to $exe"
}
revoke_screenshots() {
  daemon_env
  rm -f "$XDG_DATA_HOME/applications/$GRANT"
  kbuildsycoca5 >>"$LOGS/kbuildsycoca.log" 2>&1 || die "kbuildsycoca5 failed"
}

our_tree() { # every process in one of our sessions, and their descendants
  [[ -f $PIDS ]] || return 0
  local sids; sids=$(awk '{print $2}' "$PIDS" | tr '\n' ' ')
  ps -eo pid=,ppid=,sid= | awk -v s="$sids" '
    BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) S[a[i]] = 1 }
    { P[$1] = $2; if ($3 in S) K[$1] = 1 }
    END { do { c = 0; for (p in P) if (!(p in K) && (P[p] in K)) { K[p] = 1; c = 1 } } while (c)
          for (p in K) print p }'
}

bus_children() { # processes the bus activated (portals, AT-SPI): their environment names our bus
  local p
  for p in $(pgrep -f 'xdg-desktop-portal|at-spi|kded5|kglobalaccel' 2>/dev/null); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "DBUS_SESSION_BUS_ADDRESS=unix:path=$RUN/bus" && echo "$p"
  done
}

down() {
  local pids left="" p
  pids="$(our_tree | tr '\n' ' ') $(bus_children | tr '\n' ' ')"
  if [[ -n ${pids// } ]]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null
    for _ in $(seq 1 25); do
      left=""; for p in $pids; do alive "$p" && left="$left $p"; done
      [[ -z $left ]] && break; sleep 0.2
    done
    # shellcheck disable=SC2086
    [[ -n $left ]] && kill -9 $left 2>/dev/null
  fi
  rm -rf "$RUN" "$HOMED" "$PIDS" "$DIR/.bus.pid"
  say "down"
}

status() {
  [[ -f $PIDS ]] || { echo "not running"; return 1; }
  local t; t=$(our_tree | tr '\n' ','); t=${t%,}
  [[ -n $t ]] && ps -o pid,ppid,sid,etime,cmd -p "$t"
  is_up && echo "state: up" || { echo "state: down"; return 1; }
}

case "${1:-up}" in
  install) install_packages "${PACKAGES[@]}" || die "apt-get install failed" ;;
  up) up ;;
  env) is_up && print_env ;;
  down) down ;;
  status) status ;;
  ensure-app) ensure_app "${2:?KEY}" ;;
  stop-app) stop_app "${2:?KEY}" ;;
  grant-screenshots) grant_screenshots "${2:?EXE}" ;;
  revoke-screenshots) revoke_screenshots ;;
  *) echo "usage: $0 install|up|env|status|down|ensure-app KEY|stop-app KEY|grant-screenshots EXE|revoke-screenshots" >&2
     exit 2 ;;
esac
