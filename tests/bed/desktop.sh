#!/usr/bin/env bash
# tests/bed/desktop.sh - the project's headless Linux test desktop (X11 + AT-SPI).
#
# Starts, idempotently (Debian 12, as root, no systemd needed):
#   Xvfb -> a private D-Bus session bus (no service directories) -> the AT-SPI bus
#   (at-spi-bus-launcher) + at-spi2-registryd -> a window manager (xfwm4, compositor off)
#   -> the apps in $LSM_BED_APPS,
# waits until every accessible app is registered on the AT-SPI registry and every app has a
# mapped window, puts the windows at fixed, non-overlapping places, then prints `export` lines.
#
# Usage:
#   eval "$(tests/bed/desktop.sh up)"     # start (or reuse) the bed; stdout = export lines only
#   tests/bed/desktop.sh env              # print the export lines of the running bed
#   tests/bed/desktop.sh status           # components and AT-SPI-registered apps
#   tests/bed/desktop.sh down             # stop what this script started, nothing else
#   tests/bed/desktop.sh install          # install the Debian packages (apt only if missing)
#   tests/bed/desktop.sh restart-app KEY  # kill app KEY, start it again, wait, same place; prints pid
#   tests/bed/desktop.sh pid KEY          # pid of a running app
#   tests/bed/desktop.sh ensure-app KEY [ARG...]  # start KEY unless it runs (ARGs: its command
#                                         # line, e.g. a file or URL), wait, place; prints pid
#   tests/bed/desktop.sh stop-app KEY     # stop app KEY (and what it started)
#
# Settings (environment):
#   LSM_BED_DISPLAY     X display (default :99)
#   LSM_BED_DIR         state, logs, runtime dir, HOME of the xterm (default /tmp/lsm-bed)
#   LSM_BED_APPS        app keys (default "testapp qt5-calculator xterm"); all keys:
#                       testapp gtk3-widget-factory gtk4-widget-factory qt5-calculator xterm biglist
#                       and, heavier, usually started on demand by the tests (`ensure-app`):
#                       writer (LibreOffice Writer, gtk3 VCL plugin), firefox (Firefox ESR, own
#                       profile; ARG: URLs, default tests/apps/web/form.html), gnome-calculator,
#                       mousepad, thunar, qttree (tests/apps/lsm_qttree.py, PyQt5)
#   LSM_BED_WM          xfwm4 | none (default xfwm4)
#   LSM_BED_COMPOSITOR  1 = run xfwm4's compositor (default 0: off)
#   LSM_BED_SCREEN      Xvfb screen (default 1280x800x24)
#   LSM_BED_TIMEOUT     seconds to wait for each readiness step (default 60)
#   LSM_BED_NO_INSTALL  1 = never call apt-get from `up`
#
# Traps this handles (found on this kind of machine):
# - Xvfb must run with -noreset: Qt finds the AT-SPI bus through the AT_SPI_BUS property of the
#   root window, which a server reset (last client gone) would delete.
# - GTK4 registers on AT-SPI on a 2-core machine only with GSK_RENDERER=cairo.
# - The session bus has no service directories, so nothing (portals, dconf, gvfs) is activated.
#
# Ownership: every process is started with setsid and LSM_BED_TOKEN=<random> in its environment.
# `down` stops (a) the pids recorded in $LSM_BED_DIR/state/*.pid (pid + start time checked),
# (b) their descendants and (c) processes carrying this bed's token (D-Bus-activated helpers).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DISP="${LSM_BED_DISPLAY:-:99}"
DNUM="${DISP#:}"; DNUM="${DNUM%%.*}"
DIR="${LSM_BED_DIR:-/tmp/lsm-bed}"
STATE="$DIR/state"
RUN="$DIR/run"
LOGS="$DIR/log"
BEDHOME="$DIR/home"
SCREEN_GEOM="${LSM_BED_SCREEN:-1280x800x24}"
WM="${LSM_BED_WM:-xfwm4}"
COMPOSITOR="${LSM_BED_COMPOSITOR:-0}"
TIMEOUT="${LSM_BED_TIMEOUT:-60}"
APPS="${LSM_BED_APPS:-gtk4-widget-factory testapp qt5-calculator xterm}"
TESTAPP="$REPO/tests/apps/lsm_testapp.py"
QT_EXAMPLES=/usr/lib/x86_64-linux-gnu/qt5/examples/widgets
QT_CALC=$QT_EXAMPLES/widgets/calculator/calculator

