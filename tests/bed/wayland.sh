#!/usr/bin/env bash
# tests/bed/wayland.sh - a headless GNOME Shell Wayland session for the Wayland suite: private
# system and session buses, PipeWire + WirePlumber, gnome-shell --headless WITHOUT unsafe mode,
# lsm's Shell extension installed the way users install it (`lsm setup gnome`, before the shell
# starts), AT-SPI, XWayland, and the test applications on demand. Runs as root without systemd.
#
#   tests/bed/wayland.sh install           # Debian packages (apt only if missing)
#   eval "$(tests/bed/wayland.sh up)"      # start (idempotent) and print the session env
#   tests/bed/wayland.sh env | status | down
#   tests/bed/wayland.sh ensure-app KEY    # start an application (gtk3-widget-factory, testapp,
#                                          # gtk4-widget-factory, qt5-calculator, xterm) once
#   tests/bed/wayland.sh stop-app KEY
#
# Settings: LSM_WLBED_DIR (default /tmp/lsm-wlbed), LSM_WLBED_SIZE (1280x800),
# LSM_WLBED_SCALE (monitor scale, 1), LSM_WLBED_RATE (refresh rate, 30), LSM_WLBED_EXTENSION=0 (start without the extension),
# LSM_BIN (the lsm binary that runs `lsm setup gnome`; default target/release/lsm).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${LSM_WLBED_DIR:-/tmp/lsm-wlbed}
RUN=$DIR/run
HOMED=$DIR/home
LOGS=$DIR/logs
PIDS=$DIR/pids
SIZE=${LSM_WLBED_SIZE:-1280x800}
SCALE=${LSM_WLBED_SCALE:-1}
# The shell renders in software here and repaints the whole stage on every frame: at 60 Hz one
# animated widget (a spinner, a pulsing progress bar) keeps it at a full core of a 2-core machine,
# which every test and benchmark then competes with. 30 Hz halves that; window streams are capped
# at 10 frames/s anyway.
RATE=${LSM_WLBED_RATE:-30}
WD=wayland-lsm
EXTENSION=${LSM_WLBED_EXTENSION:-1}
LSM=${LSM_BIN:-$ROOT/target/release/lsm}
PY=/usr/bin/python3   # Debian's python: python3-gi for the test app and the Escape helper
PACKAGES=(gnome-shell xwayland pipewire wireplumber at-spi2-core dbus-daemon dbus-bin
          libglib2.0-bin python3-gi gir1.2-gtk-3.0 gir1.2-atspi-2.0 python3-pyatspi
          gtk-3-examples gtk-4-examples qtbase5-examples qtwayland5 xterm gnome-calculator
          gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
          xdg-desktop-portal xdg-desktop-portal-gnome)  # the portal path (tests/wayland/test_portal_fallback.py)