PACKAGES=(xvfb xfonts-base fonts-dejavu-core fonts-noto-cjk x11-utils x11-apps xdotool imagemagick
          dbus-daemon dbus-bin libglib2.0-bin at-spi2-core procps
          python3-pyatspi python3-gi gir1.2-gtk-3.0 gir1.2-atspi-2.0
          gtk-3-examples gtk-4-examples qtbase5-examples xterm xfwm4 xfconf
          strace util-linux   # strace, unshare: the headless test
          iproute2            # ip netns / veth: the remote-machine test
          chromium            # the web UI tests (tests/webui, playwright-core)
          # the real applications of the e2e suite (started on demand: `ensure-app KEY`)
          libreoffice-writer libreoffice-calc libreoffice-gtk3 firefox-esr gnome-calculator mousepad thunar
          python3-pyqt5 qttools5-dev-tools wmctrl
          gpicview libgail-common libatk-adaptor    # a GTK 2 application (gail)
          # bench/honesty.py's applications (Wine, for its notepad, comes with tests/bed/wine.sh)
          galculator zenity gnome-text-editor featherpad kcalc lxtask speedcrunch gnome-font-viewer)

# Window places (top-left of the window-manager frame; KEY:X:Y or KEY:X:Y:WIDTH:HEIGHT for apps
# that start maximized), listed bottom -> top of the stacking order. The test app gets the
# keyboard focus after placing.
LAYOUT="gtk4-widget-factory:0:0 gtk3-widget-factory:0:0 testapp:20:20 qt5-calculator:700:20 xterm:700:420 biglist:840:240
        writer:40:30:1000:700 calc:40:30:1000:700 firefox:60:40:1000:680 gnome-calculator:660:60 mousepad:80:60 thunar:100:80
        qttree:760:300"

say() { printf '[bed %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
# shellcheck source=tests/bed/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

# ------------------------------------------------------------------ process bookkeeping
start_time() { # start time (field 22 of /proc/PID/stat) of a live, non-zombie process
  local s
  read -r s 2>/dev/null <"/proc/$1/stat" || return 1
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  [[ $1 != [ZX] ]] || return 1
  echo "${20}"
}
alive() { # alive NAME: prints the recorded pid if that very process still runs
  local f="$STATE/$1.pid" pid st
  [[ -f $f ]] || return 1
  read -r pid st <"$f" || return 1
  [[ -n ${pid:-} && "$(start_time "$pid" 2>/dev/null)" == "$st" ]] || return 1
  echo "$pid"
}
remember() { echo "$2 $(start_time "$2")" >"$STATE/$1.pid"; }

spawn() { # spawn NAME CMD...: detached (own session), output to $LOGS/NAME.log, pid recorded
  local name=$1 pid; shift
  setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  pid=$!
  sleep 0.05
  if ! start_time "$pid" >/dev/null 2>&1; then
    tail -n 20 "$LOGS/$name.log" >&2 || true
    die "$name exited right after start"
  fi
  remember "$name" "$pid"
  say "started $name (pid $pid)"
}

wait_until() { # wait_until WHAT CMD...: poll CMD every 0.1 s until it succeeds or TIMEOUT
  local what=$1 t0=$SECONDS; shift
  until "$@" >/dev/null 2>&1; do
    (( SECONDS - t0 < TIMEOUT )) || die "gave up after ${TIMEOUT}s waiting for $what"
    sleep 0.1
  done
}

child_env() { # the environment every component and app gets
  export DISPLAY="$DISP" XDG_RUNTIME_DIR="$RUN" \
    XDG_CONFIG_HOME="$DIR/config" XDG_CACHE_HOME="$DIR/cache" XDG_DATA_HOME="$DIR/data" \
    GSETTINGS_BACKEND=keyfile GDK_BACKEND=x11 QT_QPA_PLATFORM=xcb GSK_RENDERER=cairo \
    GNOME_ACCESSIBILITY=1 QT_ACCESSIBILITY=1 \
    LSM_TESTAPP_LOG="$LOGS/testapp-events.jsonl"
  unset WAYLAND_DISPLAY GTK_MODULES SESSION_MANAGER QT_LINUX_ACCESSIBILITY_ALWAYS_ON NO_AT_BRIDGE
  LSM_BED_TOKEN=$(<"$STATE/token"); export LSM_BED_TOKEN
  if [[ -s $STATE/session_bus ]]; then DBUS_SESSION_BUS_ADDRESS=$(<"$STATE/session_bus"); export DBUS_SESSION_BUS_ADDRESS; fi
  if [[ -s $STATE/a11y_bus ]]; then AT_SPI_BUS_ADDRESS=$(<"$STATE/a11y_bus"); export AT_SPI_BUS_ADDRESS; fi
  return 0
}

a11y_call() { gdbus call --address "$AT_SPI_BUS_ADDRESS" "$@"; }

registered_pids() { # pids of the applications that are children of the AT-SPI registry root
  local out name
  out=$(a11y_call -d org.a11y.atspi.Registry -o /org/a11y/atspi/accessible/root \
        -m org.a11y.atspi.Accessible.GetChildren 2>/dev/null) || return 0
  for name in $(grep -o "':1\.[0-9]*'" <<<"$out" | tr -d "'"); do
    out=$(a11y_call -d org.freedesktop.DBus -o /org/freedesktop/DBus \
          -m org.freedesktop.DBus.GetConnectionUnixProcessID "$name" 2>/dev/null) || continue
    [[ $out =~ ([0-9]+), ]] && echo "${BASH_REMATCH[1]}"
  done
  return 0
}
is_registered() { local pids; pids=$(registered_pids); grep -qx "$1" <<<"$pids"; }
app_window() { # app_window PID CLASS: id of the app's mapped top-level window
  local w
  w=$(xdotool search --onlyvisible --pid "$1" 2>/dev/null | tail -n1) || true
  [[ -z $w && -n ${2:-} ]] && { w=$(xdotool search --onlyvisible --classname "$2" 2>/dev/null | tail -n1) || true; }
  [[ -n $w ]] && echo "$w"
}
has_window() { app_window "$@" >/dev/null; }
wm_running() { [[ $(xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null) == *'window id'* ]]; }
session_has() { gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
                -m org.freedesktop.DBus.NameHasOwner "$1" 2>/dev/null | grep -q true; }
a11y_has() { a11y_call -d org.freedesktop.DBus -o /org/freedesktop/DBus \
             -m org.freedesktop.DBus.NameHasOwner "$1" 2>/dev/null | grep -q true; }

# ------------------------------------------------------------------ install
do_install() { install_packages "${PACKAGES[@]}"; }

# ------------------------------------------------------------------ components
start_xvfb() {
  alive xvfb >/dev/null && return 0
  local lock="/tmp/.X${DNUM}-lock" owner
  if [[ -f $lock ]]; then
    owner=$(tr -dc 0-9 <"$lock")
    if [[ -n $owner ]] && start_time "$owner" >/dev/null 2>&1; then
      die "display $DISP is in use by pid $owner, which this bed did not start (pick another LSM_BED_DISPLAY)"
    fi
    # A killed server's lock (its pid may linger as a zombie, which Xvfb takes for alive).
    rm -f "$lock" "/tmp/.X11-unix/X$DNUM"
  fi
  spawn xvfb Xvfb "$DISP" -screen 0 "$SCREEN_GEOM" -nolisten tcp -noreset -dpi 96
  wait_until "Xvfb on $DISP" xdpyinfo -display "$DISP"
}

start_session_bus() {
  alive session-bus >/dev/null && [[ -s $STATE/session_bus ]] && return 0
  cat >"$STATE/session-bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:path=$RUN/bus</listen>
  <auth>EXTERNAL</auth>
  <!-- no <servicedir>: nothing gets auto-activated on this bus -->
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
  rm -f "$RUN/bus" "$STATE/session_bus" "$STATE/session_bus.out"
  # shellcheck disable=SC2016  # $1/$2 are expanded by the inner bash
  spawn session-bus bash -c 'exec dbus-daemon --nofork --config-file="$1" --print-address=3 3>"$2"' \
    _ "$STATE/session-bus.conf" "$STATE/session_bus.out"
  wait_until "session bus address" test -s "$STATE/session_bus.out"
  head -n1 "$STATE/session_bus.out" >"$STATE/session_bus"
  DBUS_SESSION_BUS_ADDRESS=$(<"$STATE/session_bus"); export DBUS_SESSION_BUS_ADDRESS
}

start_a11y_bus() {
  alive a11y-bus >/dev/null && [[ -s $STATE/a11y_bus ]] && return 0
  # keyfile GSettings backend in the bed's own XDG_CONFIG_HOME: nothing shared with the host
  gsettings set org.gnome.desktop.interface toolkit-accessibility true
  spawn a11y-bus /usr/libexec/at-spi-bus-launcher --launch-immediately
  wait_until "org.a11y.Bus" session_has org.a11y.Bus
  local addr
  wait_until "the AT-SPI bus address" gdbus call --session -d org.a11y.Bus -o /org/a11y/bus -m org.a11y.Bus.GetAddress
  addr=$(gdbus call --session -d org.a11y.Bus -o /org/a11y/bus -m org.a11y.Bus.GetAddress)
  addr=${addr#*\'}; addr=${addr%\'*}
  [[ $addr == unix:* ]] || die "unexpected AT-SPI bus address: $addr"
  echo "$addr" >"$STATE/a11y_bus"
  AT_SPI_BUS_ADDRESS=$addr; export AT_SPI_BUS_ADDRESS
  local prop  # the switches Qt (ScreenReaderEnabled) and others read
  for prop in IsEnabled ScreenReaderEnabled; do
    gdbus call --session -d org.a11y.Bus -o /org/a11y/bus -m org.freedesktop.DBus.Properties.Set \
      org.a11y.Status "$prop" '<true>' >/dev/null
  done
  # Qt reads the bus address from the AT_SPI_BUS root window property; the launcher sets it,
  # but make sure (Xvfb -noreset keeps it for the life of the server).
  if [[ $(xprop -root AT_SPI_BUS 2>/dev/null) != *"$addr"* ]]; then
    say "AT_SPI_BUS root property missing: setting it"
    xprop -root -f AT_SPI_BUS 8s -set AT_SPI_BUS "$addr"
  fi
}

start_registryd() {
  alive registryd >/dev/null && return 0
  a11y_has org.a11y.atspi.Registry && return 0  # activated on our bus already (found by token at down)
  spawn registryd /usr/libexec/at-spi2-registryd
  wait_until "org.a11y.atspi.Registry" a11y_has org.a11y.atspi.Registry
}

start_wm() {
  case $WM in
    none) return 0 ;;
    xfwm4) ;;
    *) die "unknown LSM_BED_WM=$WM (xfwm4 | none)" ;;
  esac
  alive wm >/dev/null && return 0
  wm_running && die "another window manager already runs on $DISP"
  if ! alive xfconfd >/dev/null; then
    spawn xfconfd /usr/lib/x86_64-linux-gnu/xfce4/xfconf/xfconfd
    wait_until "xfconfd" session_has org.xfce.Xfconf
  fi
  local comp=off
  [[ $COMPOSITOR == 1 ]] && comp=on
  NO_AT_BRIDGE=1 spawn wm xfwm4 --compositor=$comp --vblank=off --sm-client-disable
  wait_until "the window manager" wm_running
}