say() { printf '[wlbed %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=tests/bed/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

print_env() {
  cat <<EOF
export XDG_RUNTIME_DIR=$RUN
export WAYLAND_DISPLAY=$WD
export DBUS_SESSION_BUS_ADDRESS=unix:path=$RUN/bus
export XDG_SESSION_TYPE=wayland
export XDG_CURRENT_DESKTOP=GNOME
export LSM_WLBED_DIR=$DIR
export LSM_WLBED_HOME=$HOMED
export GSETTINGS_BACKEND=dconf
unset DISPLAY AT_SPI_BUS_ADDRESS GDK_BACKEND QT_QPA_PLATFORM GSK_RENDERER LSM_TESTAPP_LOG XAUTHORITY
EOF
}

daemon_env() {
  export XDG_RUNTIME_DIR=$RUN HOME=$HOMED
  export XDG_CONFIG_HOME=$HOMED/.config XDG_DATA_HOME=$HOMED/.local/share XDG_CACHE_HOME=$HOMED/.cache
  export XDG_SESSION_TYPE=wayland XDG_CURRENT_DESKTOP=GNOME WAYLAND_DISPLAY=$WD
  export DBUS_SESSION_BUS_ADDRESS=unix:path=$RUN/bus
  export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$RUN/system_bus_socket
  export GSETTINGS_BACKEND=dconf NO_AT_BRIDGE=0
  # Nothing of an X11 session this shell may have inherited (the X11 bed's env in run-all):
  # its GDK_BACKEND=x11 would keep GTK from starting here.
  unset DISPLAY AT_SPI_BUS_ADDRESS GDK_BACKEND QT_QPA_PLATFORM GSK_RENDERER LSM_TESTAPP_LOG XAUTHORITY
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
is_up() { alive "$(pid_of gnome-shell)" && alive "$(pid_of session-bus)"; }

do_install() { install_packages "${PACKAGES[@]}" || die "apt-get install failed"; }

# Presses Escape through mutter's own remote-desktop API: gnome-shell opens the overview at
# start, which would cover the applications. The first keysym of a session is dropped: Shift first.
leave_overview() {
  "$PY" - <<'EOF' >/dev/null 2>&1
from gi.repository import Gio, GLib
import time
b = Gio.bus_get_sync(Gio.BusType.SESSION, None); N = 'org.gnome.Mutter.RemoteDesktop'
c = lambda p, i, m, a=None: b.call_sync(N, p, i, m, a, None, 0, 5000, None).unpack()
s, = c('/org/gnome/Mutter/RemoteDesktop', N, 'CreateSession')
c(s, N + '.Session', 'Start'); time.sleep(0.3)
for k in (0xffe1, 0xff1b):
    for d in (True, False):
        c(s, N + '.Session', 'NotifyKeyboardKeysym', GLib.Variant('(ub)', (k, d)))
time.sleep(0.2); c(s, N + '.Session', 'Stop')
EOF
}

up() {
  if is_up; then print_env; return 0; fi
  [[ -f $PIDS ]] && down >/dev/null 2>&1
  command -v gnome-shell >/dev/null || die "gnome-shell missing: run '$0 install'"
  mkdir -p "$RUN" "$HOMED" "$LOGS"; chmod 700 "$RUN" "$DIR"; : >"$PIDS"
  daemon_env
  # gnome-shell aborts without a system bus (it asks logind); an empty private one is enough.
  cat >"$DIR/system-bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=$RUN/system_bus_socket</listen>
<auth>EXTERNAL</auth><policy context="default"><allow send_destination="*" eavesdrop="true"/>
<allow eavesdrop="true"/><allow own="*"/><allow user="*"/></policy></busconfig>
EOF
  dbus-daemon --config-file="$DIR/system-bus.conf" --fork --print-pid=3 3>"$DIR/.sysbus.pid" \
    >"$LOGS/system-bus.log" 2>&1 || die "system bus failed"
  record system-bus "$(cat "$DIR/.sysbus.pid")"
  dbus-daemon --session --fork --address="unix:path=$RUN/bus" --print-pid=3 3>"$DIR/.bus.pid" \
    >"$LOGS/session-bus.log" 2>&1 || die "session bus failed"
  record session-bus "$(cat "$DIR/.bus.pid")"
  # No animations, blanking, lock screen or notification banners; accessibility on.
  gsettings set org.gnome.desktop.interface enable-animations false
  gsettings set org.gnome.desktop.interface toolkit-accessibility true
  gsettings set org.gnome.desktop.session idle-delay 0
  gsettings set org.gnome.desktop.screensaver lock-enabled false
  gsettings set org.gnome.desktop.notifications show-banners false
  if [[ $EXTENSION == 1 ]]; then
    [[ -x $LSM ]] || die "no lsm binary at $LSM (build it, or set LSM_BIN)"
    "$LSM" setup gnome >"$LOGS/lsm-setup.log" 2>&1 || { cat "$LOGS/lsm-setup.log" >&2; die "lsm setup gnome failed"; }
    sed 's/^/  lsm setup gnome: /' "$LOGS/lsm-setup.log" >&2
  fi
  spawn pipewire pipewire
  wait_for 10 test -S "$RUN/pipewire-0" || die "pipewire did not start"
  spawn wireplumber wireplumber
  # XWayland's sockets: mutter refuses a /tmp/.X11-unix that is not world-writable and sticky.
  mkdir -p /tmp/.X11-unix && chmod 1777 /tmp/.X11-unix
  local args=(--headless --wayland --wayland-display="$WD" --virtual-monitor "$SIZE@$RATE")
  # (llvmpipe renders with every core. Limited to one thread, the walk line gained and the
  # screenshot line lost: the window stream then competes with rendering in that thread.)
  spawn gnome-shell gnome-shell "${args[@]}"
  local i
  for ((i = 0; i < 300; i++)); do
    has_name org.gnome.Shell.Screenshot && break
    alive "$(pid_of gnome-shell)" || break
    sleep 0.2
  done
  has_name org.gnome.Shell.Screenshot || { tail -20 "$LOGS/gnome-shell.log" >&2; die "gnome-shell not up"; }
  wait_for 20 has_name org.gnome.Mutter.RemoteDesktop || die "no org.gnome.Mutter.RemoteDesktop"
  leave_overview
  if [[ $SCALE != 1 ]]; then # the virtual monitor at another scale (mutter's own display config)
    gdbus call --session --dest org.gnome.Mutter.DisplayConfig --object-path /org/gnome/Mutter/DisplayConfig \
      --method org.gnome.Mutter.DisplayConfig.ApplyMonitorsConfig 2 1 \
      "[(0, 0, $SCALE.0, 0, true, [('Meta-0', '$SIZE@$RATE.000', @a{sv} {})])]" "@a{sv} {}" >/dev/null ||
      die "could not set the monitor's scale to $SCALE"
  fi
  say "up: $SIZE@$RATE Hz at scale $SCALE on $WD (logs in $LOGS)"
  print_env
}

# ------------------------------------------------------------------ applications
app_cmd() { # the command line of an application KEY
  case $1 in
    testapp) echo "$PY $ROOT/tests/apps/lsm_testapp.py" ;;
    gtk3-widget-factory) echo "gtk3-widget-factory" ;;
    gtk4-widget-factory) echo "env GSK_RENDERER=cairo gtk4-widget-factory" ;;
    gnome-calculator) echo "env GSK_RENDERER=cairo gnome-calculator" ;;
    qt5-calculator) echo "env QT_QPA_PLATFORM=wayland QT_ACCESSIBILITY=1 QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 /usr/lib/x86_64-linux-gnu/qt5/examples/widgets/widgets/calculator/calculator" ;;
    xterm) echo "env GDK_BACKEND=x11 xterm -geometry 80x24 -fa Monospace -fs 11" ;;
    *) return 1 ;;
  esac
}