# app_spec KEY -> "a11y|plain WM_CLASS-instance"; app_run KEY -> execs the app (in a subshell)
app_spec() {
  case $1 in
    testapp)             echo "a11y lsm_testapp.py" ;;
    biglist)             echo "a11y lsm_biglist.py" ;;
    gtk3-widget-factory) echo "a11y gtk3-widget-factory" ;;
    gtk4-widget-factory) echo "a11y gtk4-widget-factory" ;;
    qt5-calculator)      echo "a11y calculator" ;;
    xterm)               echo "plain xterm" ;;
    writer)              echo "a11y libreoffice soffice.bin" ;;
    firefox)             echo "a11y Navigator" ;;
    gnome-calculator)    echo "a11y gnome-calculator" ;;
    mousepad)            echo "a11y mousepad" ;;
    thunar)              echo "a11y thunar" ;;
    qttree)              echo "a11y lsm_qttree.py" ;;
    qt5-dialogs)         echo "a11y standarddialogs" ;;
    qt5-wizard)          echo "a11y licensewizard" ;;
    gpicview)            echo "a11y gpicview" ;;
    calc)                echo "a11y libreoffice soffice.bin" ;;
    *) die "unknown app key '$1' (testapp gtk3-widget-factory gtk4-widget-factory qt5-calculator xterm biglist writer firefox gnome-calculator mousepad thunar qttree qt5-dialogs qt5-wizard gpicview calc)" ;;
  esac
}
start_app() { # start_app KEY [ARG...]
  local key=$1; shift
  case $key in
    testapp)             spawn "app-$key" /usr/bin/python3 "$TESTAPP" ;;
    biglist)             spawn "app-$key" /usr/bin/python3 "$REPO/tests/apps/lsm_biglist.py" ;;
    gtk3-widget-factory) spawn "app-$key" gtk3-widget-factory ;;
    gtk4-widget-factory) GSK_RENDERER=cairo spawn "app-$key" gtk4-widget-factory ;;
    qt5-calculator)      spawn "app-$key" "$QT_CALC" ;;
    xterm)
      mkdir -p "$BEDHOME"
      (cd "$BEDHOME" && HOME="$BEDHOME" LANG=C.UTF-8 LC_ALL=C.UTF-8 PS1='$ ' \
        spawn "app-$key" xterm -T xterm -geometry 80x24 -xrm 'XTerm*allowTitleOps: false' \
          -e bash --noprofile --norc) ;;
    writer)
      lo_profile
      SAL_USE_VCLPLUGIN=gtk3 spawn "app-$key" soffice --writer --norestore --nologo \
        "-env:UserInstallation=file://$DIR/lo" "$@" ;;
    firefox)
      ff_profile
      (($#)) || set -- "file://$REPO/tests/apps/web/form.html"
      MOZ_ENABLE_WAYLAND=0 spawn "app-$key" firefox-esr --no-remote --new-instance \
        --profile "$DIR/firefox" "$@" ;;
    gnome-calculator)    spawn "app-$key" gnome-calculator "$@" ;;
    mousepad)            spawn "app-$key" mousepad --disable-server "$@" ;;
    thunar)              spawn "app-$key" thunar "$@" ;;
    qttree)              LSM_QTTREE_LOG="$LOGS/qttree-events.jsonl" \
                           spawn "app-$key" /usr/bin/python3 "$REPO/tests/apps/lsm_qttree.py" "$@" ;;
    # Qt's own example programs (qtbase5-examples): real Qt widgets, dialogs and a wizard.
    qt5-dialogs)         spawn "app-$key" "$QT_EXAMPLES/dialogs/standarddialogs/standarddialogs" ;;
    qt5-wizard)          spawn "app-$key" "$QT_EXAMPLES/dialogs/licensewizard/licensewizard" ;;
    # GTK 2 loads its accessibility (gail, atk-bridge) only as modules named so.
    gpicview)            GTK_MODULES=gail:atk-bridge spawn "app-$key" gpicview "$@" ;;
    calc)
      lo_profile
      SAL_USE_VCLPLUGIN=gtk3 spawn "app-$key" soffice --calc --norestore --nologo \
        "-env:UserInstallation=file://$DIR/lo" "$@" ;;
  esac
}

lo_profile() { # a LibreOffice user profile without first-start dialogs (tip of the day, formats)
  local reg="$DIR/lo/user/registrymodifications.xcu"
  [[ -f $reg ]] && return 0
  mkdir -p "$(dirname "$reg")"
  cp "$REPO/tests/apps/lo-registrymodifications.xcu" "$reg"
}

ff_profile() { # a Firefox profile without first-run pages, updates or network chatter
  [[ -f $DIR/firefox/user.js ]] && return 0
  mkdir -p "$DIR/firefox"
  cp "$REPO/tests/apps/firefox-user.js" "$DIR/firefox/user.js"
}

registered_child() { # registered_child PID COMM: a descendant of PID named COMM, on AT-SPI
  local p pids
  pids=$(registered_pids)
  for p in $(descendants_of "$1"); do
    [[ $(cat "/proc/$p/comm" 2>/dev/null) == "$2" ]] && grep -qx "$p" <<<"$pids" && { echo "$p"; return 0; }
  done
  return 1
}

wait_app() { # wait_app KEY: mapped window (+ AT-SPI registration for accessible apps)
  local key=$1 pid kind cls proc child
  pid=$(alive "app-$key") || die "app $key is not running (see $LOGS/app-$key.log)"
  read -r kind cls proc <<<"$(app_spec "$key")"
  if [[ -n ${proc:-} && $(cat "/proc/$pid/comm" 2>/dev/null) != "$proc" ]]; then
    # Started through a launcher (LibreOffice's oosplash, which restarts the app once on a new
    # profile): the app is the child that registers on AT-SPI; record that one.
    wait_until "an AT-SPI-registered $proc under $key (pid $pid)" registered_child "$pid" "$proc"
    child=$(registered_child "$pid" "$proc")
    remember "app-$key" "$child"
    pid=$child
  fi
  wait_until "a mapped window of $key (pid $pid)" has_window "$pid" "$cls"
  [[ $kind == a11y ]] && wait_until "AT-SPI registration of $key (pid $pid)" is_registered "$pid"
  say "ready: $key (pid $pid)"
}