ensure_app() {
  local key=$1 pid cmd
  pid=$(pid_of "app-$key")
  if alive "$pid"; then echo "$pid"; return 0; fi
  cmd=$(app_cmd "$key") || die "unknown application $key"
  daemon_env
  if [[ $key == xterm ]]; then # an X11 client: XWayland's display, as mutter announced it
    DISPLAY=$(grep -o 'Using public X11 display :[0-9]*' "$LOGS/gnome-shell.log" | grep -o ':[0-9]*$' | tail -1)
    [[ -n $DISPLAY ]] || die "mutter announced no XWayland display"
    XAUTHORITY=$(ls "$RUN"/.mutter-Xwaylandauth.* 2>/dev/null | head -1)
    export DISPLAY XAUTHORITY
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

our_tree() { # every process in one of our sessions, and their descendants
  [[ -f $PIDS ]] || return 0
  local sids; sids=$(awk '{print $2}' "$PIDS" | tr '\n' ' ')
  ps -eo pid=,ppid=,sid= | awk -v s="$sids" '
    BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) S[a[i]] = 1 }
    { P[$1] = $2; if ($3 in S) K[$1] = 1 }
    END { do { c = 0; for (p in P) if (!(p in K) && (P[p] in K)) { K[p] = 1; c = 1 } } while (c)
          for (p in K) print p }'
}

down() {
  local pids left="" p
  pids=$(our_tree | tr '\n' ' ')
  if [[ -n ${pids// } ]]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null
    for _ in $(seq 1 25); do
      left=""; for p in $pids; do alive "$p" && [[ $(ps -o stat= -p "$p" | cut -c1) != Z ]] && left="$left $p"; done
      [[ -z $left ]] && break; sleep 0.2
    done
    # shellcheck disable=SC2086
    [[ -n $left ]] && kill -9 $left 2>/dev/null
  fi
  # XWayland's sockets of this bed's displays (mutter would move on to the next number)
  local d
  for d in $(grep -o 'Using public X11 display :[0-9]*, (using :[0-9]*' "$LOGS/gnome-shell.log" 2>/dev/null | grep -o ':[0-9]*' | tr -d :); do
    rm -f "/tmp/.X11-unix/X$d" "/tmp/.X$d-lock"
  done
  rm -rf "$RUN" "$HOMED" "$PIDS" "$DIR/.bus.pid" "$DIR/.sysbus.pid"
  say "down"
}

status() {
  [[ -f $PIDS ]] || { echo "not running"; return 1; }
  local t; t=$(our_tree | tr '\n' ','); t=${t%,}
  [[ -n $t ]] && ps -o pid,ppid,sid,etime,cmd -p "$t"
  is_up && echo "state: up" || { echo "state: down"; return 1; }
}

case "${1:-up}" in
  install) do_install ;;
  up) up ;;
  env) is_up && print_env ;;
  down) down ;;
  status) status ;;
  ensure-app) ensure_app "${2:?KEY}" ;;
  stop-app) stop_app "${2:?KEY}" ;;
  *) echo "usage: $0 install|up|env|status|down|ensure-app KEY|stop-app KEY" >&2; exit 2 ;;
esac