place_apps() { # place_apps KEY...: move the windows of these apps to their LAYOUT places
  [[ $WM != none ]] || return 0
  local ent key x y width height pid kind cls w ext moved=0
  for ent in $LAYOUT; do
    IFS=: read -r key x y width height <<<"$ent"
    [[ " $* " == *" $key "* ]] || continue
    pid=$(alive "app-$key") || continue
    read -r kind cls _ <<<"$(app_spec "$key")"
    w=$(app_window "$pid" "$cls") || continue
    if [[ -n ${width:-} ]]; then # un-maximize, then the given size (xdotool cannot do the first)
      wmctrl -i -r "$w" -b remove,maximized_vert,maximized_horz >/dev/null 2>&1 || true
      wmctrl -i -r "$w" -e "0,$x,$y,$width,$height" >/dev/null 2>&1 || true
      sleep 0.2
    fi
    # LAYOUT gives the frame's top-left. The WM puts the frame there for the usual NorthWest
    # gravity; a client with Static gravity (Qt) names its client area instead.
    if [[ $(xprop -id "$w" WM_NORMAL_HINTS 2>/dev/null) == *"gravity: Static"* ]]; then
      ext=$(xprop -id "$w" _NET_FRAME_EXTENTS 2>/dev/null) || ext=""
      if [[ $ext =~ =\ *([0-9]+),\ *([0-9]+),\ *([0-9]+),\ *([0-9]+) ]]; then
        x=$((x + BASH_REMATCH[1])); y=$((y + BASH_REMATCH[3]))
      fi
    fi
    # --sync waits for the move; it never returns when the window is already there: bound it
    timeout 3 xdotool windowmove --sync "$w" "$x" "$y" >/dev/null 2>&1 || true
    xdotool windowraise "$w" >/dev/null 2>&1 || true
    moved=1
  done
  ((moved)) && sleep 0.2
  # give the test app the focus, so typing without a click lands in it
  if [[ " $* " == *" testapp "* ]] && pid=$(alive app-testapp) && w=$(app_window "$pid" lsm_testapp.py); then
    timeout 3 xdotool windowactivate --sync "$w" >/dev/null 2>&1 || true
  fi
  return 0
}

start_apps() {
  local key started=()
  for key in $APPS; do
    app_spec "$key" >/dev/null
    alive "app-$key" >/dev/null && continue
    start_app "$key"
    started+=("$key")
  done
  for key in $APPS; do wait_app "$key"; done
  ((${#started[@]})) && place_apps "${started[@]}"
  return 0
}

print_env() {
  cat <<EOF
export DISPLAY='$DISP'
export DBUS_SESSION_BUS_ADDRESS='$(<"$STATE/session_bus")'
export AT_SPI_BUS_ADDRESS='$(<"$STATE/a11y_bus")'
export XDG_RUNTIME_DIR='$RUN'
export XDG_CONFIG_HOME='$DIR/config' XDG_CACHE_HOME='$DIR/cache' XDG_DATA_HOME='$DIR/data'
export GSETTINGS_BACKEND=keyfile GDK_BACKEND=x11 QT_QPA_PLATFORM=xcb GSK_RENDERER=cairo
export GNOME_ACCESSIBILITY=1 QT_ACCESSIBILITY=1
export LSM_BED_DISPLAY='$DISP' LSM_BED_DIR='$DIR' LSM_BED_HOME='$BEDHOME'
export LSM_TESTAPP_LOG='$LOGS/testapp-events.jsonl'
unset WAYLAND_DISPLAY NO_AT_BRIDGE GTK_MODULES
EOF
}

# ------------------------------------------------------------------ stopping
descendants_of() { # all descendants of the given pids
  local -A kids=()
  local f p pp st queue=("$@") out=()
  for f in /proc/[0-9]*/stat; do
    p=${f#/proc/}; p=${p%/stat}
    read -r st 2>/dev/null <"$f" || continue
    st=${st##*) }; read -r _ pp _ <<<"$st"
    kids[$pp]+="$p "
  done
  while ((${#queue[@]})); do
    p=${queue[0]}; queue=("${queue[@]:1}")
    for pp in ${kids[$p]:-}; do out+=("$pp"); queue+=("$pp"); done
  done
  echo "${out[@]:-}"
}
with_token() { # pids whose environment holds LSM_BED_TOKEN=<token>
  local f p
  # shellcheck disable=SC2013  # /proc paths have no spaces
  for f in $(grep -lszxF "LSM_BED_TOKEN=$1" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%/environ}
    [[ $p == "$$" || $p == "$BASHPID" ]] || echo "$p"
  done
  return 0
}
stop_pids() { # TERM, wait up to 5 s, then KILL
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  local p left=() i
  for i in $(seq 50); do
    left=()
    for p in "$@"; do start_time "$p" >/dev/null 2>&1 && left+=("$p"); done
    ((${#left[@]})) || return 0
    ((i < 50)) && sleep 0.1
  done
  say "SIGKILL: ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
}
protected_pids() { # this shell and its ancestors (e.g. `down` typed in the bed's own xterm)
  local a=$$ st
  while [[ $a -gt 1 ]]; do
    echo "$a"
    read -r st 2>/dev/null <"/proc/$a/stat" || break
    st=${st##*) }; read -r _ a _ <<<"$st"
  done
}
do_down() {
  [[ -d $STATE ]] || { say "nothing to stop"; return 0; }
  local f name pid xvfb="" tok="" pids=() more=() keep p out=()
  [[ -f $STATE/token ]] && tok=$(<"$STATE/token")
  for f in "$STATE"/*.pid; do
    [[ -e $f ]] || continue
    name=$(basename "$f" .pid)
    pid=$(alive "$name") || continue
    if [[ $name == xvfb ]]; then xvfb=$pid; else pids+=("$pid"); fi
  done
  if ((${#pids[@]})); then read -ra more <<<"$(descendants_of "${pids[@]}")"; pids+=("${more[@]}"); fi
  if [[ -n $tok ]]; then mapfile -t more < <(with_token "$tok"); pids+=("${more[@]}"); fi
  keep=" $(protected_pids | tr '\n' ' ') ${xvfb} "
  for p in "${pids[@]}"; do
    [[ -n $p && $keep != *" $p "* ]] || continue
    keep+="$p "; out+=("$p")
  done
  ((${#out[@]})) && say "stopping ${#out[@]} processes"
  stop_pids "${out[@]}"
  [[ -n $xvfb ]] && stop_pids "$xvfb"
  rm -f "$STATE"/*.pid "$STATE"/session_bus* "$STATE"/a11y_bus "$STATE"/token "$RUN/bus"
  rm -rf "$RUN/at-spi"
  say "down"
}

do_restart_app() { # restart-app KEY
  local key=${1:-} pid victims=()
  [[ -n $key ]] || die "usage: $0 restart-app KEY"
  app_spec "$key" >/dev/null
  if ! [[ -s $STATE/a11y_bus ]] || ! alive xvfb >/dev/null; then die "bed is not up ($DIR)"; fi
  child_env
  if pid=$(alive "app-$key"); then
    read -ra victims <<<"$pid $(descendants_of "$pid")"
    stop_pids "${victims[@]}"
  fi
  rm -f "$STATE/app-$key.pid"
  start_app "$key"
  wait_app "$key"
  place_apps "$key"
  alive "app-$key"
}

do_ensure_app() { # ensure-app KEY [ARG...]
  local key=${1:-}
  [[ -n $key ]] || die "usage: $0 ensure-app KEY [ARG...]"
  shift
  app_spec "$key" >/dev/null
  if ! [[ -s $STATE/a11y_bus ]] || ! alive xvfb >/dev/null; then die "bed is not up ($DIR)"; fi
  child_env
  if ! alive "app-$key" >/dev/null; then
    start_app "$key" "$@"
    wait_app "$key"
    place_apps "$key"
  fi
  alive "app-$key"
}

do_stop_app() { # stop-app KEY
  local key=${1:-} pid victims=()
  [[ -n $key ]] || die "usage: $0 stop-app KEY"
  app_spec "$key" >/dev/null
  if pid=$(alive "app-$key"); then
    read -ra victims <<<"$pid $(descendants_of "$pid")"
    stop_pids "${victims[@]}"
  fi
  rm -f "$STATE/app-$key.pid"
}

do_status() {
  local f name pid
  for f in "$STATE"/*.pid; do
    [[ -e $f ]] || continue
    name=$(basename "$f" .pid)
    if pid=$(alive "$name"); then echo "up    $name pid=$pid"; else echo "dead  $name"; fi
  done
  if [[ -s $STATE/a11y_bus && -f $STATE/token ]]; then
    child_env
    echo "AT-SPI registry (pid command):"
    for pid in $(registered_pids); do echo "  $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"; done
  fi
}

# ------------------------------------------------------------------ main
cmd=${1:-up}
mkdir -p "$STATE" "$RUN" "$LOGS" "$BEDHOME" "$DIR/config" "$DIR/cache" "$DIR/data"
chmod 700 "$RUN"
case $cmd in
  up)
    t0=$EPOCHREALTIME
    [[ ${LSM_BED_NO_INSTALL:-0} == 1 ]] || do_install
    # A dead core piece means stale addresses everywhere: restart the whole bed.
    if [[ -f $STATE/token ]] && ! { alive xvfb && alive session-bus && alive a11y-bus; } >/dev/null; then
      say "found a partly dead bed: restarting it"
      do_down
    fi
    [[ -f $STATE/token ]] || head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$STATE/token"
    child_env
    start_xvfb
    start_session_bus
    start_a11y_bus
    start_registryd
    start_wm
    start_apps
    ms=$(( (${EPOCHREALTIME/./} - ${t0/./}) / 1000 ))
    say "bed ready in $((ms / 1000)).$(printf %03d $((ms % 1000)))s: display $DISP, wm $WM, compositor $COMPOSITOR, apps: $APPS"
    print_env ;;
  env)         [[ -s $STATE/a11y_bus && -s $STATE/session_bus ]] || die "bed is not up ($DIR)"; print_env ;;
  status)      do_status ;;
  down)        do_down ;;
  install)     do_install ;;
  restart-app) shift; do_restart_app "$@" ;;
  ensure-app)  shift; do_ensure_app "$@" ;;
  stop-app)    shift; do_stop_app "$@" ;;
  pid)         [[ -n ${2:-} ]] || die "usage: $0 pid KEY"; alive "app-$2" || die "app $2 is not running" ;;
  *) echo "usage: $0 up|down|env|status|install|restart-app KEY|ensure-app KEY [ARG...]|stop-app KEY|pid KEY" >&2; exit 2 ;;
esac
